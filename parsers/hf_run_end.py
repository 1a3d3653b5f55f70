"""HF's Trainer's log dicts numbered where no training banner was logged, from how the run ended.

The Trainer logs its banner at INFO, which its default log level leaves out.  A run whose stdout
and stderr were saved apart (Slurm's `--output`/`--error`, torchrun's `--redirects`) then has its
bar on stderr, which counts the steps and names nothing, and its log dicts on stdout, which name
their epoch and no step.  Read ahead, the stdout file still tells the schedule:
- its summary dict (`{'train_runtime': ..., 'epoch': 2.0}`) prints the epoch at which the bar's
  last step ended: with the bar's total, the steps an epoch;
- the Trainer logs every `logging_steps` (L) steps, the first step too where told
  (`logging_first_step`), so its i-th training dict is step i*L ((k+i)*L in a run resumed
  from a checkpoint at step kL or a little past it), and the last is the last multiple of L
  in the run.
With no bar either (`disable_tqdm`), one file holds it all, and the summary's runtime and steps
a second give the steps (`summary_totals`).

Where the bar is drawn, the epoch is printed to 2 decimals (4.x) or 4 digits (5.x)
(`hf_epochs.printed_epoch`), so in a long epoch a dict's epoch leaves it several steps, and the
accumulation, which no line prints, moves a step's epoch by up to a step (`step_span`).  The
dicts are numbered only where one set of steps fits them all, under every count of steps an
epoch, every interval and every checkpoint the run may have resumed from that fit; a second
`train()`'s fit none, and stay without a step."""
from __future__ import annotations

import math
from dataclasses import dataclass

from .base import LIMIT, SHORT_LINE, TIMEOUT
from .hf_epochs import printed_epoch
from .prefix import split_rank_prefix

SUMMARY = b"{'train_runtime': "
TRAINING_DICT = "{'loss': "
"""How a training log dict starts (an evaluation's starts `{'eval_loss': `)."""

_MAX_TOTALS = 8
"""Counts of the run's steps looked at, at most, where the summary alone gives them."""
_MAX_EPOCH_LENGTHS = 64
"""Counts of steps an epoch looked at, at most: a run that ended at epoch E (within a slack)
allows about (1 + 2 * slack * total / E) / E of them: a run of half an epoch or more, printed
to 2 decimals, under 5,000 steps an epoch."""


@dataclass(frozen=True)
class Ahead:
    """What a stdout file's head tells of how its run ended."""
    end: tuple[float, float]
    """(epoch, slack) the first summary dict printed: where the run's last step ended."""
    logged: list[tuple[float, float]]
    """The printed epochs of the training dicts before it."""
    totals: range
    """The run's steps that the summary's runtime and steps a second allow."""


def read_ahead(blocks) -> Ahead | None:
    """How the run ended, from blocks of whole lines (bytes): the first summary dict and the
    training dicts before it, each a line of its own as the Trainer prints it, behind a
    launcher's rank prefix or none; None where the run printed no summary (it did not end, or
    the head read holds no end), or a line the patterns could not read in time."""
    logged: list[tuple[float, float]] = []
    key = TRAINING_DICT.encode()
    try:
        for block in blocks:
            if key not in block and SUMMARY not in block:
                continue
            for line in block.split(b"\n"):
                if key not in line and SUMMARY not in line:
                    continue
                text = line.decode("utf-8", "replace").strip()
                LIMIT.timeout = None if len(text) <= SHORT_LINE else TIMEOUT
                text = split_rank_prefix(text)[1].strip()
                if text.startswith(TRAINING_DICT) and text.endswith("}"):
                    printed = printed_epoch(text)
                    if printed is None:
                        return None     # a training dict with no epoch: not the Trainer's
                    logged.append(printed)
                elif SUMMARY in line:
                    end = printed_epoch(text)
                    return None if end is None else Ahead(end, logged, summary_totals(text))
    except TimeoutError:
        return None
    return None


def printed_bounds(text: str) -> tuple[float, float]:
    """(low, high) of a number printed rounded to its last digit: `1.273` is 1.2725 to 1.2735;
    ValueError where `text` is not a plain finite number."""
    mantissa, _, exponent = text.partition("e")
    if len(text) > 40 or not mantissa.replace(".", "", 1).isdigit():
        raise ValueError(text)
    unit = 10.0 ** (int(exponent or 0) - len(mantissa.partition(".")[2]))
    value = float(text)
    return max(value - unit / 2, 0.0), value + unit / 2


