"""The Hugging Face Trainer's step, from the epoch its log dicts print.

With `disable_tqdm=True` (common where a bar would flood a cluster's log files) the Trainer
prints its log dicts bare, and they name no step: `{'loss': 1.48, ..., 'epoch': 0.75}`.  The
epoch is `epoch + (batch + 1) / batches_in_epoch`, set at each optimizer step, so where the
training banner says how many batches an epoch holds, the epoch names its step exactly.  The
banner (`***** Running training *****`, logged at INFO, which the example scripts turn on)
gives the examples, the total batch and its accumulation steps, the epochs and the steps;
Transformers 5 adds the update steps per epoch.  A step is given only where the epoch's printed
digits allow no other: Transformers 5 prints 4 significant digits (`'0.625'`), older 4.x
releases rounded it to 2 decimals (`round(epoch, 2)`, from 4.2), 4.57 prints the float whole
with no bar and rounds it where its bar is drawn.  Where no banner was logged, the run's end may
still tell the steps (`hf_run_end`).  Unsloth replaces the banner with its own, which gives the
same numbers several to a line (`TrainingBanner.read`)."""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import Pattern

if TYPE_CHECKING:
    from .hf_run_end import RunEnd

BANNER = Pattern(r"(Num examples|Num Epochs|Num update steps per epoch|Gradient Accumulation steps|"
                 r"Total optimization steps|Total train batch size \(w\. parallel, distributed & accumulation\))"
                 r" = (\d[\d,]{0,30}+)\s*$")
UNSLOTH = Pattern(r"(Num examples|Num Epochs|Gradient [Aa]ccumulation steps|Total steps|Total batch size)"
                  r"(?: \([\d x]{1,60}+\))? = (\d[\d,]{0,30}+)(?= \| |\s*$)")
"""A number of Unsloth's banner, after its sloth's ASCII art:
`   \\   /|    Num examples = 240 | Num Epochs = 1 | Total steps = 30`, ..., `Data Parallel GPUs
= 1 | Total batch size (2 x 4 x 1) = 8`; its releases of 2024 `Gradient Accumulation steps = 8`
and `Total batch size = 40 | Total steps = 220`."""
PRINTED_EPOCH = Pattern(r"'epoch': ('?)([0-9][0-9.e+-]{0,30}+)")
_KEYS = {"Num examples": "examples", "Num Epochs": "epochs", "Num update steps per epoch": "steps_per_epoch",
         "Gradient Accumulation steps": "accumulation", "Gradient accumulation steps": "accumulation",
         "Total optimization steps": "total_steps", "Total steps": "total_steps"}
_LAST_OF_BANNER = ("Total optimization steps", "Total steps", "Total batch size")
"""The keys of a banner's last line of numbers (HF's, Unsloth's, Unsloth's of 2025): there the
schedule is worked out, and not on an evaluation's banner, which names its examples too."""


def unsloth_banner_end(line: str) -> bool:
    """The last line of numbers of Unsloth's banner: Unsloth prints it from inside the Trainer's
    own training loop, which it patches, so that the line names the Trainer as HF's banner does."""
    return "| Total batch size (" in line or ("Total batch size = " in line and "| Total steps = " in line)


@dataclass(frozen=True)
class Schedule:
    """One process's epoch: its batches, how many make an optimizer step, the steps it holds.
    `carried`: the accumulation runs on across epochs, as before Transformers 4.46 (a step on
    every whole accumulation of the run's batches, `total_batched_samples`; an epoch's last
    batches go into the next epoch's first step), which counts `batches // accumulation` steps
    an epoch."""
    batches: int
    accumulation: int
    steps_per_epoch: int
    carried: bool = False


