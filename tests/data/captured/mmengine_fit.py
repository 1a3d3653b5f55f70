"""A tiny MMEngine run on the CPU, to capture what its Runner's LoggerHook prints: 2 epochs of
8 iterations (by_epoch) or 16 iterations (by_iter), logged every iteration, an evaluation each
epoch (or every 8 iterations); iteration 11 sleeps 0.5 s more.

    python mmengine_fit.py WORK_DIR [iters]
"""
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from mmengine.evaluator import BaseMetric
from mmengine.model import BaseModel
from mmengine.runner import Runner


class Toy(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(16, generator=g), int(torch.randint(0, 4, (1,), generator=g))


class Net(BaseModel):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
        self.calls = 0

    def forward(self, x, y, mode="tensor"):
        out = self.body(x)
        if mode == "loss":
            self.calls += 1
            time.sleep(0.55 if self.calls == 11 else 0.05)
            return {"loss": nn.functional.cross_entropy(out, y)}
        if mode == "predict":
            return out.argmax(1), y
        return out


class Accuracy(BaseMetric):
    def process(self, data_batch, data_samples):
        pred, y = data_samples
        self.results.append(((pred == y).sum().item(), len(y)))

    def compute_metrics(self, results):
        return {"accuracy": 100 * sum(r[0] for r in results) / sum(r[1] for r in results)}


by_iter = sys.argv[2:] == ["iters"]
loader = dict(batch_size=8, dataset=Toy(), sampler=dict(type="DefaultSampler", shuffle=False),
              collate_fn=dict(type="default_collate"))
runner = Runner(
    model=Net(), work_dir=sys.argv[1], train_dataloader=loader,
    optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
    train_cfg=dict(by_epoch=False, max_iters=16, val_interval=8) if by_iter else dict(by_epoch=True, max_epochs=2, val_interval=1),
    val_dataloader=dict(loader, batch_size=16), val_cfg=dict(), val_evaluator=dict(type=Accuracy),
    default_hooks=dict(logger=dict(type="LoggerHook", interval=1),
                       checkpoint=dict(type="CheckpointHook", interval=8 if by_iter else 1, by_epoch=not by_iter)),
    log_processor=dict(by_epoch=not by_iter, window_size=1), randomness=dict(seed=0))
runner.train()
