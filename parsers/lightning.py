"""PyTorch Lightning progress bars (and NeMo, which adds DLLogger records on the same stream)."""
from __future__ import annotations

from .base import (EVAL_WORDS, OWN_BAR, OWN_TOTAL, BarTracker, Parser, Pattern, drawn, num, parse_bar,
                   parse_rich_bar, parsed, record, rich_metrics, timers_to_lanes, to_ms)
from .kv import normalise
from .megatron import TimerBlock, read_timer_line, timer_records

EPOCH = Pattern(r"Epoch (\d++)")
DLL = Pattern(r"DLL \d{4}+-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d++)? - (\d++|PARAMETER|\(\)) (.{0,4000}+)")
_DLL_ITEM = Pattern(r"\s*+([A-Za-z_][\w/ .-]{0,80}?)\s*+:\s*+(-?[\d.]++(?:[eE][-+]?\d++)?|nan|inf)\s*+")
_TIMING = Pattern(r"(\w+?)_timing in s")
# What a training bar (its count, its label's epoch), an evaluation's bar and NeMo's printed `Training
# epoch N, iteration i/n` say themselves (see `parsed`): the same key among the values logged after
# them gives way.
_OWN_BAR = OWN_BAR | {"epoch", "iter_in_epoch", "iters_per_epoch"}
_OWN_EVAL_BAR = frozenset({"phase", "batches", "total_batches"})
_OWN_EPOCH_BATCH = frozenset({"epoch", "iter_in_epoch"})


def postfix_fields(post: dict) -> dict:
    items: list[tuple] = []
    for k, v in post.items():
        if k == "v_num":
            continue
        if k.endswith(" in s") or k.endswith("_timing"):
            ms = to_ms(num(v), "s")
            if ms is not None and "train_step_timing" in k:
                items.append(("step_time_ms", str(ms), "ms"))
            continue
        items.append((k, v, None))
    fields, extra = normalise(items)
    fields.pop("step", None)
    extra.pop("global_step", None)
    if "consumed_samples" in extra:
        fields["consumed_samples"] = extra.pop("consumed_samples")
    if extra:       # what else the module logs to the bar: `val_loss`, `train_acc`, ...
        fields["metrics"] = dict(list(extra.items())[:24])
    return fields


LIGHTNINGS_LABEL = Pattern(r"Epoch \d{1,9}+:")
"""Lightning's tqdm bar's label, `Epoch N:`: no count of epochs (`/M`) nor a loss after it."""


