"""SpeechBrain's `Brain.fit`: its console logger (`%(name)s - %(message)s`), the tqdm bar of each
epoch's training and of each evaluation, and its recipes' end-of-epoch summary, which
`FileTrainLogger` also writes bare to `train_log.txt`:

    speechbrain.utils.epoch_loop - Going into epoch 2
     50%|█████     | 10/20 [00:00<00:00, 19.57it/s, train_loss=2.29]
    speechbrain.utils.train_logger - epoch: 2, lr: 1.00e-01, steps: 40, optimizer: SGD - train
    loss: 2.29 - valid loss: 2.29, valid ACC: 1.38e-01
    speechbrain.utils.train_logger - Epoch loaded: 1 - test loss: 2.33, test ACC: 1.06e-01

The training bar counts the epoch's batches; its postfix, the epoch's mean loss so far, is set
after every batch and redrawn with the count tqdm last drew (the count moves at most every
0.1 s): a count's first redraw is the end of its batch, with its mean.  Its step is the batch
after the epochs before (an epoch has the bar's length of batches).  The bar itself says when
an epoch begins (its count starts again); `Going into epoch N` names the epoch.  Under
torchrun's `--tee` the logger's lines (stdout) and the bar (stderr) come on one prefix, read
from two files, and the next epoch's announcement can come before this epoch's last redraws.
An evaluation's bar has no `train_loss`: no step.  The summary's meta keys are the recipe's: where
it logs `steps` (the optimizer's), that is the evaluation's step; else the epoch's last batch.
"""
from __future__ import annotations

from .base import CLOCK, OWN_BAR, Parser, Pattern, num, parse_bar, parsed, record
from .lightning import postfix_fields

_EPOCH = Pattern(r"Going into epoch (\d{1,9}+)")
_ITEM = Pattern(r"([A-Za-z][\w ]{0,60}?): ([-+]?+(?:\d++(?:\.\d*+)?+(?:[eE][-+]?+\d++)?+|nan|inf))")
_SUBSETS = {"valid": "validation", "test": "test"}
_OWN_BAR = OWN_BAR | {"epoch", "iter_in_epoch", "it_per_s"}
"""What `Brain.fit`'s bar says itself (its count, rate and epoch): its postfix's keys give way."""


def _items(text: str) -> dict:
    return {m.group(1): v for m in _ITEM.finditer(text[:2000]) if (v := num(m.group(2))) is not None}


def summary(line: str) -> tuple[str, list[tuple[str, str]]] | None:
    """(meta, [(subset, its items)]) of a summary: `epoch: 2, lr: ... - train loss: ... - valid
    loss: ...`, at the line's start or after a logger's ` - `; None for another line."""
    at = line.find("epoch: ")
    if at < 0:
        at = line.find("Epoch loaded: ")
    if at < 0 or (at > 0 and line[at - 2:at] != "- "):
        return None
    parts = line[at:].split(" - ", 8)
    sections = [(p.split(" ", 1)[0], p) for p in parts[1:]]
    if not sections or any(subset not in ("train", "valid", "test") for subset, _ in sections):
        return None
    return parts[0], sections


