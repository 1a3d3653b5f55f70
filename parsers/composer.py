"""MosaicML Composer's console logger: a header per logged batch, then one `Train key: value`
line per metric; at the end of an evaluation, `[Eval batch=N/N] Eval on LABEL data:` and its
`Eval key: value` lines.

The header names the batch in the unit of the run's `max_duration`: `[batch=12/1000]` (the
run's batch), `[epoch=2][batch=3/8]` (the batch within the epoch, of the epoch's 8) or
`[token=12288/100000]`.  The step is the run's batch: `time/batch`, which the logger prints
(the batches done before this one), + 1; where it is not printed, the header's batch, counted
on across epochs.  `time/*` values are counters (`time/sample`) or SpeedMonitor's wall clock in
a unit of its choice (hours by default), so none is taken for a duration.  The logger prints a
batch's record as the batch ends: read live, the record says when (`drawn_ns`, as a bar's
redraw does), which times the steps of a run that prints no time.

Composer's default is no console logger but its progress bar (tqdm, 120 columns into a pipe),
labelled with the dataloader's label padded to 15 columns: `train          Epoch   0:  50%|...|
4/8 [00:00<00:00, 17.6ba/s, loss/train/total=1.2449]`, a bar an epoch, where the run is counted
in epochs; one bar over the run's batches (`train` and 14 spaces) where it is counted in
batches, samples or tokens.  The loss is set before the bar counts its batch (`LoopBars` reads
such a bar).  An evaluation draws its own bar (`eval           Epoch   0:`, or `Batch      8:`
at the run's batch 8), its postfix the metrics, which the 120 columns may cut."""
from __future__ import annotations

from .base import CLOCK, Parser, Pattern, num, parse_bar, record
from .loopbars import LoopBars

HEADER = Pattern(r"(?:\[epoch=(\d++)\])?\[(batch|sample|token|iteration)=(\d++)(?:/(\d++))?\]:(.{0,4000}+)")
EVAL_HEADER = Pattern(r"\[Eval batch=(\d++)/(\d++)\] Eval on (.{1,200}?) data(:?)\s*+$")
ITEM = Pattern(r"\s*+(Train|Eval)\s++([\w/.@-]{1,120}+):\s*+(-?[\d.]++(?:[eE][-+]?\d++)?|nan|inf)")
_INLINE = Pattern(r"\s*+([\w/.@-]{1,120}+):\s*+(-?[\d.]++(?:[eE][-+]?\d++)?)")
_MAP = {"loss/train/total": "loss", "throughput/batches_per_sec": "it_per_s",
        "throughput/samples_per_sec": "samples_per_s", "throughput/tokens_per_sec": "tokens_per_s",
        "throughput/device/mfu": "mfu", "throughput/device/tokens_per_sec": "tokens_per_s_per_gpu",
        "memory/peak_allocated_mem": "mem_gb"}


BAR_AFTER_LABEL = Pattern(r"(?:[A-Z][a-z]{3,7}+ {1,14}+\d{1,12}+: | {14}+) {1,3}+\d{1,3}+%\|")
"""What follows the 15 columns of a Composer bar's label: `Epoch   0: ` (the run counted in
epochs), `Batch      8: ` (an evaluation's time, in the run's unit) or 14 spaces (the training bar
of a run counted in batches, samples or tokens); then tqdm's percentage."""
TRAIN_LABEL = "train"
"""The label of the training dataloader's bar; an evaluator's is its own (`eval` by default)."""
BAR_COLUMNS = 120
"""The width of Composer's bar where it draws into no terminal: a longer redraw is cut there."""


def uncut(line: str) -> str:
    """The redraw without its last item where the bar's columns cut it (no closing `]`): a
    value cut short (`CrossEntropy=1.32` of 1.3224) would read as another number."""
    text = line.rstrip()
    if len(text) < BAR_COLUMNS or text.endswith("]"):
        return line
    times, comma = text.rfind(" ["), text.rfind(", ")
    return text[:comma] + "]" if comma > times >= 0 else line


def bar_label(line: str) -> str | None:
    """The label of a redraw of Composer's progress bar; None for any other line."""
    label = line[:15].rstrip()
    if not label or " " in label or "%|" not in line or BAR_AFTER_LABEL.match(line, 15) is None:
        return None
    return label


