#!/bin/bash
# How detectron2 0.5 was obtained/built for the CPU capture (commands as run; csrc files were
# transcribed by hand from the stored GitHub index of facebookresearch/detectron2, see report).
set -e
cd /tmp/cap-d2
python3.11 -m venv venv
echo /work/main/.venv/lib/python3.11/site-packages > venv/lib/python3.11/site-packages/base.pth   # torch 2.15.0+cu132
venv/bin/pip install wheel
venv/bin/pip download detectron2-cdo==0.5 --no-deps --no-build-isolation -d dl        # sdist, no csrc inside
venv/bin/pip download torchvision==0.29.2 --no-deps -d dl
venv/bin/pip install --no-deps dl/torchvision-0.29.2-py3-none-manylinux_2_28_x86_64.whl
venv/bin/pip install pillow fvcore iopath pycocotools omegaconf hydra-core yacs tabulate termcolor matplotlib cloudpickle tensorboard black
venv/bin/pip install pillow==9.5.0 iopath==0.1.9       # Image.LINEAR needed by d2 0.5; iopath pin from its requires
mkdir -p src && tar xzf dl/detectron2_cdo-0.5.tar.gz -C src
# ... add src/detectron2_cdo-0.5/detectron2/layers/csrc/* (from the index), then:
cd src/detectron2_cdo-0.5 && unset FORCE_CUDA && MAX_JOBS=2 ../../venv/bin/pip install -v --no-build-isolation --no-deps .
# sdist's setup.py globs configs/ at its root (absent), so the model-zoo yamls are not installed:
cp -r detectron2/model_zoo/configs /tmp/cap-d2/venv/lib/python3.11/site-packages/detectron2/model_zoo/
