"""HF's Trainer's log dicts numbered where no training banner was logged, from how the run ended.

The Trainer logs its banner at INFO, which its default log level leaves out.  A run whose stdout
and stderr were saved apart (Slurm's `--output`/`--error`, torchrun's `--redirects`) then has its
bar on stderr, which counts the steps and names nothing, and its log dicts on stdout, which name
their epoch and no step.  Read ahead, the stdout file still tells the schedule:
- its summary dict (`{'train_runtime': ..., 'epoch': 2.0}`) prints the epoch at which the bar's
  last step ended: with the bar's total, the steps an epoch;
- the Trainer logs every `logging_steps` (L) steps, the first step too where told
  (`logging_first_step`), so its i-th training dict is step i*L, and the last is the last
  multiple of L in the run.

Where the bar is drawn, the epoch is printed to 2 decimals (4.x) or 4 digits (5.x)
(`hf_epochs.printed_epoch`), so in a long epoch a dict's epoch leaves it several steps, and the
accumulation, which no line prints, moves a step's epoch by up to a step (`step_span`).  The
dicts are numbered only where one set of steps fits them all, under every count of steps an
epoch and every interval that fit; a resumed run's or a second `train()`'s fit none, and stay
without a step."""
from __future__ import annotations

import math

from .hf_epochs import printed_epoch

SUMMARY = b"{'train_runtime': "
TRAINING_DICT = "{'loss': "
"""How a training log dict starts (an evaluation's starts `{'eval_loss': `)."""

_MAX_EPOCH_LENGTHS = 64
"""Counts of steps an epoch looked at, at most: a run that ended at epoch E (within a slack)
allows about (1 + 2 * slack * total / E) / E of them: a run of half an epoch or more, printed
to 2 decimals, under 5,000 steps an epoch."""


def read_ahead(blocks) -> tuple[tuple[float, float] | None, list[tuple[float, float]]]:
    """(the epoch the first summary dict printed, the printed epochs of the training dicts
    before it, each a line of its own as the Trainer prints it), from blocks of whole lines
    (bytes); (None, ...) where the run printed no summary (it did not end, or the head read
    holds no end)."""
    logged: list[tuple[float, float]] = []
    key = TRAINING_DICT.encode()
    for block in blocks:
        if key not in block and SUMMARY not in block:
            continue
        for line in block.split(b"\n"):
            line = line.strip()
            if line.startswith(key) and line.endswith(b"}"):
                printed = printed_epoch(line.decode("utf-8", "replace"))
                if printed is None:
                    return None, logged     # a training dict with no epoch: not the Trainer's
                logged.append(printed)
            elif SUMMARY in line:
                return printed_epoch(line.decode("utf-8", "replace")), logged
    return None, logged


def step_span(epoch: float, slack: float, per_epoch: int) -> tuple[int, int]:
    """(first, last) step whose end may have printed `epoch` (within `slack`), an epoch being
    `per_epoch` steps.  Counted in batches, step k of an epoch of B batches in steps of A ends
    at kA / B: at or past k / per_epoch and less than a step past it, whatever the accumulation,
    and an epoch's last step on the epoch exactly.  So the step is the floor of epoch *
    per_epoch, unless that is an epoch's last step and not exactly there."""
    lo, hi = (epoch - slack) * per_epoch, (epoch + slack) * per_epoch
    first = math.floor(lo)
    if first % per_epoch == 0 and first < lo:
        first += 1
    return max(first, 1), math.floor(hi)


def steps_an_epoch(total: int, epoch: float, slack: float) -> range:
    """The counts of steps an epoch (s) under which the run's `total`-th step may end at `epoch`
    (`step_span`): s * (epoch - slack) < total + 1 and s * (epoch + slack) >= total.  Empty where
    too many (`_MAX_EPOCH_LENGTHS`)."""
    if total < 1 or epoch <= slack:
        return range(0)
    first = max(math.ceil(total / (epoch + slack) - 1e-9), 1)
    last = math.floor((total + 1) / (epoch - slack) - 1e-9)
    return range(first, last + 1) if last - first < _MAX_EPOCH_LENGTHS else range(0)