class SpeechBrainParser(Parser):
    name = "speechbrain"

    def __init__(self) -> None:
        self.epoch: dict = {}
        """rank -> the epoch the training bar counts"""
        self.announced: dict = {}
        """rank -> the epoch `Going into epoch` last named"""
        self.counted: dict = {}
        """rank -> the training bar's last count (a lower one: the next epoch's bar)"""
        self.length: dict = {}
        """rank -> the training bar's batches an epoch"""
        self.given: dict = {}
        """rank -> the training bar's last step given, this epoch (a count's later redraws give none)"""
        self.last_step: dict = {}
        self.summarized: dict = {}
        """rank -> the step the epoch's validation summary named (its training ended there)"""

    def detect(self, line: str) -> bool:
        return line.startswith("speechbrain.") or (" - train " in line and summary(line) is not None)

    def owns(self, line: str) -> bool:
        """Every redraw of its bars: most give no record."""
        return "%|" in line

    def parse(self, line: str, rank: int | None) -> list[dict]:
        if "%|" in line:
            return self._bar(line, rank)
        if "Going into epoch " in line:
            m = _EPOCH.search(line)
            if m is not None:
                self.announced[rank] = int(m.group(1))
            return []
        if " - train " in line or " - test " in line or " - valid " in line:
            found = summary(line)
            if found is not None:
                return self._summary(*found, rank)
        return []

    def place_events(self, recs: list[dict], rank) -> list[dict]:
        """A checkpoint saved after the epoch comes after its last step drawn, and after the
        step its summary named: under torchrun's `--tee` the summary and the save (stdout) can
        come before the bar's last redraws (stderr)."""
        floor = max(self.given.get(rank, 0), self.summarized.get(rank, 0))
        if floor:
            for r in recs:
                r["step"] = floor if r["step"] is None else max(r["step"], floor)
        return recs

    def _bar(self, line: str, rank) -> list[dict]:
        bar = parse_bar(line)
        if bar is None or bar["total"] is None or "train_loss" not in bar["post"]:
            return []       # an evaluation's bar, or the first draw, before a batch ended
        self.length[rank] = bar["total"]
        if bar["n"] < self.counted.get(rank, bar["n"] + 1):     # (the rank's first bar too)
            self._new_epoch(rank)
        self.counted[rank] = bar["n"]
        epoch, total, step = self.epoch.get(rank), bar["total"], self._step(rank, bar)
        if bar["n"] == 0 or step <= self.given.get(rank, 0):
            return []       # the mean of a later batch, redrawn with the count tqdm drew last
        self.last_step[rank] = self.given[rank] = step
        fields = postfix_fields(bar["post"])
        if "train_loss" in fields.get("metrics", {}):
            fields["loss"] = fields["metrics"].pop("train_loss")
            if not fields["metrics"]:
                del fields["metrics"]
        drawn = {"drawn_ns": CLOCK.now_ns} if CLOCK.now_ns is not None else {}
        return [record("progress", self.name, rank, step, total_steps=total, epoch=epoch, iter_in_epoch=bar["n"],
                       it_per_s=bar.get("it_per_s"), **parsed(fields, _OWN_BAR), **drawn)]

    def _new_epoch(self, rank) -> None:
        """The training bar started again (or for the first time): the epoch it counts is the
        one announced, unless that is the one before (its announcement came first, or none
        came: the next), or an earlier one (a restart)."""
        epoch, announced = self.epoch.get(rank), self.announced.get(rank)
        if announced is not None and announced != epoch:
            self.epoch[rank] = announced
        elif epoch is not None:
            self.epoch[rank] = epoch + 1
        self.announced[rank] = self.epoch.get(rank)
        self.given.pop(rank, None)
        self.summarized.pop(rank, None)

    def _step(self, rank, bar: dict) -> int:
        """The batch the bar counts, after the epochs before."""
        epoch = self.epoch.get(rank)
        return (epoch - 1) * bar["total"] + bar["n"] if epoch else bar["n"]

    def _summary(self, meta_text: str, parts: list, rank) -> list[dict]:
        meta = _items(meta_text)
        epoch = meta.pop("epoch", None) or meta.pop("Epoch loaded", None)
        sections = {subset: {k.removeprefix(subset + " "): v for k, v in _items(text).items()}
                    for subset, text in parts}
        steps = meta.pop("steps", None)
        step = int(steps) if steps is not None and steps == int(steps) else None
        if step is None and epoch is not None and "valid" in sections and rank in self.length:
            step = int(epoch) * self.length[rank]
        if step is None:
            step = self.last_step.get(rank)
        elif "valid" in sections:
            self.last_step[rank] = self.summarized[rank] = step
        out: list = []
        for subset, stats in sections.items():
            if subset not in _SUBSETS:
                continue
            metrics = dict(stats)
            if subset == "valid" and "train" in sections:
                metrics.update({f"train_{k}": v for k, v in sections["train"].items()})
            if "lr" in meta and subset == "valid":
                metrics["lr"] = meta["lr"]
            out.append(record("eval", self.name, rank, step, phase="result", subset=_SUBSETS[subset],
                              epoch=int(epoch) if epoch is not None else None, metrics=metrics or None))
        return out
