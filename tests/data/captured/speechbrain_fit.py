"""A SpeechBrain `Brain` as its templates write one, on random 40-dim frames and 10 classes: its
own `fit` loop (the tqdm bar of each epoch, the validation's), an end-of-epoch `FileTrainLogger`
summary with the recipes' meta keys (`epoch`, `lr`, `steps`, `optimizer`), a checkpoint after
each epoch, a test pass at the end.  Logging as `create_experiment_directory` sets it up (the
console: `%(name)s - %(message)s`).

Run: python speechbrain_fit.py OUT [--epochs N] [--slow-index I] [--batch-ms MS] [--ddp]
(`--ddp`: under torchrun, DDP on gloo as SpeechBrain's recipes start it: `ddp_init_group`, each
rank a shard of the batches through `DistributedSampler`.)
"""
import argparse
import time

import torch

import speechbrain as sb
from speechbrain.utils.checkpoints import Checkpointer
from speechbrain.utils.train_logger import FileTrainLogger


class Frames(torch.utils.data.Dataset):
    def __init__(self, n, seed, slow_index=None):
        g = torch.Generator().manual_seed(seed)
        self.x, self.y = torch.randn(n, 40, generator=g), torch.randint(0, 10, (n,), generator=g)
        self.slow_index = slow_index

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if i == self.slow_index:
            time.sleep(0.5)
        return self.x[i], self.y[i]


class Classifier(sb.Brain):
    def compute_forward(self, batch, stage):
        if stage == sb.Stage.TRAIN:
            time.sleep(self.hparams.batch_ms / 1000)
        return self.modules.model(batch[0].to(self.device))

    def compute_objectives(self, predictions, batch, stage):
        targets = batch[1].to(self.device)
        if stage != sb.Stage.TRAIN:
            self.correct += (predictions.argmax(-1) == targets).sum().item()
            self.seen += len(targets)
        return torch.nn.functional.cross_entropy(predictions, targets)

    def on_stage_start(self, stage, epoch=None):
        self.correct, self.seen = 0, 0

    def on_stage_end(self, stage, stage_loss, epoch=None):
        if stage == sb.Stage.TRAIN:
            self.train_loss = stage_loss
            return
        stats = {"loss": stage_loss, "ACC": self.correct / self.seen}
        if stage == sb.Stage.VALID:
            lr = self.optimizer.param_groups[0]["lr"]
            self.hparams.train_logger.log_stats(
                stats_meta={"epoch": epoch, "lr": lr, "steps": self.optimizer_step, "optimizer": "SGD"},
                train_stats={"loss": self.train_loss}, valid_stats=stats)
            self.checkpointer.save_and_keep_only(meta=stats, min_keys=["loss"])
        else:
            self.hparams.train_logger.log_stats(
                stats_meta={"Epoch loaded": self.hparams.epoch_counter.current}, test_stats=stats)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--slow-index", type=int)
    parser.add_argument("--batch-ms", type=float, default=0.0, help="each training batch's sleep")
    parser.add_argument("--ddp", action="store_true")
    args = parser.parse_args()
    run_opts = {"distributed_backend": "gloo", "device": "cpu"} if args.ddp else {}
    if args.ddp:
        sb.utils.distributed.ddp_init_group(run_opts)
    sb.create_experiment_directory(experiment_directory=args.out)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(40, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    counter = sb.utils.epoch_loop.EpochCounter(limit=args.epochs)
    hparams = {"train_logger": FileTrainLogger(f"{args.out}/train_log.txt"), "epoch_counter": counter,
               "batch_ms": args.batch_ms}
    checkpointer = Checkpointer(f"{args.out}/save", recoverables={"model": model, "counter": counter})
    brain = Classifier(modules={"model": model}, opt_class=lambda p: torch.optim.SGD(p, lr=0.1),
                       hparams=hparams, checkpointer=checkpointer, run_opts=run_opts)
    loader = {"batch_size": 32}
    brain.fit(counter, Frames(640, 0, args.slow_index), Frames(160, 1), train_loader_kwargs=loader,
              valid_loader_kwargs=loader)
    brain.evaluate(Frames(160, 2), min_key="loss", test_loader_kwargs=loader)


if __name__ == "__main__":
    main()
