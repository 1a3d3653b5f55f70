"""A tiny Lightning fit, to capture what it prints.

    python lightning_rich_fit.py rich|tqdm         2 epochs with that progress bar
    python lightning_rich_fit.py rich-leave        3 epochs, RichProgressBar(leave=True): each epoch's bar kept
    python lightning_rich_fit.py max-steps         tqdm's bar, `max_steps=13` over epochs of 8 steps
    python lightning_rich_fit.py resume CKPT_DIR   1 epoch saving a checkpoint, then a fit resumed from it
    python lightning_rich_fit.py iterable          2 epochs, tqdm's bar, the training batches from an
                                                   iterable with no length (a streaming dataset's)
"""
import sys, time
import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, TensorDataset
import lightning as L
from lightning.pytorch.callbacks import ModelCheckpoint, RichProgressBar, TQDMProgressBar

class M(L.LightningModule):
    def __init__(self):
        super().__init__(); self.l = nn.Linear(8, 1)
    def training_step(self, b, i):
        x, y = b
        loss = nn.functional.mse_loss(self.l(x), y)
        time.sleep(0.12)
        self.log("train_loss", loss, prog_bar=True)
        return loss
    def validation_step(self, b, i):
        x, y = b
        self.log("val_loss", nn.functional.mse_loss(self.l(x), y), prog_bar=True)
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

ds = TensorDataset(torch.randn(64, 8), torch.randn(64, 1))
loaders = DataLoader(ds, batch_size=8), DataLoader(ds, batch_size=16)


class Stream(IterableDataset):
    def __iter__(self):
        for i in range(0, 64, 8):
            yield ds[i:i + 8]


if sys.argv[1] == "iterable":
    L.Trainer(max_epochs=2, accelerator="cpu", devices=1, callbacks=[TQDMProgressBar()], logger=False,
              enable_checkpointing=False, log_every_n_steps=1).fit(
        M(), DataLoader(Stream(), batch_size=None), loaders[1])
elif sys.argv[1] == "max-steps":
    L.Trainer(max_steps=13, accelerator="cpu", devices=1, callbacks=[TQDMProgressBar()], logger=False,
              enable_checkpointing=False, log_every_n_steps=1).fit(M(), *loaders)
elif sys.argv[1] == "resume":
    save = ModelCheckpoint(dirpath=sys.argv[2], monitor="val_loss", verbose=True)
    L.Trainer(max_epochs=1, accelerator="cpu", devices=1, callbacks=[TQDMProgressBar(), save],
              logger=False, log_every_n_steps=1).fit(M(), *loaders)
    L.Trainer(max_epochs=2, accelerator="cpu", devices=1, callbacks=[TQDMProgressBar()], logger=False,
              enable_checkpointing=False, log_every_n_steps=1).fit(M(), *loaders, ckpt_path=save.best_model_path)
else:
    bar = {"rich": RichProgressBar(), "rich-leave": RichProgressBar(leave=True)}.get(sys.argv[1], TQDMProgressBar())
    t = L.Trainer(max_epochs=3 if sys.argv[1] == "rich-leave" else 2, accelerator="cpu", devices=1, callbacks=[bar], logger=False,
                  enable_checkpointing=False, log_every_n_steps=1)
    t.fit(M(), *loaders)