class ComposerParser(Parser):
    name = "composer"

    def __init__(self) -> None:
        self.open: dict = {}        # rank -> the record whose lines are being read
        self.done: dict = {}        # rank -> batches done, the last record's step
        self.epoch_base: dict = {}  # rank -> (the epoch, the batches done before it), where its length is unknown
        self.in_eval: set = set()   # ranks whose evaluation has begun and not yet given its result
        self.bars = LoopBars(self.name)
        self.eval_bar: dict = {}    # rank -> (label, the latest redraw of its evaluation's bar)

    def detect(self, line: str) -> bool:
        return line.startswith(("[batch=", "[epoch=", "[token=", "[sample=", "[iteration=")) or self.owns(line)

    def owns(self, line: str) -> bool:
        return "%|" in line and bar_label(line) is not None

    def _bar(self, label: str, line: str, rank) -> list[dict]:
        """A redraw of the training bar (its steps' records, `LoopBars`), or of an
        evaluation's, held until its pass ends: one eval record a pass."""
        line = uncut(line)
        if label == TRAIN_LABEL:
            return self._pass_ended(rank) + self._epochs_as_logged(self.bars.parse(line, rank) or [])
        bar = parse_bar(line)
        if bar is None:
            return []
        held = self.eval_bar.get(rank)
        out = self._pass_ended(rank) if held is not None and (held[0] != label or bar["n"] < held[1]["n"]) else []
        self.eval_bar[rank] = (label, bar)
        return out

    @staticmethod
    def _epochs_as_logged(recs: list[dict]) -> list[dict]:
        """The bar's label counts the epochs done (`Epoch   0` in the first); the console
        logger, the epoch under way (`[epoch=1]`): records say the logger's."""
        for r in recs:
            if r.get("epoch") is not None:
                r["epoch"] += 1
        return recs

    def _pass_ended(self, rank) -> list[dict]:
        """The eval record of the rank's evaluation bar held, at the training step it followed."""
        if rank not in self.eval_bar:
            return []
        label, bar = self.eval_bar.pop(rank)
        metrics = {k: v for k, v in ((k, num(v)) for k, v in bar["post"].items()) if v is not None}
        return [record("eval", self.name, rank, self.bars.furthest_step(rank), phase="result", label=label,
                       batches=bar["n"], total_batches=bar["total"], **({"metrics": metrics} if metrics else {}))]

    def _add(self, rec: dict, key: str, v: float) -> None:
        if rec["kind"] == "eval":
            rec.setdefault("metrics", {})[key] = v
            return
        name = _MAP.get(key)
        if name == "mfu":
            v = v * 100 if v <= 1 else v
        if name:
            rec.setdefault(name, v)
        elif key == "time/batch":
            rec["_done"] = int(v)
        elif key.startswith("lr-"):
            rec.setdefault("lr", v)
        elif key.startswith("loss/train"):
            rec.setdefault("losses", {})[key] = v
        elif key.startswith("wall_clock/"):      # older SpeedMonitors: seconds
            rec.setdefault("timers_s", {})[key] = v

    def _close(self, rank) -> dict:
        """The record of `rank` whose lines are read, with the step its lines told."""
        rec = self.open.pop(rank)
        if rec["kind"] != "progress":
            return rec
        done, header = rec.pop("_done", None), rec.pop("_header")
        unit, printed, of, epoch = header
        if done is not None:
            rec["step"] = done + 1
        elif unit == "batch" and epoch is None:
            rec["step"] = printed
        elif unit == "batch" and of is not None:
            rec["step"] = (epoch - 1) * of + printed
        elif unit == "batch":       # an epoch of unknown length: after the last batch seen before it
            if self.epoch_base.get(rank, (None,))[0] != epoch:
                self.epoch_base[rank] = (epoch, self.done.get(rank, 0))
            rec["step"] = self.epoch_base[rank][1] + printed
        if rec["step"] is not None:
            self.done[rank] = rec["step"]
        return rec

    def parse(self, line: str, rank: int | None) -> list[dict]:
        if "%|" in line:
            label = bar_label(line)
            if label is not None:
                return self._bar(label, line, rank)
        out = []
        s = line.strip()
        if s.startswith(("[batch=", "[epoch=", "[token=", "[sample=", "[iteration=")):
            m = HEADER.match(s)
            if m:
                if rank in self.open:
                    out.append(self._close(rank))
                self.in_eval.discard(rank)
                epoch, unit, of = m.group(1), m.group(2), m.group(4)
                # the header's total: the run's steps where it counts the run's batches
                rec = record("progress", self.name, rank, None,
                             total_steps=int(of) if of and unit == "batch" and not epoch else None,
                             epoch=int(epoch) if epoch else None)
                rec["_header"] = (unit, int(m.group(3)), int(of) if of else None, int(epoch) if epoch else None)
                if CLOCK.now_ns is not None:     # read live: the batch ended as its record was printed
                    rec["drawn_ns"] = CLOCK.now_ns
                for im in _INLINE.finditer(m.group(5)):
                    v = num(im.group(2))
                    if v is not None:
                        self._add(rec, im.group(1), v)
                self.open[rank] = rec
                return out
        if s.startswith("[Eval batch="):
            m = EVAL_HEADER.match(s)
            if m:
                if rank in self.open:
                    out.append(self._close(rank))
                if rank not in self.in_eval:
                    self.in_eval.add(rank)
                    out.append(record("eval", self.name, rank, self.done.get(rank), phase="start",
                                      label=m.group(3)))
                if m.group(4):      # the evaluation's end: its metrics follow
                    self.in_eval.discard(rank)
                    self.open[rank] = record("eval", self.name, rank, self.done.get(rank),
                                             phase="result", label=m.group(3))
                return out
        if rank in self.open and (s.startswith("Train ") or s.startswith("Eval ")):
            m = ITEM.match(s)
            if m:
                v = num(m.group(3))
                if v is not None:
                    self._add(self.open[rank], m.group(2), v)
                return out
        if rank in self.open:
            out.append(self._close(rank))
        return out

    def flush(self) -> list[dict]:
        return ([self._close(rank) for rank in list(self.open)]
                + [r for rank in list(self.eval_bar) for r in self._pass_ended(rank)]
                + self._epochs_as_logged(self.bars.flush()))
