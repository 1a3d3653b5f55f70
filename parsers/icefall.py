"""icefall's recipes (k2-fsa: Zipformer, pruned transducers, conformer CTC) and ZipVoice, their
TTS sibling.  Every `log_interval` batches (50) each rank logs, behind icefall's logger prefix
with its rank and the world's size:

    2025-05-20 02:38:47,195 INFO [train.py:1056] (7/8) Epoch 1, batch 14300, loss[loss=0.6675,
    simple_loss=0.6511, pruned_loss=0.2501, over 19153.00 frames. ], tot_loss[loss=0.6085, ...,
    over 37589436.30 frames. ], batch size: 130, lr: 2.73e-02, grad_scale: 6.103515625e-05

`loss[...]` is the batch's, `tot_loss[...]` a decaying mean over the last `reset_interval`
batches; the 2022 recipes print no `lr`, ZipVoice prints `global_batch_idx: 50` and `cur_lr`.
Each `valid_interval` batches: `Computing validation loss`, then `Epoch 23, validation:
loss=0.1505, ..., over 944034.00 frames.` (an evaluation) and `Maximum memory allocated so far
is 12345MB`.

The batch counts from 0 in each epoch, logged after the batch trained.  The step is the run's
count of batches (icefall's `batch_idx_train`): ZipVoice's `global_batch_idx` where printed; else
the batch + 1 after the epochs before, counted from the first epoch (0 in the 2022 recipes, else
1).  An epoch is taken to end at its last batch printed, up to `log_interval` - 1 short: the
steps of later epochs say `step_inferred`, as do those of a log that begins in a later epoch
(`--start-epoch`), counted from its own first epoch.  The line's `(R/W)` names its rank where
no launcher prefix does (`line_rank`: for the events of the line too): every rank logs to the
console.
"""
from __future__ import annotations

from .base import Parser, Pattern, num, record, to_gb

TRAIN = Pattern(r"Epoch (\d{1,6}+), batch (\d{1,12}+), (?:global_batch_idx: (\d{1,15}+), )?+"
                r"(?:batch size: (\d{1,9}+), )?+loss\[([^\]]{0,2000}+)\], tot_loss\[([^\]]{0,2000}+)\](.{0,400}+)")
VALID = Pattern(r"Epoch (\d{1,6}+), validation: (.{1,2000}+)")
RANK = Pattern(r"\] \((\d{1,6}+)/\d{1,6}+\) ")
_PAIR = Pattern(r"([A-Za-z_][\w.-]{0,60}+)[=:] ?([-+]?+(?:\d++(?:\.\d*+)?+(?:[eE][-+]?+\d++)?+|nan|inf))")
_FRAMES = Pattern(r"over ([\d.]{1,30}+) frames")
_MEMORY = Pattern(r"Maximum memory allocated so far is (\d{1,12}+)MB")
_METRICS = 24


def _losses(text: str) -> dict:
    """`loss=0.6675, simple_loss=0.6511, over 19153.00 frames. ` -> the numbers, `frames` too."""
    out = {m.group(1): num(m.group(2)) for m in _PAIR.finditer(text)}
    frames = _FRAMES.search(text)
    if frames is not None:
        out["frames"] = num(frames.group(1))
    return {k: v for k, v in out.items() if v is not None}


class IcefallParser(Parser):
    name = "icefall"

    def __init__(self) -> None:
        self.epochs: dict = {}
        """rank -> [epoch, the batches of the epochs before it, its last batch printed, inferred]"""
        self.last_step: dict = {}

    def detect(self, line: str) -> bool:
        return ("tot_loss[" in line and TRAIN.search(line) is not None) or (
            ", validation: " in line and RANK.search(line) is not None and VALID.search(line) is not None)

    def line_rank(self, line: str) -> int | None:
        """The rank of the line's `(R/W)`, where it has one."""
        m = RANK.search(line) if ") " in line else None
        return int(m.group(1)) if m is not None else None

    def parse(self, line: str, rank: int | None) -> list[dict]:
        if rank is None:        # (the line that made icefall the stream's framework)
            rank = self.line_rank(line)
        if "tot_loss[" in line:
            m = TRAIN.search(line)
            return [self._train(m, rank)] if m is not None else []
        if ", validation: " in line:
            m = VALID.search(line)
            if m is None:
                return []
            return [record("eval", self.name, rank, self.last_step.get(rank), phase="result",
                           epoch=int(m.group(1)), metrics=_losses(m.group(2)) or None)]
        if "Computing validation loss" in line:
            return [record("eval", self.name, rank, self.last_step.get(rank), phase="start")]
        if "Maximum memory allocated" in line:
            m = _MEMORY.search(line)
            if m is not None:
                return [record("eval", self.name, rank, self.last_step.get(rank), phase="end",
                               mem_gb=to_gb(float(m.group(1)), "mb"))]
        return []

    def _train(self, m, rank) -> dict:
        epoch, batch = int(m.group(1)), int(m.group(2))
        losses, tot = _losses(m.group(5)), _losses(m.group(6))
        tail = {k: v for k, v in _losses(m.group(7)).items() if k != "frames"}
        fields: dict = {"epoch": epoch, "iter_in_epoch": batch}
        if m.group(3) is not None:
            step, inferred = int(m.group(3)), False
        else:
            step, inferred = self._step(rank, epoch, batch)
        if "loss" in losses:
            fields["loss"] = losses.pop("loss")
        lr = tail.pop("lr", None)
        fields["lr"] = tail.pop("cur_lr", None) if lr is None else lr
        fields["loss_scale"] = tail.pop("grad_scale", None)
        metrics = dict(losses)
        if "loss" in tot:
            metrics["tot_loss"] = tot["loss"]
        size = m.group(4) or tail.pop("size", None)
        if size is not None:
            metrics["batch_size"] = int(float(size))
        metrics.update(list(tail.items())[:_METRICS - len(metrics)])
        self.last_step[rank] = step
        return record("progress", self.name, rank, step, step_inferred=inferred or None, **fields,
                      metrics=metrics or None)

    def _step(self, rank, epoch: int, batch: int) -> tuple[int, bool]:
        """The run's batches through this one, and whether the count is inferred."""
        state = self.epochs.get(rank)
        if state is None:
            state = self.epochs[rank] = [epoch, 0, -1, epoch > 1]
        elif epoch != state[0]:
            state[:] = [epoch, state[1] + state[2] + 1, -1, True]
        state[2] = batch
        return state[1] + batch + 1, state[3]
