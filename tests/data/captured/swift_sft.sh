#!/usr/bin/env bash
# Runs `swift sft` (ms-swift 4.6.0 CLI) on the CPU: tiny local Qwen2 (swift_tiny_model.py), local jsonl,
# LoRA, 20 steps, logging_steps=1, save_steps=8, eval_steps=10, 1/8 of the data held out for eval.
# Step 5 is slowed by 0.5 s by an external plugin callback (swift_slow_step.py).
# Usage:  swift_sft.sh OUT_LOG [extra swift args...]     e.g. swift_sft.sh out/x.log --disable_tqdm true
# stdout+stderr of the whole run go, unedited, to OUT_LOG (a file, i.e. not a TTY).
set -u
LOG=$1; shift
ROOT=/tmp/cap-swift
OUTDIR=$ROOT/runs/$(basename "$LOG" .log)
rm -rf "$OUTDIR"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 MODELSCOPE_OFFLINE=1
export CUDA_VISIBLE_DEVICES=""   # force CPU
export OMP_NUM_THREADS=1         # 1 torch thread: on this 2-core VM multi-threading made step times jitter by up to ~1 s
cd $ROOT
$ROOT/venv/bin/swift sft \
  --model $ROOT/tiny-model --model_type qwen2 --template qwen \
  --dataset $ROOT/data/train.jsonl --split_dataset_ratio 0.125 --dataset_num_proc 1 \
  --tuner_type lora --lora_rank 8 --lora_alpha 16 --target_modules all-linear \
  --torch_dtype float32 --max_length 128 \
  --max_steps 20 --per_device_train_batch_size 2 --per_device_eval_batch_size 2 \
  --gradient_accumulation_steps 1 --learning_rate 1e-3 --warmup_ratio 0.1 \
  --logging_steps 1 --save_steps 8 --eval_steps 10 --save_total_limit 5 \
  --dataloader_num_workers 0 --report_to none --seed 42 \
  --external_plugins $(dirname "$0")/swift_slow_step.py --callbacks slow_step \
  --output_dir "$OUTDIR" "$@" > "$LOG" 2>&1
echo "exit code: $?"
