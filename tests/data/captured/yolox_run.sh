#!/bin/bash
# (scripts/yolox_tiny_coco_exp.py is yolox_exp.py here, scripts/sitecustomize_yolox/sitecustomize.py is yolox_cpu_shim.py with cuda_cpu_shim.py beside it)
# Run from /tmp/cap-vis/yolox-run (YOLOX writes ./YOLOX_outputs there); stdout+stderr captured unedited.
cd /tmp/cap-vis/yolox-run
rm -rf YOLOX_outputs
export PATH=/tmp/cap-vis/venv-yolox/bin:$PATH
export PYTHONPATH=/tmp/cap-vis/scripts/sitecustomize_yolox
export CUDA_VISIBLE_DEVICES=0     # yolox get_num_devices() counts this list (no nvidia-smi here)
export SLOW_NTH_IMREAD=17         # 17th cv2.imread call (mosaic: 4 reads/sample, batch 2 -> 8 reads/iter)
python -m yolox.tools.train -f /tmp/cap-vis/scripts/yolox_tiny_coco_exp.py -d 1 -b 2 \
  > /tmp/cap-vis/out/yolox-0.3.0_train-py_tiny-coco_cpu.log 2>&1
echo "exit=$?"
