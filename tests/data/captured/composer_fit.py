"""A tiny Composer run on the CPU, to capture what its console logger prints: 2 epochs of 8
batches, an evaluation every epoch, a checkpoint every epoch; batch 11 is 0.5 s slower.

    python composer_fit.py CKPT_DIR           max_duration 2ep
    python composer_fit.py CKPT_DIR batches   max_duration 16ba, with SpeedMonitor(window_size=1)
    python composer_fit.py CKPT_DIR bar       max_duration 2ep, Composer's defaults: its progress bar, no console logger
    python composer_fit.py CKPT_DIR bar 16ba  the same bar, max_duration 16ba: one bar over the run's batches
"""
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from composer import Trainer
from composer.callbacks import SpeedMonitor
from composer.models import ComposerClassifier

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
        self.calls = 0

    def forward(self, x):
        if self.training:
            self.calls += 1
            time.sleep(0.55 if self.calls == 11 else 0.05)
        return self.body(x)


x, y = torch.randn(64, 16), torch.randint(0, 4, (64,))
train = DataLoader(TensorDataset(x, y), batch_size=8)
evaluate = DataLoader(TensorDataset(x[:16], y[:16]), batch_size=8)
batches = sys.argv[2:] in (["batches"], ["bar", "16ba"])
bar = sys.argv[2:3] == ["bar"]
trainer = Trainer(model=ComposerClassifier(Net(), num_classes=4), train_dataloader=train,
                  eval_dataloader=evaluate, max_duration="16ba" if batches else "2ep", eval_interval="1ep",
                  callbacks=[SpeedMonitor(window_size=1)] if batches and not bar else [],
                  progress_bar=bar, log_to_console=not bar, console_log_interval="1ba",
                  save_folder=sys.argv[1], save_interval="1ep", save_overwrite=True,
                  device="cpu", seed=0)
trainer.fit()
