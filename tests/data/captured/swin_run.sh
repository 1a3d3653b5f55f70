#!/bin/bash
# (scripts/sitecustomize_swin/sitecustomize.py is cuda_cpu_shim.py here)
# Run from /tmp/cap-vis/swin ; captures stdout+stderr unedited.
cd /tmp/cap-vis/swin
rm -rf /tmp/cap-vis/swin-output
export PATH=/tmp/cap-vis/venv-swin/bin:$PATH
export PYTHONPATH=/tmp/cap-vis/scripts/sitecustomize_swin
export SLOW_NTH_OPEN=22   # 22nd image load = 2nd sample of train iteration idx 5 of epoch 0 (batch 4, workers 0)
python -m torch.distributed.run --nproc_per_node 1 --master_port 29517 main.py --local_rank 0 \
  --cfg configs/swin_tiny_patch4_window7_224.yaml --data-path /tmp/cap-vis/data --batch-size 4 \
  --output /tmp/cap-vis/swin-output --disable_amp \
  --opts TRAIN.EPOCHS 2 TRAIN.WARMUP_EPOCHS 1 PRINT_FREQ 1 DATA.NUM_WORKERS 0 MODEL.NUM_CLASSES 2 \
  > /tmp/cap-vis/out/swin-transformer_main-py_tiny-imagefolder_cpu.log 2>&1
echo "exit=$?"