def summary_totals(line: str) -> range:
    """The steps a run made, from its summary's `train_runtime` and `train_steps_per_second`
    (the Trainer's `speed_metrics`: the steps over the runtime, each rounded as printed); empty
    where either is missing or they allow more than a few."""
    try:
        rt_lo, rt_hi = printed_bounds(_summary_value(line, "train_runtime"))
        sps_lo, sps_hi = printed_bounds(_summary_value(line, "train_steps_per_second"))
    except ValueError:
        return range(0)
    first, last = max(math.ceil(rt_lo * sps_lo - 1e-9), 1), math.floor(rt_hi * sps_hi + 1e-9)
    return range(first, last + 1) if last - first < _MAX_TOTALS else range(0)


def _summary_value(line: str, key: str) -> str:
    """The text of `key`'s value in a printed dict, quotes off (5.x quotes its numbers)."""
    at = line.find(f"'{key}': ")
    if at < 0:
        raise ValueError(key)
    start = at + len(key) + 4
    ends = [i for i in (line.find(",", start), line.find("}", start)) if i >= 0]
    return line[start:min(ends, default=len(line))].strip().strip("'")


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


_MAX_INTERVALS = 4096
"""Logging intervals looked at, at most, for one count of steps an epoch."""


class _TooMany(Exception):
    """More ways to fit the dicts than are looked at: they get no step."""


def _logging_steps(total: int, spans: list[tuple[int, int]], resumed: bool):
    """The steps of dicts logged every L steps, each within its span (`step_span`), the last at
    the run's last multiple of L: (k + i) * L for the i-th, k = 0 in a run from its start, and
    any k in one `resumed` from a checkpoint (k = total // L - len(spans)).  For one dict, any
    step past half the run that is within its span (L: the step itself)."""
    n = len(spans)
    if n == 1:
        first, last = spans[0]
        yield from ((step,) for step in range(max(first, total // 2 + 1), min(last, total) + 1))
        return
    lo = max(-(-(spans[-1][0] - spans[0][1]) // (n - 1)), 1)
    hi = (spans[-1][1] - spans[0][0]) // (n - 1)
    if hi - lo >= _MAX_INTERVALS:
        raise _TooMany
    for interval in range(lo, hi + 1):
        k = total // interval - n
        if k < 0 or (k and not resumed):
            continue
        steps = tuple((k + i) * interval for i in range(1, n + 1))
        if all(a <= step <= b for step, (a, b) in zip(steps, spans)):
            yield steps


def logged_steps(totals, end: tuple[float, float],
                 logged: list[tuple[float, float]]) -> tuple[list[int] | None, list[int]]:
    """(the steps of the training dicts `logged`, their printed epochs in order, or None, the
    counts of steps an epoch under which they fit) of a run of one of `totals` steps that
    ended at the printed epoch `end`.  The steps are given where every count of steps and of
    steps an epoch that `end` allows, every logging interval, and every checkpoint the run
    may have resumed from, that fit every dict, give the same."""
    found: set[tuple[int, ...]] = set()
    fitting: list[int] = []
    if not logged:
        return None, fitting
    try:
        for total in totals:
            for per_epoch in steps_an_epoch(total, *end):
                spans = [step_span(epoch, slack, per_epoch) for epoch, slack in logged]
                fits = set(_logging_steps(total, spans, resumed=True))
                if spans[0][0] == 1:    # `logging_first_step`: a run from its start logs step 1
                    fits |= {(1, *steps) for steps in (_logging_steps(total, spans[1:], resumed=False)
                                                       if len(spans) > 1 else [()])}
                found |= fits
                fitting += [per_epoch] if fits and per_epoch not in fitting else []
                if len(found) > 1:
                    return None, []
    except _TooMany:
        return None, []
    return (list(found.pop()) if found else None), fitting


class RunEnd:
    """What a run's stdout file, read ahead, tells of its dicts' steps, with its bar's total
    where one was drawn: the training dicts' steps, in order (`logged_steps`).  An evaluation
    (every `eval_steps`, which no line prints) is numbered only where printed with the epoch of
    the training dict just before it, and no two steps print one epoch: those of one epoch lie
    at least 1 / per_epoch apart, except its last two (an accumulation cut short), and the next
    epoch's first step lies that far past it."""

    def __init__(self, ahead: Ahead) -> None:
        self.ahead = ahead
        self.steps: list[int] | None = None
        self.epoch_lengths: list[int] = []
        self.read = 0
        """Training dicts read so far."""
        self.last: tuple[tuple[float, float], int] | None = None
        """(printed epoch, step) of the last training dict read."""

    def step(self, line: str, printed: tuple[float, float], total: int | None) -> int | None:
        """The step of the dict `line` (stripped), which printed the epoch `printed`; `total`:
        the bar's, where one was drawn."""
        if self.steps is None:
            totals = self.ahead.totals if total is None else (total,)
            steps, self.epoch_lengths = logged_steps(totals, self.ahead.end, self.ahead.logged)
            self.steps = steps or []
        if line.startswith(TRAINING_DICT):
            i, self.read = self.read, self.read + 1
            if i < len(self.steps) and self.ahead.logged[i] == printed:
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
