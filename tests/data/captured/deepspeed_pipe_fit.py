"""A tiny DeepSpeed pipeline-parallel run on the CPU (gloo): two stages on two ranks, to capture
what `PipelineEngine.train_batch` prints (`steps: N loss: X iter time (s): T samples/sec: S`)."""
import os
import time

import torch
from torch import nn
import deepspeed
from deepspeed.pipe import PipelineModule

config = {
    "train_batch_size": 8,
    "train_micro_batch_size_per_gpu": 2,
    "steps_per_print": int(os.environ.get("STEPS_PER_PRINT", "1")),
    "optimizer": {"type": "Adam", "params": {"lr": 1e-3, "torch_adam": True}},
}
deepspeed.init_distributed(dist_backend="gloo")


class Slow(nn.Module):
    """Step 6's forward takes 0.5 s longer on the last stage."""
    calls = 0

    def forward(self, x):
        Slow.calls += 1
        if 21 <= Slow.calls <= 24:   # the 4 micro-batches of step 6
            time.sleep(0.125)
        return x


model = PipelineModule(layers=[nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), Slow(), nn.Linear(32, 1)],
                       num_stages=2, loss_fn=nn.MSELoss(), partition_method="uniform")
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
g = torch.Generator().manual_seed(0)


def batches():
    while True:
        yield torch.randn(2, 16, generator=g), torch.randn(2, 1, generator=g)


it = batches()
for step in range(10):
    engine.train_batch(data_iter=it)