def schedules(examples: int, epochs: int, total_batch: int, accumulation: int, total_steps: int,
              steps_per_epoch: int | None = None) -> list[Schedule]:
    """The schedules the banner's numbers allow.  A process reads ceil(examples / (total batch /
    accumulation)) batches an epoch, or the floor where the last batch is dropped; the Trainer
    makes ceil(batches / accumulation) steps of them, and prints ceil(total steps / steps per
    epoch) epochs, which rules out a wrong guess.  Before 4.46 it counted floor(batches /
    accumulation) steps an epoch and carried the rest on (`Schedule.carried`): where an epoch's
    batches are no whole number of accumulations and the banner allows it, that schedule is
    allowed too (the printed epochs tell the two apart at the first epoch's end).  A dataset
    with no length prints sys.maxsize epochs: its one 'epoch' is the whole run."""
    if min(examples, epochs, total_batch, accumulation, total_steps) < 1:
        return []
    if epochs == sys.maxsize:
        return [Schedule(total_steps * accumulation, accumulation, total_steps)]
    if total_batch % accumulation:
        return []
    per_batch = total_batch // accumulation
    out = []
    for batches in sorted({-(-examples // per_batch), examples // per_batch}):
        steps = max(-(-batches // accumulation), 1)
        if batches >= 1 and -(-total_steps // steps) == epochs and steps_per_epoch in (None, steps):
            out.append(Schedule(batches, accumulation, steps))
        carried = batches // accumulation
        if batches > accumulation and batches % accumulation and -(-total_steps // carried) == epochs \
                and steps_per_epoch is None:    # (a banner that names its steps an epoch is Transformers 5's)
            out.append(Schedule(batches, accumulation, carried, carried=True))
    return out


def printed_epoch(line: str) -> tuple[float, float] | None:
    """(epoch, how far the true epoch may lie from it) as a log dict prints it.  Quoted: the
    Transformers 5 `f"{v:.4g}"`, half its last digit.  Bare with up to 2 decimals: maybe rounded
    (older 4.x), 0.005.  Bare with more: Python's exact repr of the float."""
    m = PRINTED_EPOCH.search(line)
    if m is None:
        return None
    text = m.group(2).rstrip(".")
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value) or value < 0:
        return None
    if m.group(1):
        if value == 0:
            return value, 0.0
        return value, 0.5 * 10.0 ** (math.floor(math.log10(value)) - 3)
    mantissa = text.partition("e")[0]
    decimals = len(mantissa.partition(".")[2])
    if "e" not in text and decimals <= 2:
        return value, 0.005
    return value, 1e-9 * max(1.0, value)


_MAX_CANDIDATES = 4


def steps_within(epoch: float, slack: float, s: Schedule) -> set[int] | None:
    """The optimizer steps of schedule `s` whose end the Trainer may have printed as `epoch`:
    the batches counted since the start lie within `slack` of epoch * batches, and a step ends
    on a whole accumulation or on an epoch's last batch.  None where the printed digits allow
    too many to look at."""
    lo, hi = (epoch - slack) * s.batches, (epoch + slack) * s.batches
    first, last = max(math.ceil(lo - 1e-6), 1), math.floor(hi + 1e-6)
    if last - first >= _MAX_CANDIDATES:
        return None
    found = set()
    for x in range(first, last + 1):
        if s.carried:
            if x % s.accumulation == 0:
                found.add(x // s.accumulation)
            continue
        done, batch = divmod(x - 1, s.batches)
        batch += 1
        if batch % s.accumulation == 0 or batch == s.batches:
            found.add(done * s.steps_per_epoch + -(-batch // s.accumulation))
    return found


def step_at(epoch: float, slack: float, allowed: list[Schedule]) -> int | None:
    """The one step that `epoch` names under any of the schedules allowed; None unless one."""
    found: set = set()
    for s in allowed:
        steps = steps_within(epoch, slack, s)
        if steps is None:
            return None
        found |= steps
    return found.pop() if len(found) == 1 else None


class TrainingBanner:
    """The numbers of the last `***** Running training *****` banner read.  Its lines come before
    any line that names the framework, so the parser reads them while detecting too."""

    def __init__(self) -> None:
        self.seen: dict = {}
        self.allowed: list[Schedule] = []
        self.bar_drawn = False
        """The Trainer's bar was drawn, maybe on the process's other pipe: its redraws time the
        steps, and a dict numbered from its epoch carries that step's values alone."""
        self._changed = False
        """A number changed since `allowed` was worked out: a line read again changes nothing
        (the log probe notes a banner as it comes, before its pipe's parser reads it)."""
        self.bar_total: int | None = None
        """The total steps of the Trainer's bar, the first drawn."""
        self.contradicted = False
        """A printed epoch at which no step of the banner's schedules ends: the Trainer counts
        otherwise, and no later epoch names a step."""
        self.run_end: RunEnd | None = None
        """Where the run's stdout was read ahead: it numbers the dicts where no banner was
        logged."""

    def read(self, line: str) -> bool:
        """Note a banner line; True if `line` was one."""
        if not ("Num " in line or "steps = " in line or "accumulation) = " in line or "Total batch size" in line):
            return False    # (the pattern's search costs ~2.7 us a line; this, ~0.1)
        pairs = [m.groups() for m in UNSLOTH.finditer(line)] if " | " in line else []
        if not pairs:
            m = BANNER.search(line)
            if m is None:
                return False
            pairs = [m.groups()]
        for key, digits in pairs:
            name, value = _KEYS.get(key, "total_batch"), int(digits.replace(",", ""))
            if self.seen.get(name) != value:
                self.seen[name] = value     # (an evaluation's banner names its examples too, before the next training banner)
                self._changed = True
        s = self.seen
        if self._changed and any(key in _LAST_OF_BANNER for key, _ in pairs) and all(
                k in s for k in ("examples", "epochs", "total_batch", "accumulation", "total_steps")):
            self._changed, self.contradicted = False, False
            self.allowed = schedules(s["examples"], s["epochs"], s["total_batch"], s["accumulation"],
                                     s["total_steps"], s.get("steps_per_epoch"))
        return True

    def may_be_training(self, total: int | None) -> bool:
        """Whether a bar of `total` steps may be the training's: where the banner logged its
        steps, or the run's summary read ahead gives them (`hf_run_end.summary_totals`), it has
        that total."""
        expected = self.seen.get("total_steps")
        if expected is not None:
            return total == expected
        totals = self.run_end.ahead.totals if self.run_end is not None else range(0)
        return not totals or total in totals

    def drawn(self, total: int | None) -> None:
        """The Trainer's bar was drawn, with `total` steps."""
        self.bar_drawn = True
        if self.bar_total is None:
            self.bar_total = total

    def step(self, line: str) -> int | None:
        """The step a bare log dict's epoch names (`step_at`); where no banner was read, the
        step the run's end gives it (`run_end`), or None.  Where the banner allows two schedules
        (the last batch dropped or not), one that has no step ending at a printed epoch is ruled
        out; an epoch at which none has one ends the numbering (`contradicted`)."""
        if self.contradicted:
            return None
        printed = printed_epoch(line) if self.allowed or self.run_end is not None else None
        if printed is None:
            return None
        if not self.allowed:
            return None if self.run_end is None else self.run_end.step(line, printed, self.bar_total)
        ruled_in = [s for s in self.allowed if steps_within(*printed, s) != set()]
        if not ruled_in:
            self.contradicted = True
            return None
        self.allowed = ruled_in
        return step_at(printed[0], printed[1], self.allowed)