class LightningParser(Parser):
    name = "lightning"

    def __init__(self) -> None:
        self.bars = BarTracker()
        self.dll_seen = False
        self.total: dict = {}
        self.rich_tail: dict = {}
        """rank -> the key of the Rich bar its last line drew (see `_wrapped_metrics`)."""
        self.epochs_before: dict = {}
        """rank -> (epoch, the steps of the epochs before it, the steps it runs) of its training
        bar (see `_count_on`)"""

    def detect(self, line: str) -> bool:
        return self.owns(line) or (
            "GPU available" in line and "lightning" in line.lower()) or "TPU available: " in line

    def owns(self, line: str) -> bool:
        """A training bar's redraw: most give no record (the step is given when the bar moves
        on), and no other parser reads them instead (NeMo's and Lightning's would take the
        stream from each other at every redraw).  Lightning's tqdm bar is `Epoch 3: ..%|`; a
        training loop's own `Epoch 3/10: ..%|` or `Epoch 3 loss 2.1: ..%|` is no Lightning's
        (`loopbars.py` reads it)."""
        if "%|" in line or "/? [" in line:     # (`8/?`: a loader with no length)
            return "Sanity Checking" in line or (
                "Epoch " in line and LIGHTNINGS_LABEL.search(line) is not None)
        return ("Epoch " in line or "Sanity Checking" in line) and "it/s" in line and "\u2022" in line

    @staticmethod
    def _step(bar: dict) -> int:
        """The training bar's step: its batch, after the steps of the epochs before
        (`_count_on`)."""
        return bar.get("before", 0) + bar["n"]

    def _count_on(self, rank, bar: dict) -> None:
        """Note on the bar the steps of the epochs before its own.  Each epoch runs the steps
        its bar counts to: its total, or where it has none (a loader with no length) the
        furthest count it drew (Lightning resets the bar to 0 before it relabels it with the
        next epoch).  An epoch's total is not always the one before's: where `max_steps` ends
        the run inside an epoch, that epoch's bar counts only the steps left (`5/5` after
        epochs of 8).  The epochs before the first one seen (a log that starts late), and any
        skipped, ran as many steps as the epoch seen after them."""
        if bar.get("by_global_step"):
            return
        epoch, total, n = bar["epoch"], bar["total"], bar["n"]
        seen = self.epochs_before.get(rank)
        if seen is None or epoch < seen[0]:     # the first bar seen, or a new `fit`'s
            before, steps = epoch * (total or 0), total or n
        elif epoch == seen[0]:
            before, steps = seen[1], total or max(seen[2], n)
        else:
            last_epoch, last_before, last_steps = seen
            before = last_before + last_steps + (epoch - last_epoch - 1) * (total or last_steps)
            steps = total or n
        self.epochs_before[rank] = (epoch, before, steps)
        bar["before"] = before

    @staticmethod
    def _by_global_step(bar: dict) -> None:
        """A bar whose metrics name their step (NeMo's: `global_step=13.00`, the trainer's count
        of steps before this one) is that step's, `global_step + 1`: its count runs one or two
        redraws ahead of the metrics, and a redraw after a validation repeats the last.
        Keyed by the metrics' step, each step's record holds its own metrics, and is given once."""
        value = num(bar["post"].get("global_step", ""))
        if value is not None and value >= 0 and value == int(value):
            counted, bar["n"], bar["by_global_step"] = bar["n"], int(value) + 1, True
            if counted >= bar["n"]:         # a count over the run (NeMo's), not one per epoch
                bar["batches_done"] = counted

    def _bar_record(self, key, bar: dict) -> dict | None:
        rank, kind = key[0], key[1]
        fields = postfix_fields(bar["post"])
        if "it_per_s" in bar:
            fields["it_per_s"] = bar["it_per_s"]
        if kind == "eval":
            # at the step the training bar counts (its metrics may lag it), which ran it
            train = self.bars.peek((rank, "train", 0))
            step = None if train is None else train.get("batches_done") or self._step(train)
            return record("eval", self.name, rank, step,
                          phase=bar["desc"] or "validation", batches=bar["n"], total_batches=bar["total"],
                          **parsed(fields, _OWN_EVAL_BAR))
        if self.dll_seen:
            return None        # NeMo: the DLLogger line of the same step is the precise record
        if bar.get("by_global_step"):       # NeMo's bar counts the run's steps
            counts = {"total_steps": bar["total"]}
        else:                               # Lightning's, the epoch's (`Epoch 1: 5/5` after 8: see `_count_on`)
            counts = {"iter_in_epoch": bar["n"], "iters_per_epoch": bar["total"]}
        return record("progress", self.name, rank, self._step(bar), **counts,
                      epoch=bar.get("epoch"), elapsed_s=bar["elapsed_s"], **parsed(fields, _OWN_BAR), **drawn(bar))

    def _eval_bar(self, key, bar: dict, out: list) -> None:
        """Hold an evaluation bar until its pass ends: one record per pass, not per batch.  A
        pass ends when the same loader's bar starts again or the training bar moves on."""
        held = self.bars.peek(key)
        if held is not None and bar["n"] < held["n"]:
            r = self._bar_record(key, held)
            if r:
                out.append(r)
        self.bars.held[key] = bar

    def _passes_ended(self, rank, out: list) -> None:
        for key in [k for k in self.bars.held if k[0] == rank and k[1] == "eval"]:
            bar = self.bars.held.pop(key)
            if bar["n"] > 0:
                r = self._bar_record(key, bar)
                if r:
                    out.append(r)

    @staticmethod
    def _kind(bar: dict) -> str | None:
        """An evaluation's bar, the training bar (labelled `Epoch N`), or None: another loop's
        (a dataset's `Map:`, a download's), which draws no step.  Notes the label's epoch on
        the bar."""
        em = EPOCH.search(bar["desc"])
        bar["epoch"] = int(em.group(1)) if em else None
        if any(w in bar["desc"] for w in EVAL_WORDS):
            return "eval"
        return "train" if em is not None else None

    def parse(self, line: str, rank: int | None) -> list[dict]:
        out: list = []
        dll_at = line.find("DLL ")
        bar_part = line if dll_at < 0 else line[:dll_at]
        bar = None
        rich = "%|" not in bar_part and "/? [" not in bar_part
        if not rich:
            bar = parse_bar(bar_part)
        elif "it/s" in bar_part:
            bar = parse_rich_bar(bar_part)
        wrapped_after = self.rich_tail.pop(rank, None)
        kind = None if bar is None else self._kind(bar)
        if bar is not None and kind is not None:
            if kind == "train" and bar["total"]:
                self.total[rank] = bar["total"]
            key = (rank, kind, bar["total"] if kind == "eval" else 0)
            if kind == "eval":
                self._eval_bar(key, bar, out)
            else:
                self._passes_ended(rank, out)
                self._by_global_step(bar)
                self._count_on(rank, bar)
                done = self.bars.update(key, bar)
                if done is not None:
                    r = self._bar_record(key, done)
                    if r:
                        out.append(r)
            if rich:        # its metrics may wrap onto the next line
                self.rich_tail[rank] = key
        elif wrapped_after is not None and bar_part[:1] == " ":
            self._wrapped_metrics(wrapped_after, bar_part)
        if dll_at >= 0:
            m = DLL.search(line, dll_at)
            if m and m.group(1).isdigit():
                out.extend(self._dll(int(m.group(1)), m.group(2), rank))
        return out

    def _wrapped_metrics(self, key, text: str) -> None:
        """A line of nothing but `name: value` items right after a Rich bar is the rest of its
        metrics column, wrapped by the console's width: they belong to that redraw."""
        bar = self.bars.peek(key)
        items = text.split()
        if bar is None or len(items) % 2 or not all(k[-1:] == ":" for k in items[::2]):
            return
        more = rich_metrics(text)
        if len(more) * 2 == len(items):
            bar["post"].update(more)

    def _dll(self, step0: int, text: str, rank) -> list[dict]:
        self.dll_seen = True
        items = []
        timers = {}
        for im in _DLL_ITEM.finditer(text):
            key, val = im.group(1).strip(), im.group(2)
            tm = _TIMING.match(key)
            if tm:
                ms = to_ms(num(val), "s")
                if ms is not None:
                    timers[tm.group(1)] = ms
                continue
            items.append((key, val, None))
        fields, extra = normalise(items)
        fields.pop("step", None)
        if "train_step" in timers:
            fields["step_time_ms"] = timers["train_step"]
        if "consumed_samples" in extra:
            fields["consumed_samples"] = extra["consumed_samples"]
        if timers:
            fields["timers_ms"] = timers
        kind = "eval" if any(k.startswith("val") for k in extra) and "loss" not in fields else "progress"
        return [record(kind, "nemo" if self.name in ("lightning", "nemo") else self.name, rank, step0 + 1,
                       total_steps=self.total.get(rank), **parsed(fields, OWN_TOTAL))]

    def flush(self) -> list[dict]:
        out = []
        for key, bar in list(self.bars.held.items()):
            if bar["n"] > 0:
                r = self._bar_record(key, bar)
                if r:
                    out.append(r)
        self.bars.held.clear()
        return out