def _intervals(total: int, per_epoch: int, logged: list[tuple[float, float]]) -> range:
    """The intervals L that put the i-th of `logged` at step i*L (`step_span`), an epoch being
    `per_epoch` steps, and the last at the run's last multiple of L (len(logged) == total // L)."""
    n = len(logged)
    lo, hi = total // (n + 1) + 1, total // n
    for i, (epoch, slack) in enumerate(logged, 1):
        first, last = step_span(epoch, slack, per_epoch)
        lo, hi = max(lo, -(-first // i)), min(hi, last // i)
        if lo > hi:
            return range(0)
    return range(lo, hi + 1)


def logged_steps(total: int, end: tuple[float, float],
                 logged: list[tuple[float, float]]) -> tuple[list[int] | None, list[int]]:
    """(the steps of the training dicts `logged`, their printed epochs in order, or None, the
    counts of steps an epoch under which they fit) of a run of `total` steps that ended at the
    printed epoch `end`.  The steps are given where every count of steps an epoch that `end`
    allows, and every logging interval that fits every dict under it, give the same."""
    found: set[tuple[int, ...]] = set()
    fitting: list[int] = []
    for per_epoch in steps_an_epoch(total, *end):
        for first_step in (False, True):
            rest = logged[1:] if first_step else logged
            if not logged or (first_step and step_span(*logged[0], per_epoch)[0] != 1):
                continue
            # the first step's dict alone: every interval past the last step fits
            for interval in _intervals(total, per_epoch, rest) if rest else (total + 1,):
                found.add((1,) * first_step + tuple(i * interval for i in range(1, len(rest) + 1)))
                fitting += [per_epoch] if per_epoch not in fitting else []
                if len(found) > 1:
                    return None, []
    return (list(found.pop()) if found else None), fitting


class RunEnd:
    """What a run's stdout file, read ahead, tells of its dicts' steps once its bar's total is
    known: the training dicts' steps, in order (`logged_steps`).  An evaluation (every
    `eval_steps`, which no line prints) is numbered only where printed with the epoch of the
    training dict just before it, and no two steps print one epoch: those of one epoch lie at
    least 1 / per_epoch apart, except its last two (an accumulation cut short), and the next
    epoch's first step lies that far past it."""

    def __init__(self, end: tuple[float, float], logged: list[tuple[float, float]]) -> None:
        self.end, self.logged = end, logged
        self.steps: list[int] | None = None
        self.epoch_lengths: list[int] = []
        self.read = 0
        """Training dicts read so far."""
        self.last: tuple[tuple[float, float], int] | None = None
        """(printed epoch, step) of the last training dict read."""

    def step(self, line: str, printed: tuple[float, float], total: int) -> int | None:
        """The step of the dict `line` (stripped), which printed the epoch `printed`; `total`:
        the bar's."""
        if self.steps is None:
            steps, self.epoch_lengths = logged_steps(total, self.end, self.logged)
            self.steps = steps or []
        if line.startswith(TRAINING_DICT):
            i, self.read = self.read, self.read + 1
            if i < len(self.steps) and self.logged[i] == printed:
                self.last = (printed, self.steps[i])
                return self.steps[i]
            self.steps, self.last = [], None    # not the dicts read ahead: none is numbered from here on
            return None
        if self.last is None or self.last[0] != printed or not self.epoch_lengths:
            return None
        (epoch, slack), step = printed, self.last[1]
        apart = max(self.epoch_lengths) * 2 * slack < 1
        # an epoch's last step may lie less than 1 / per_epoch past the one before it
        last_of_epoch = all(step % length == 0 for length in self.epoch_lengths)
        near_epoch_end = abs(epoch - round(epoch)) <= 2 * slack
        return step if apart and (last_of_epoch or not near_epoch_end) else None
