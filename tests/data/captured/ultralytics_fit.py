"""A tiny Ultralytics YOLO training run on the CPU, to capture what its trainer prints.

It writes a synthetic 2-class detection dataset (8 train + 4 val 128x128 PNGs, one
coloured rectangle each, YOLO-format labels, data.yaml) under ./data in the current
folder, then trains YOLOv8n FROM SCRATCH from its model yaml (no .pt, no downloads)
for 5 epochs at imgsz=128, batch=4, workers=0, device='cpu', val=True, plots=False,
amp=False. Batch 1 of epoch 2 (both 1-based) is made deliberately slow: an
on_train_batch_end callback sleeps 0.5 s there once.

Network is avoided with YOLO_OFFLINE=1, settings sync=False and plots=False; the
Ultralytics settings file goes to ./config (YOLO_CONFIG_DIR), runs to ./runs.

Usage (from an empty folder, with a venv that has ultralytics + torch + torchvision):
    python ultralytics_fit.py > LOG 2>&1                       # a pipe (batch job)
    script -qfec "COLUMNS=120 python ultralytics_fit.py" LOG   # a pseudo-terminal
"""

import os
import shutil
import time
from pathlib import Path

HERE = Path.cwd()
os.environ.setdefault("YOLO_OFFLINE", "1")
os.environ.setdefault("YOLO_CONFIG_DIR", str(HERE / "config"))

import numpy as np  # noqa: E402
from PIL import Image, ImageDraw  # noqa: E402

SLOW_EPOCH, SLOW_BATCH, SLOW_SECONDS = 2, 1, 0.5  # 1-based epoch and batch


def make_dataset(root: Path, n_train: int = 8, n_val: int = 4, size: int = 128) -> Path:
    """Write images/{train,val}/*.png, labels/{train,val}/*.txt and data.yaml; return the yaml."""
    shutil.rmtree(root, ignore_errors=True)
    rng = np.random.default_rng(0)
    colours = [(220, 40, 40), (40, 80, 220)]  # class 0 red, class 1 blue
    for split, n in (("train", n_train), ("val", n_val)):
        (root / "images" / split).mkdir(parents=True)
        (root / "labels" / split).mkdir(parents=True)
        for k in range(n):
            cls = k % 2
            img = Image.new("RGB", (size, size), tuple(int(v) for v in rng.integers(150, 256, 3)))
            w, h = (int(v) for v in rng.integers(size // 4, size // 2, 2))
            x0, y0 = int(rng.integers(0, size - w)), int(rng.integers(0, size - h))
            ImageDraw.Draw(img).rectangle([x0, y0, x0 + w - 1, y0 + h - 1], fill=colours[cls])
            img.save(root / "images" / split / f"{split}_{k}.png")
            xc, yc = (x0 + w / 2) / size, (y0 + h / 2) / size
            (root / "labels" / split / f"{split}_{k}.txt").write_text(
                f"{cls} {xc:.6f} {yc:.6f} {w / size:.6f} {h / size:.6f}\n"
            )
    data = root / "data.yaml"
    data.write_text(f"path: {root}\ntrain: images/train\nval: images/val\nnames:\n  0: red\n  1: blue\n")
    return data


def main() -> None:
    from ultralytics import YOLO, settings

    settings.update({"sync": False})
    data = make_dataset(HERE / "data")

    state = {"batch": 0, "slowed": False}

    def on_train_epoch_start(trainer):
        state["batch"] = 0

    def on_train_batch_end(trainer):
        state["batch"] += 1
        if not state["slowed"] and trainer.epoch + 1 == SLOW_EPOCH and state["batch"] == SLOW_BATCH:
            state["slowed"] = True
            time.sleep(SLOW_SECONDS)

    model = YOLO("yolov8n.yaml")  # built from the yaml: random weights, nothing downloaded
    model.add_callback("on_train_epoch_start", on_train_epoch_start)
    model.add_callback("on_train_batch_end", on_train_batch_end)
    model.train(
        data=str(data),
        epochs=5,
        imgsz=128,
        batch=4,
        workers=0,
        device="cpu",
        val=True,
        plots=False,
        amp=False,
        project=str(HERE / "runs"),
        name="train",
        exist_ok=True,
        seed=0,
        deterministic=True,
    )


if __name__ == "__main__":
    main()
