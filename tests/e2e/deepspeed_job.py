"""A DeepSpeed job on the CPU (gloo) whose only per-step output is DeepSpeed's own
`wall_clock_breakdown`, which rank 0 alone prints, at the end of each step.  Each forward pass
takes STEP_S; rank SLOW_RANK's takes SLOW_S more at step SLOW_STEP, so that the other rank
waits that long in the gradient all-reduce.

Run: DS_ACCELERATOR=cpu torchrun --nproc-per-node 2 deepspeed_job.py
"""
import os
import time

import deepspeed
import torch
from torch import nn

STEPS, STEP_S, SLOW_S, SLOW_STEP, SLOW_RANK = 30, 0.25, 1.5, 20, 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 1))
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        time.sleep(STEP_S)
        if int(os.environ["RANK"]) == SLOW_RANK and self.calls == SLOW_STEP:
            time.sleep(SLOW_S)
        return self.net(x)


config = {"train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1,
          "steps_per_print": 10 ** 6, "wall_clock_breakdown": True,
          "optimizer": {"type": "Adam", "params": {"lr": 1e-3, "torch_adam": True}}}
deepspeed.init_distributed(dist_backend="gloo")
model = Model()
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
g = torch.Generator().manual_seed(engine.global_rank)
for _ in range(STEPS):
    x, y = torch.randn(8, 64, generator=g), torch.randn(8, 1, generator=g)
    engine.backward(nn.functional.mse_loss(engine(x), y))
    engine.step()
# gloo's threads must end before the interpreter does (otherwise `terminate called without an
# active exception`, now and then, at exit)
torch.distributed.barrier()
torch.distributed.destroy_process_group()
