"""A tiny Lightning fit with the RichProgressBar, to capture what it prints."""
import sys, time
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
import lightning as L
from lightning.pytorch.callbacks import RichProgressBar, TQDMProgressBar

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
bar = RichProgressBar() if sys.argv[1] == "rich" else TQDMProgressBar()
t = L.Trainer(max_epochs=2, accelerator="cpu", devices=1, callbacks=[bar], logger=False,
              enable_checkpointing=False, log_every_n_steps=1)
t.fit(M(), DataLoader(ds, batch_size=8), DataLoader(ds, batch_size=16))
