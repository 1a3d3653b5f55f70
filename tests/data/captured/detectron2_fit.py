"""Tiny CPU training run of Detectron2's own DefaultTrainer, to capture real console output.

What:
  * builds a tiny synthetic COCO-format dataset (8 train / 4 val images, 160x128 RGB,
    1-3 filled rectangles each, one category "box"), registered with
    detectron2.data.datasets.register_coco_instances;
  * trains Faster R-CNN R-50-FPN (model_zoo config COCO-Detection/faster_rcnn_R_50_FPN_1x.yaml)
    from random init (MODEL.WEIGHTS "") on the CPU for 30 iterations, batch 2,
    INPUT.MIN_SIZE_TRAIN (128,), MAX_SIZE_TRAIN 160; MODEL.RESNETS.NORM "BN" and per-parameter
    gradient clipping (norm 1.0), because random init with the stock FrozenBN / no clipping
    diverges to Inf/NaN within a few iterations;
  * SOLVER.CHECKPOINT_PERIOD 10, TEST.EVAL_PERIOD 15 with a COCOEvaluator on the val split;
  * printing: the stock DefaultTrainer prints every 20 iterations (PeriodicWriter period=20,
    CommonMetricPrinter window_size=20).  Here build_writers() is overridden to use
    CommonMetricPrinter(max_iter, window_size=1) (+ the default JSONWriter and
    TensorboardXWriter), and build_hooks() sets the PeriodicWriter's period to 1, so one
    d2.utils.events line is printed per iteration;
  * exactly one slow iteration: the training mapper sleeps 0.5 s once, on the first
    image it maps while the trainer is at iteration SLOW_ITER (0-based, the number printed
    as "iter: N"), with DATALOADER.NUM_WORKERS 0 so the sleep lands in data_time.

How:
  python detectron2_fit.py > OUT.log 2>&1
  (run with the venv's python; working files go to /tmp/cap-d2/run)
"""
import json
import os
import random
import time

import numpy as np
from PIL import Image, ImageDraw

import detectron2
from detectron2 import model_zoo
from detectron2.config import get_cfg
from detectron2.data import DatasetMapper, build_detection_train_loader
from detectron2.data.datasets import register_coco_instances
from detectron2.engine import DefaultTrainer, default_argument_parser, default_setup, hooks
from detectron2.evaluation import COCOEvaluator
from detectron2.utils.events import (
    CommonMetricPrinter,
    JSONWriter,
    TensorboardXWriter,
    get_event_storage,
)

WORK = "/tmp/cap-d2/run"
DATA = os.path.join(WORK, "data")
SLOW_ITER = 7  # 0-based trainer iteration whose data loading is made 0.5 s slower
SLOW_SECONDS = 0.5


def make_split(name, n, seed):
    """Write n random images and a COCO json for them; return (json_path, image_root)."""
    rng = random.Random(seed)
    img_dir = os.path.join(DATA, name)
    os.makedirs(img_dir, exist_ok=True)
    images, anns = [], []
    ann_id = 1
    for i in range(n):
        w, h = 160, 128
        arr = np.random.RandomState(seed * 100 + i).randint(0, 80, size=(h, w, 3), dtype=np.uint8)
        img = Image.fromarray(arr)
        draw = ImageDraw.Draw(img)
        for _ in range(rng.randint(1, 3)):
            bw, bh = rng.randint(20, 60), rng.randint(20, 50)
            x0, y0 = rng.randint(0, w - bw - 1), rng.randint(0, h - bh - 1)
            color = tuple(rng.randint(150, 255) for _ in range(3))
            draw.rectangle([x0, y0, x0 + bw, y0 + bh], fill=color)
            anns.append(
                {
                    "id": ann_id,
                    "image_id": i + 1,
                    "category_id": 1,
                    "bbox": [x0, y0, bw, bh],
                    "area": float(bw * bh),
                    "iscrowd": 0,
                }
            )
            ann_id += 1
        fname = f"{name}_{i:03d}.jpg"
        img.save(os.path.join(img_dir, fname), quality=95)
        images.append({"id": i + 1, "file_name": fname, "width": w, "height": h})
    coco = {
        "images": images,
        "annotations": anns,
        "categories": [{"id": 1, "name": "box"}],
    }
    json_path = os.path.join(DATA, f"{name}.json")
    with open(json_path, "w") as f:
        json.dump(coco, f)
    return json_path, img_dir


