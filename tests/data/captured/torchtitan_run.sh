#!/usr/bin/env bash
# Capture real torchtitan 0.3.0 console output on CPU (llama3 debugmodel).
#
# Usage: torchtitan_run.sh NPROC [STYLE]   (NPROC 1 or 2; STYLE plain|runtrain)
#   plain    : torchrun --nproc-per-node N -m torchtitan.train ...  (all ranks, no prefix)
#   runtrain : launcher flags of torchtitan's run_train.sh
#              (--rdzv_backend c10d --rdzv_endpoint=localhost:0
#               --local-ranks-filter 0 --role rank --tee 3) -> "[rank0]:" prefixes
# Writes /tmp/cap-titan/out/torchtitan-0.3.0_llama3-debugmodel_${NPROC}rank_cpu[_runtrain].log
# (stdout+stderr of torchrun, unedited) and checkpoints under /tmp/cap-titan/dumps/.
# Runs in /tmp/cap-titan/run, where torchtitan_assets.py put the local
# tests/assets/{tokenizer,c4_test} that the debugmodel config points to.
#
# Environment:
#   PYTHONPATH=scripts/shim  -> torchtitan_cpu_shim.py, as sitecustomize.py: CPU device shim + slow step
#   TT_CPU_SHIM=1            -> device_type "cpu" (gloo), CPU memory stats, flex bwd guard lifted
#   TORCHDYNAMO_DISABLE=1    -> flex_attention runs eagerly (inductor CPU flex backward fails)
#   TT_SLOW_STEP=13          -> fetching the 13th training batch sleeps TT_SLOW_SECONDS (0.5 s)
set -u
NPROC=${1:-1}
STYLE=${2:-plain}
LAUNCH=(--nproc-per-node "$NPROC")
SUFFIX=""
if [ "$STYLE" = runtrain ]; then
  LAUNCH=(--nproc_per_node="$NPROC" --rdzv_backend c10d --rdzv_endpoint="localhost:0"
          --local-ranks-filter 0 --role rank --tee 3)
  SUFFIX="_runtrain"
fi
cd /tmp/cap-titan/run
rm -rf "/tmp/cap-titan/dumps/${NPROC}rank${SUFFIX}"
export PYTHONPATH=/tmp/cap-titan/scripts/shim TT_CPU_SHIM=1 TORCHDYNAMO_DISABLE=1 \
       TT_SLOW_STEP=13 TT_SLOW_SECONDS=0.5
/tmp/cap-titan/venv/bin/torchrun "${LAUNCH[@]}" -m torchtitan.train \
  --module llama3 --config llama3_debugmodel \
  --training.steps 20 --training.seq_len 256 --training.local_batch_size 4 \
  --metrics.log_freq 1 \
  --checkpoint.enable --checkpoint.interval 10 \
  --validator.enable --validator.freq 5 --validator.steps 10 \
  --validator.dataloader.dataset c4_test \
  --dump-folder "/tmp/cap-titan/dumps/${NPROC}rank${SUFFIX}" \
  > "/tmp/cap-titan/out/torchtitan-0.3.0_llama3-debugmodel_${NPROC}rank_cpu${SUFFIX}.log" 2>&1
echo "exit=$?"
