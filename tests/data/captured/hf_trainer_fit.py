"""A tiny Hugging Face Trainer run, to capture what the Trainer prints."""
import sys, time
import torch
from torch import nn
from transformers import Trainer, TrainingArguments


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 1)

    def forward(self, x, labels=None):
        time.sleep(0.05)
        out = self.l(x)
        return {"loss": nn.functional.mse_loss(out, labels), "logits": out}


class Data(torch.utils.data.Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.x, self.y = torch.randn(n, 8, generator=g), torch.randn(n, 1, generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"x": self.x[i], "labels": self.y[i]}


# python hf_trainer_fit.py OUTDIR [notqdm|info|resume|notqdm-info-accum3|66]
#   resume: from OUTDIR/checkpoint-8 of an earlier run; notqdm-info-accum3: no bar, the INFO banner,
#   3 batches of 4 a step over 66 examples (an epoch's last step takes the 2 batches left);
#   66: the bar, no banner, 66 examples (an epoch's last batch short)
mode = sys.argv[2] if len(sys.argv) > 2 else ""
accum = mode == "notqdm-info-accum3"
args = TrainingArguments(output_dir=sys.argv[1], per_device_train_batch_size=4 if accum else 8,
                         gradient_accumulation_steps=3 if accum else 1, num_train_epochs=2,
                         logging_steps=2, eval_strategy="steps", eval_steps=5, save_steps=8,
                         report_to=[], use_cpu=True, disable_tqdm=mode.startswith("notqdm"),
                         log_level="info" if mode in ("info", "resume") or accum else "passive")
trainer = Trainer(model=Tiny(), args=args, train_dataset=Data(66 if accum or mode == "66" else 64), eval_dataset=Data(16))
trainer.train(resume_from_checkpoint=f"{sys.argv[1]}/checkpoint-8" if mode == "resume" else None)