class SlowOnceMapper(DatasetMapper):
    """Default training DatasetMapper that sleeps SLOW_SECONDS once, at trainer iter SLOW_ITER."""

    _done = False

    def __call__(self, dataset_dict):
        if not SlowOnceMapper._done and get_event_storage().iter == SLOW_ITER:
            SlowOnceMapper._done = True
            time.sleep(SLOW_SECONDS)
        return super().__call__(dataset_dict)


class Trainer(DefaultTrainer):
    @classmethod
    def build_evaluator(cls, cfg, dataset_name, output_folder=None):
        output_folder = output_folder or os.path.join(cfg.OUTPUT_DIR, "inference")
        return COCOEvaluator(dataset_name, output_dir=output_folder)

    @classmethod
    def build_train_loader(cls, cfg):
        return build_detection_train_loader(cfg, mapper=SlowOnceMapper(cfg, is_train=True))

    def build_writers(self):
        # default_writers() with the printer's smoothing window reduced from 20 to 1
        return [
            CommonMetricPrinter(self.max_iter, window_size=1),
            JSONWriter(os.path.join(self.cfg.OUTPUT_DIR, "metrics.json")),
            TensorboardXWriter(self.cfg.OUTPUT_DIR),
        ]

    def build_hooks(self):
        ret = super().build_hooks()
        for h in ret:
            if isinstance(h, hooks.PeriodicWriter):
                h._period = 1  # stock value is 20
        return ret


def main():
    train_json, train_root = make_split("tiny_train", 8, seed=1)
    val_json, val_root = make_split("tiny_val", 4, seed=2)
    register_coco_instances("tiny_coco_train", {}, train_json, train_root)
    register_coco_instances("tiny_coco_val", {}, val_json, val_root)

    cfg = get_cfg()
    cfg.merge_from_file(model_zoo.get_config_file("COCO-Detection/faster_rcnn_R_50_FPN_1x.yaml"))
    cfg.MODEL.WEIGHTS = ""
    cfg.MODEL.DEVICE = "cpu"
    cfg.MODEL.RESNETS.NORM = "BN"  # random init + FrozenBN diverges (NaN) within 3 iters
    cfg.MODEL.ROI_HEADS.NUM_CLASSES = 1
    cfg.MODEL.ROI_HEADS.BATCH_SIZE_PER_IMAGE = 64
    cfg.DATASETS.TRAIN = ("tiny_coco_train",)
    cfg.DATASETS.TEST = ("tiny_coco_val",)
    cfg.DATALOADER.NUM_WORKERS = 0
    cfg.INPUT.MIN_SIZE_TRAIN = (128,)
    cfg.INPUT.MAX_SIZE_TRAIN = 160
    cfg.INPUT.MIN_SIZE_TEST = 128
    cfg.INPUT.MAX_SIZE_TEST = 160
    cfg.SOLVER.IMS_PER_BATCH = 2
    cfg.SOLVER.BASE_LR = 0.0025
    # random init diverges (Inf/NaN by iter ~9) without clipping; per-parameter L2 clip:
    cfg.SOLVER.CLIP_GRADIENTS.ENABLED = True
    cfg.SOLVER.CLIP_GRADIENTS.CLIP_TYPE = "norm"
    cfg.SOLVER.CLIP_GRADIENTS.CLIP_VALUE = 1.0
    cfg.SOLVER.MAX_ITER = 30
    cfg.SOLVER.STEPS = (20,)
    cfg.SOLVER.WARMUP_ITERS = 10
    cfg.SOLVER.CHECKPOINT_PERIOD = 10
    cfg.TEST.EVAL_PERIOD = 15
    cfg.SEED = 42
    cfg.OUTPUT_DIR = os.path.join(WORK, "output")
    cfg.freeze()

    args = default_argument_parser().parse_args([])
    default_setup(cfg, args)  # as tools/train_net.py: logger setup, env info, config dump

    trainer = Trainer(cfg)
    trainer.resume_or_load(resume=False)
    return trainer.train()


if __name__ == "__main__":
    main()
