"""Tiny PaddleDetection 2.6.0 training run on CPU, for capturing real console output.

What it runs:
  * writes a synthetic COCO-format dataset (8 train + 4 val random 160x160
    JPEGs, 1-3 boxes each, 2 categories) under /tmp/cap-paddle/data/det,
  * loads paddledet_ppyoloe_tiny.yml (PP-YOLOE-s architecture, random init,
    batch_size 2 -> 4 steps/epoch, 3 epochs, log_iter 1, snapshot_epoch 2,
    EMA on) the way tools/train.py does (load_config + check + Trainer),
  * trains with validate=True: checkpoint + COCO eval after epoch 1 (saves
    "1") and after the last epoch 2 (saves "model_final"); none after epoch 0.
  * The training dataset sleeps 0.5 s while loading the first sample of the
    5th training step overall (1-based), i.e. the log line
    "Epoch: [1] [0/4]" (ppdet prints epoch and step from 0). The first step
    of an epoch that follows no eval/checkpoint is chosen because ppdet's
    loader prefetches batches in a background thread (the next epoch's
    iterator starts as soon as the previous one ends), which hides a 0.5 s
    sleep in any later step (steps take ~0.3 s here).

Paddle version: run it under paddlepaddle 2.6.2 (venv-det26). Under 3.3.1
(venv-det) ppdet 2.6.0 dies in the first step (TypeError from type promotion,
int64 + int32 in ATSSAssigner); that run is kept as the *_FAILED.log.

How to run:
  cd /tmp/cap-paddle && venv-det26/bin/python paddledet_fit.py \
      > out/paddledet-2.6.0_paddle-2.6.2_trainer_cpu.log 2>&1
"""
import json
import os
import time

import numpy as np
from PIL import Image

import paddle
from ppdet.core.workspace import load_config, register, serializable
from ppdet.data.source.coco import COCODataSet
from ppdet.engine import Trainer
from ppdet.utils.check import check_config, check_version
from ppdet.utils.logger import setup_logger

logger = setup_logger('train')

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = "/tmp/cap-paddle/data/det"
BATCH = 2
SLOW_STEP = 5  # 1-based global training step whose batch is made slow


def make_data():
    """Write random JPEGs and COCO json files (train: 0-7, val: 8-11)."""
    rng = np.random.RandomState(0)
    os.makedirs(os.path.join(ROOT, "images"), exist_ok=True)
    os.makedirs(os.path.join(ROOT, "annotations"), exist_ok=True)
    cats = [{"id": 1, "name": "square"}, {"id": 2, "name": "blob"}]
    splits = {"train": range(0, 8), "val": range(8, 12)}
    ann_id = 1
    for split, ids in splits.items():
        images, anns = [], []
        for i in ids:
            img = rng.randint(0, 256, (160, 160, 3), dtype=np.uint8)
            name = f"{i:06d}.jpg"
            Image.fromarray(img).save(os.path.join(ROOT, "images", name))
            images.append({"id": i, "file_name": name,
                           "width": 160, "height": 160})
            for _ in range(rng.randint(1, 4)):
                w, h = rng.randint(20, 70, 2)
                x, y = rng.randint(0, 160 - w), rng.randint(0, 160 - h)
                anns.append({"id": ann_id, "image_id": i,
                             "category_id": int(rng.randint(1, 3)),
                             "bbox": [int(x), int(y), int(w), int(h)],
                             "area": int(w * h), "iscrowd": 0})
                ann_id += 1
        with open(os.path.join(ROOT, "annotations", f"{split}.json"), "w") as f:
            json.dump({"images": images, "annotations": anns,
                       "categories": cats}, f)


@register
@serializable
class SlowOnceCOCODataSet(COCODataSet):
    """COCODataSet that sleeps 0.5 s once, on the first sample of SLOW_STEP.

    worker_num is 0, so __getitem__ calls are sequential; 0-based call
    number (SLOW_STEP - 1) * BATCH is the first sample of SLOW_STEP, whatever
    index the shuffled sampler asks for.
    """

    def __getitem__(self, idx):
        calls = getattr(self, "_calls", 0)
        if calls == (SLOW_STEP - 1) * BATCH:
            time.sleep(0.5)
        self._calls = calls + 1
        return super().__getitem__(idx)


def main():
    make_data()
    cfg = load_config(os.path.join(HERE, "paddledet_ppyoloe_tiny.yml"))
    check_config(cfg)
    check_version()
    paddle.set_device("cpu")
    paddle.seed(0)
    np.random.seed(0)

    trainer = Trainer(cfg, mode="train")  # no pretrain_weights: random init
    trainer.train(validate=True)


if __name__ == "__main__":
    main()
