#!/bin/bash
# Launch verl 0.9.1 SFT trainer (python -m verl.trainer.sft_trainer via torchrun) on CPU
# with a tiny local Qwen2 model (verl_tiny_model.py).
# Usage: verl_sft.sh NPROC [extra hydra overrides...]
#   PYTHONPATH=scripts/pyhooks: verl_slow_step.py (as sitecustomize.py: the slow step) + verl_cpu_platform.py (CPU platform plugin)
#   VERL_USE_EXTERNAL_MODULES / VERL_PLATFORM: verl's own hooks to load+select the CPU platform
#   VERL_ENGINE_DEVICE=cuda: pick the FSDP engine class (registered only for cuda/npu); it runs on 'cpu'
#   OMP_NUM_THREADS=1: avoids thread oversubscription on 2 cores (steps 0.1 s instead of ~2 s, noisy)
NPROC=${1:-1}; shift
cd /tmp/cap-verl
export PYTHONPATH=/tmp/cap-verl/scripts/pyhooks
export VERL_USE_EXTERNAL_MODULES=verl_cpu_platform VERL_PLATFORM=cpu VERL_ENGINE_DEVICE=cuda
export OMP_NUM_THREADS=1
exec /tmp/cap-verl/venv/bin/python -m torch.distributed.run --standalone --nnodes 1 --nproc-per-node "$NPROC" \
  -m verl.trainer.sft_trainer \
  data.train_files=/tmp/cap-verl/data/train.parquet \
  data.val_files=/tmp/cap-verl/data/val.parquet \
  data.train_batch_size=16 \
  data.micro_batch_size_per_gpu=4 \
  data.max_length=128 \
  data.num_workers=0 \
  model.path=/tmp/cap-verl/tiny-model \
  +model.override_config.attn_implementation=sdpa \
  engine.strategy=fsdp2 \
  engine.use_torch_compile=false \
  optim.lr=1e-3 \
  trainer.device=cpu \
  trainer.logger="['console']" \
  trainer.project_name=tiny-sft \
  trainer.experiment_name=cpu-run \
  trainer.total_epochs=1 \
  trainer.default_local_dir=/tmp/cap-verl/ckpt \
  trainer.resume_mode=disable \
  "$@"