# NeMo 2.0's progress printer: `Training epoch 0, iteration 28/99 | lr: 5.6e-06 | global_step: 28 |
# reduced_train_loss: 2.778 | train_step_timing in s: 0.189 | consumed_samples: 928 | val_loss: ...`
PRINTER = Pattern(r"Training epoch (\d++), iteration (\d++)/(\d++)(.{0,8000}+)")
# ... and of each validation batch: `Validation: iteration 2/2`; the last ends the pass.
PRINTER_VAL = Pattern(r"Validation: iteration (\d++)/(\d++)\s*+$")
_COUNTS = ("consumed_samples", "global_batch_size")
SAVE_STEP = Pattern(r"(?:Iteration: |global step )(\d++)")
"""The step NeMo 2's save messages name: the trainer's `global_step` (`Global Checkpoint Save :
Rank: 0 : Iteration: 9 : ...`, Lightning's `Epoch 0, global step 9: ... saving model to ...`)."""


class NemoParser(LightningParser):
    name = "nemo"

    def __init__(self) -> None:
        super().__init__()
        self.printed_step: dict = {}
        """rank -> the step of its printer's last training line."""
        self.max_steps: dict = {}
        """rank -> the run's last step, as its printer names it (`iteration 13/23`: of 24)."""
        self.printed_time: dict = {}
        """rank -> the step time of its printer's last training line"""
        self.open: dict = {}
        """rank -> the Megatron timer block being read (`MegatronStrategy(megatron_log_level=2)`
        prints one after each of its printer's training lines)"""

    def detect(self, line: str) -> bool:
        return line.startswith("[NeMo ") or line.startswith("DLL ") or "reduced_train_loss" in line

    def owns(self, line: str) -> bool:
        """Also NeMo's own log lines: one that names another framework (`[NeMo W ...]
        .../lightning/...: GPU available but not used`) does not hand the stream to it."""
        return line.startswith("[NeMo ") or super().owns(line) or TimerBlock.opened_by(line) is not None

    def parse(self, line: str, rank: int | None) -> list[dict]:
        recs = read_timer_line(self.open, line, rank, self._close_timers)
        if recs is not None:
            return recs
        at = line.find("Training epoch ")
        if at >= 0:
            m = PRINTER.match(line, at)
            if m:
                return self._printer(m, rank)
        if line.startswith("Validation: iteration "):
            m = PRINTER_VAL.match(line)
            if m is None or m.group(1) != m.group(2):
                return []
            return [record("eval", self.name, rank, self.printed_step.get(rank), phase="validation",
                           batches=int(m.group(1)))]
        return super().parse(line, rank)

    def place_events(self, recs: list[dict], rank) -> list[dict]:
        """A save inside a step (its validation's) names the trainer's `global_step`, the steps
        done before that one (`Iteration: 9` in the 10th step); the save after the last step
        names the steps done (`Iteration: 24` of 24).  Each save takes the step it ran in, as
        this parser's progress records count them."""
        last = self.max_steps.get(rank) or self.total.get(rank)
        for r in recs:
            if r["kind"] != "checkpoint" or r.get("action") != "save" or r["step"] is None:
                continue
            m = SAVE_STEP.search(r.get("message") or "")
            if m is not None and int(m.group(1)) == r["step"] != last:
                r["step"] += 1
        return recs

    def _close_timers(self, rank) -> list[dict]:
        """The Megatron timers printed after a training line, with that line's step and time.
        NeMo's step fetches its batch inside Megatron's `forward-compute` (and so inside
        `forward-backward`), with no `batch-generator` timer: those two give no lane, since a
        slow batch would read as slow compute; the backward, the gradient sync and the optimizer
        do."""
        block = self.open.pop(rank)
        step = self.printed_step.get(rank)
        if step is None:
            return []
        lanes = timers_to_lanes({k: v for k, v in block.timers.items()
                                 if k not in ("forward-backward", "forward-compute")})
        return timer_records(self.name, rank, step, block.timers, self.printed_time.get(rank), lanes=lanes,
                             timers_min_ms=block.mins or None, lanes_across_ranks=True)

    def flush(self) -> list[dict]:
        return [r for rank in list(self.open) for r in self._close_timers(rank)] + super().flush()

    def take_over(self, before) -> None:
        """NeMo's bars are Lightning's: a stream that Lightning's parser read until NeMo's first
        own line hands its held bars on, so that their steps are given once, by this parser."""
        if type(before) is LightningParser:
            self.bars, self.total, self.rich_tail = before.bars, before.total, before.rich_tail
            self.epochs_before = before.epochs_before
            self.dll_seen = self.dll_seen or before.dll_seen
            before.bars, before.total, before.rich_tail, before.epochs_before = BarTracker(), {}, {}, {}

    def _printer(self, m, rank) -> list[dict]:
        """The step is `global_step + 1` where it is printed (the iteration counts from 0 in
        each epoch): `global_step` is the trainer's count of the steps before this one, the
        number that NeMo's DLLogger line and bar print for the same step (see `_dll`,
        `_by_global_step`)."""
        items = []
        for part in m.group(4).split("|", 64)[1:64]:
            key, sep, value = part.rpartition(":")
            if sep:
                items.append((key.strip(), value.strip(), None))
        fields, extra = normalise(items)
        step = fields.pop("step", None)
        for name in _COUNTS:
            if name in extra:
                fields[name] = int(extra.pop(name))
        if extra:
            fields["metrics"] = extra
        step = int(m.group(2)) if step is None else step + 1
        self.printed_step[rank] = step
        self.max_steps[rank] = int(m.group(3)) + 1
        self.printed_time[rank] = fields.get("step_time_ms")
        return [record("progress", self.name, rank, step,
                       epoch=int(m.group(1)), iter_in_epoch=int(m.group(2)), **parsed(fields, _OWN_EPOCH_BATCH))]
