"""A training loop of one's own under Accelerate, with a tqdm bar as its examples draw it.

    python accelerate_loop.py steps    diffusers' scripts: one `Steps` bar over all steps,
                                       `set_postfix(step_loss=..., lr=...)`
    python accelerate_loop.py nested   older examples: `trange(desc="Epoch")` around
                                       `tqdm(loader, desc="Iteration")`, `set_postfix(loss=...)`
"""
import sys
import time

import torch
from accelerate import Accelerator
from torch import nn
from tqdm.auto import tqdm, trange

accelerator = Accelerator(cpu=True)
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
g = torch.Generator().manual_seed(0)
data = torch.utils.data.TensorDataset(torch.randn(48, 8, generator=g), torch.randn(48, 1, generator=g))
loader = torch.utils.data.DataLoader(data, batch_size=4)
model, opt, loader = accelerator.prepare(model, opt, loader)


def train_step(x, y):
    loss = nn.functional.mse_loss(model(x), y)
    accelerator.backward(loss)
    opt.step()
    opt.zero_grad()
    time.sleep(0.06)
    return loss.item()


if sys.argv[1] == "steps":
    bar = tqdm(range(24), desc="Steps", disable=not accelerator.is_local_main_process)
    for epoch in range(2):
        for x, y in loader:
            loss = train_step(x, y)
            bar.update(1)
            bar.set_postfix(step_loss=loss, lr=opt.param_groups[0]["lr"])
else:
    for epoch in trange(2, desc="Epoch"):
        it = tqdm(loader, desc="Iteration")
        for x, y in it:
            it.set_postfix(loss=train_step(x, y))
