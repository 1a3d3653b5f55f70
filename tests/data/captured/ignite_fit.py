"""A PyTorch-Ignite job as its MNIST examples write one, on random 28x28 images: 3,000 training
samples in batches of 64 (47 iterations an epoch), the examples' line every 10 iterations
(`Epoch[E] Iteration[I/N] Loss: L`), a pass over the training and the validation set after
each epoch (`Training Results - ...`, `Validation Results - ...`), a checkpoint of the trainer
after each epoch.

Options: `--logger` gives the trainer's and the evaluator's engines Ignite's own logger
(`setup_logger`: `Engine run starting ...`, `Epoch[E] Complete. Time taken: ...`); `--bar`
attaches Ignite's `ProgressBar` with the loss; `--resume-from FILE` loads a checkpoint first;
`--slow-index I` makes sample I 0.5 s slow to load; `--batch-ms MS` adds MS to each iteration.  Under torchrun it runs through
`idist.Parallel` (gloo), every rank printing."""
import argparse
import os
import time

import torch
import torch.nn.functional as F
from torch.utils.data import Dataset, TensorDataset

import ignite.distributed as idist
from ignite.engine import Events, create_supervised_evaluator, create_supervised_trainer
from ignite.handlers import Checkpoint, DiskSaver, ProgressBar
from ignite.metrics import Accuracy, Loss
from ignite.utils import setup_logger


class SlowAt(Dataset):
    def __init__(self, base, index):
        self.base, self.index = base, index

    def __len__(self):
        return len(self.base)

    def __getitem__(self, i):
        if i == self.index:
            time.sleep(0.5)
        return self.base[i]


def training(local_rank, args):
    torch.manual_seed(0)
    train = TensorDataset(torch.randn(3000, 1, 28, 28), torch.randint(0, 10, (3000,)))
    val = TensorDataset(torch.randn(500, 1, 28, 28), torch.randint(0, 10, (500,)))
    if args.slow_index is not None:
        train = SlowAt(train, args.slow_index)
    train_loader = idist.auto_dataloader(train, batch_size=64, shuffle=False)
    train_eval_loader = idist.auto_dataloader(train, batch_size=500, shuffle=False)
    val_loader = idist.auto_dataloader(val, batch_size=500, shuffle=False)
    model = idist.auto_model(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 64),
                                                 torch.nn.ReLU(), torch.nn.Linear(64, 10)))
    optimizer = idist.auto_optim(torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5))
    trainer = create_supervised_trainer(model, optimizer, F.cross_entropy)
    evaluator = create_supervised_evaluator(model, metrics={"accuracy": Accuracy(), "nll": Loss(F.cross_entropy)})
    if args.logger:
        trainer.logger = setup_logger("trainer")
        evaluator.logger = setup_logger("evaluator")
    if args.bar:
        ProgressBar().attach(trainer, output_transform=lambda loss: {"loss": loss})

    if args.batch_ms:
        trainer.add_event_handler(Events.ITERATION_STARTED, lambda _: time.sleep(args.batch_ms / 1000))

    @trainer.on(Events.ITERATION_COMPLETED(every=10))
    def log_training_loss(engine):
        print(f"Epoch[{engine.state.epoch}] Iteration[{engine.state.iteration}/{len(train_loader)}] "
              f"Loss: {engine.state.output:.2f}")

    @trainer.on(Events.EPOCH_COMPLETED)
    def log_results(engine):
        for name, loader in (("Training", train_eval_loader), ("Validation", val_loader)):
            metrics = evaluator.run(loader).metrics
            print(f"{name} Results - Epoch: {engine.state.epoch}  Avg accuracy: {metrics['accuracy']:.2f} "
                  f"Avg loss: {metrics['nll']:.2f}")

    to_save = {"trainer": trainer, "model": model, "optimizer": optimizer}
    saver = DiskSaver(args.out, create_dir=True, require_empty=False)
    trainer.add_event_handler(Events.EPOCH_COMPLETED, Checkpoint(to_save, saver, n_saved=2))
    if args.resume_from:
        Checkpoint.load_objects(to_load=to_save, checkpoint=torch.load(args.resume_from, weights_only=False))
    trainer.run(train_loader, max_epochs=args.epochs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--out", default="checkpoints")
    parser.add_argument("--logger", action="store_true")
    parser.add_argument("--bar", action="store_true")
    parser.add_argument("--resume-from")
    parser.add_argument("--slow-index", type=int)
    parser.add_argument("--batch-ms", type=float, default=0.0)
    args = parser.parse_args()
    with idist.Parallel(backend="gloo" if "WORLD_SIZE" in os.environ else None) as parallel:
        parallel.run(training, args)
