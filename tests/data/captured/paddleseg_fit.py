"""Tiny PaddleSeg 2.8.0 training run on CPU, for capturing real console output.

What it runs:
  * writes a synthetic dataset (8 train + 4 unused val random 64x64 RGB PNGs with
    2-class masks, plus PaddleSeg-style "image label" file lists) under
    /tmp/cap-paddle/data/seg,
  * builds BiSeNetV2 (random init, num_classes=2) from paddleseg.models,
  * calls paddleseg.core.train() for 20 iters, batch_size=2 (4 iters/epoch),
    log_iters=1, save_interval=10 (checkpoint at iter 10 and at the final
    iter 20; no evaluation, see the comment in main()).
  * The training dataset sleeps 0.5 s while loading the first sample of
    training iteration 7 (1-based, as PaddleSeg counts iters), so that
    iteration's reader_cost shows it (only in part: paddle's DataLoader
    thread prefetches about 2 batches ahead, so ~0.34 s of the 0.5 s shows).

How to run:
  /tmp/cap-paddle/venv/bin/python paddleseg_fit.py \
      > /tmp/cap-paddle/out/paddleseg-2.8.0_paddle-3.3.1_core-train_cpu.log 2>&1
"""
import os
import time

import numpy as np
from PIL import Image

import paddle
import paddle.nn.functional as F
from paddleseg import transforms as T
from paddleseg.core import train
from paddleseg.datasets import Dataset
from paddleseg.models import BiSeNetV2
from paddleseg.utils import utils

ROOT = "/tmp/cap-paddle/data/seg"
OUT = "/tmp/cap-paddle/work/seg_output"
BATCH = 2
SLOW_ITER = 7  # 1-based training iteration whose batch is made slow


def make_data():
    """Write random images/masks and the two file lists."""
    rng = np.random.RandomState(0)
    os.makedirs(os.path.join(ROOT, "img"), exist_ok=True)
    os.makedirs(os.path.join(ROOT, "ann"), exist_ok=True)
    lists = {"train": [], "val": []}
    for i in range(12):
        img = rng.randint(0, 256, (64, 64, 3), dtype=np.uint8)
        # mask: a random rectangle of class 1 on background 0
        mask = np.zeros((64, 64), dtype=np.uint8)
        y, x = rng.randint(0, 32, 2)
        mask[y:y + 24, x:x + 24] = 1
        Image.fromarray(img).save(os.path.join(ROOT, "img", f"{i}.png"))
        Image.fromarray(mask).save(os.path.join(ROOT, "ann", f"{i}.png"))
        split = "train" if i < 8 else "val"
        lists[split].append(f"img/{i}.png ann/{i}.png")
    for split, lines in lists.items():
        with open(os.path.join(ROOT, f"{split}.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")


class SlowOnceDataset(Dataset):
    """PaddleSeg Dataset that sleeps once, on the first sample of SLOW_ITER.

    num_workers=0, so __getitem__ calls are sequential; call number
    (SLOW_ITER - 1) * BATCH (0-based) is the first sample of SLOW_ITER,
    whichever index the shuffled sampler asks for.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = 0

    def __getitem__(self, idx):
        if self.calls == (SLOW_ITER - 1) * BATCH:
            time.sleep(0.5)
        self.calls += 1
        return super().__getitem__(idx)


class PixelCE(paddle.nn.Layer):
    """Plain per-pixel cross entropy (ignore_index=255).

    Used instead of paddleseg.models.losses.CrossEntropyLoss / OHEM CE,
    which in paddleseg 2.8.0 raise a TypeError under paddle 3.x type
    promotion (float32 tensor combined with an int64 tensor).
    Returns shape [1], not a 0-D tensor: core.train indexes loss.numpy()[0].
    """

    def forward(self, logit, label):
        loss = F.cross_entropy(logit, label.astype("int64"), axis=1,
                               ignore_index=255)
        return loss.reshape([1])


def main():
    make_data()
    utils.set_seed(0)
    paddle.set_device("cpu")
    utils.show_env_info()

    train_ds = SlowOnceDataset(
        mode="train", dataset_root=ROOT, num_classes=2,
        train_path=os.path.join(ROOT, "train.txt"),
        transforms=[T.RandomHorizontalFlip(), T.Normalize()])
    # No val_dataset is passed to train(): paddleseg 2.8.0's evaluate() fails
    # under paddle 3.3.1 (paddle.concat of 0-D tensors in
    # utils/metrics.calculate_area), so this run trains + saves only.

    model = BiSeNetV2(num_classes=2)  # random init, no pretrained weights
    iters = 20
    lr = paddle.optimizer.lr.PolynomialDecay(0.01, decay_steps=iters, end_lr=0)
    opt = paddle.optimizer.Momentum(lr, momentum=0.9,
                                    parameters=model.parameters(),
                                    weight_decay=4e-5)
    # BiSeNetV2 returns 5 logits in train mode (main head + 4 aux heads).
    losses = {"types": [PixelCE()] * 5, "coef": [1] * 5}

    train(model, train_ds, val_dataset=None, optimizer=opt, save_dir=OUT,
          iters=iters, batch_size=BATCH, save_interval=10, log_iters=1,
          num_workers=0, losses=losses, keep_checkpoint_max=2)


if __name__ == "__main__":
    main()
