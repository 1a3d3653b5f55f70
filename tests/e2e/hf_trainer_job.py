"""A Hugging Face `Trainer` job on the CPU, as the Trainer prints it: its bar on stderr, its log
dicts on stdout (`tqdm.write`).  A training step takes about STEP_S (its batch's loading); every
EVAL_STEPS steps an evaluation runs, about EVAL_S, whose dict, like the training dicts, names no
step.  No model download: a small module that returns its loss, as the Trainer accepts.

Run: python hf_trainer_job.py [LOGGING_STEPS [EVAL_STEPS [SLOW_STEP]]]
(defaults 1, 8 and none; EVAL_STEPS 0 runs no evaluation; SLOW_STEP's batch loads in SLOW_S).
"""
import sys
import time

import torch
from torch import nn
from torch.utils.data import Dataset
from transformers import Trainer, TrainingArguments

STEPS, BATCH = 26, 2
STEP_S, EVAL_S, EVAL_ITEMS, SLOW_S = 0.2, 1.6, 4, 1.2
GIVEN = [int(a) for a in sys.argv[1:4]]
LOGGING_STEPS, EVAL_STEPS, SLOW_STEP = GIVEN + [1, 8, 0][len(GIVEN):]


class Sleepy(Dataset):
    """Items that take `item_s` each to load: the step's time, or the evaluation's."""

    def __init__(self, items: int, item_s: float, slow_step: int = 0):
        g = torch.Generator().manual_seed(items)
        self.x, self.y = torch.randn(items, 16, generator=g), torch.randn(items, 1, generator=g)
        self.item_s = item_s
        self.slow_step, self.loaded = slow_step, 0

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        # items load in the order the steps take them, whatever their index
        self.loaded += 1
        slow = self.slow_step and (self.loaded - 1) // BATCH == self.slow_step - 1
        time.sleep(SLOW_S / BATCH if slow else self.item_s)
        return {"x": self.x[i], "labels": self.y[i]}


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x, labels=None):
        out = self.net(x)
        return {"loss": nn.functional.mse_loss(out, labels), "logits": out}


args = TrainingArguments(output_dir="/tmp/ridgescope-hf-trainer-job", max_steps=STEPS,
                         per_device_train_batch_size=BATCH, per_device_eval_batch_size=BATCH,
                         logging_steps=LOGGING_STEPS,
                         eval_strategy="steps" if EVAL_STEPS else "no", eval_steps=EVAL_STEPS or None,
                         save_strategy="no", report_to="none", use_cpu=True,
                         dataloader_num_workers=0, disable_tqdm=False, seed=0)
trainer = Trainer(model=Regressor(), args=args,
                  train_dataset=Sleepy(STEPS * BATCH, STEP_S / BATCH, SLOW_STEP),
                  eval_dataset=Sleepy(EVAL_ITEMS, EVAL_S / EVAL_ITEMS))
trainer.train()
