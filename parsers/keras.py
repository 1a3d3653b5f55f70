"""Keras (3, and tf.keras 2) `model.fit`: the `Epoch 2/5` line before each epoch, then its bar.

With `verbose=1` the bar is redrawn with backspaces and `\\r`, its step in the epoch first:
`  7/16 ━━━━━━━━━━━━━━━━━━━━ 0s 88ms/step - accuracy: 0.5446 - loss: 0.6980` (Keras 3; tf.keras:
`  7/16 [=====>........] - ETA: 0s - loss: 0.6980 - accuracy: 0.5446`); the epoch's last redraw
adds the validation metrics (`- val_loss: 0.6836`).  With `verbose=2` each epoch prints that
last state alone: `16/16 - 1s - 70ms/step - accuracy: 0.5469 - loss: 0.6923 - val_loss: ...`.

The metrics are the epoch's running means, and `ms/step` its mean step time so far
(`step_avg_ms`); Keras prints no step's own time.  A bar that starts again without an `Epoch`
line is `evaluate`'s (or `predict`'s): its last state is one eval record."""
from __future__ import annotations

from .base import OWN_BAR, Parser, Pattern, drawn, hms_to_s, mark_drawn, num, parsed, record
from .kv import normalise

EPOCH = Pattern(r"\s*+Epoch (\d{1,9}+)/(\d{1,9}+)\s*+")
HEAD = Pattern(r"\s*+(\d{1,12}+)/(\d{1,12}+|Unknown)( ++(?:[\u2501\u2500]{1,400}+|\[[=>.]{0,400}+\]))?"
               r"(?= |$)(.{0,4000}+)")
_STEP_TIME = Pattern(r"(?:(\d[\d:]{0,12}+)s? )?(\d++)(s|ms|us)/step")
_MS = {"s": 1000.0, "ms": 1.0, "us": 0.001}
_EPOCH = frozenset({"step", "epoch", "metrics"})
"""What an epoch's validation record sets itself (see `parsed`)."""
_OWN_BAR = OWN_BAR | {"epoch", "iter_in_epoch"}
"""What a training bar's head and epoch give: a metric logged as `total` gives way."""


def read_bar(segment: str) -> dict | None:
    """One redraw (or `verbose=2` line) as {n, total, items, step_avg_ms, time_s}; None when the
    segment is no Keras bar: a `N/T` head, then a bar, a `/step` time or an `ETA:`."""
    m = HEAD.fullmatch(segment)
    if m is None:
        return None
    tail = m.group(4)
    if m.group(3) is None and "/step" not in tail and "ETA: " not in tail:
        return None
    items: list = []
    bar: dict = {"n": int(m.group(1)), "total": None if m.group(2) == "Unknown" else int(m.group(2)),
                 "items": items, "step_avg_ms": None, "time_s": None}
    for part in tail.split(" - ")[:64]:
        part = part.strip()
        key, sep, value = part.partition(": ")
        if sep:
            if key != "ETA":
                items.append((key, value, None))
            continue
        t = _STEP_TIME.fullmatch(part)
        if t is not None:
            v = num(t.group(2))
            bar["step_avg_ms"] = None if v is None else round(v * _MS[t.group(3)], 6)
            if t.group(1):
                bar["time_s"] = hms_to_s(t.group(1))
        elif part[-1:] == "s" and part[:-1].replace(":", "").isdigit():
            bar["time_s"] = hms_to_s(part[:-1])     # verbose=2: the epoch's time
    return bar


class KerasParser(Parser):
    name = "keras"
    detect_reads = True     # an `Epoch N/M` line (see `detect`)

    def __init__(self) -> None:
        self.epoch: dict = {}
        """rank -> (epoch, epochs) of the `Epoch` line its bar runs under; none for evaluate's"""
        self.held: dict = {}
        """rank -> the bar's latest redraw, not yet given: its step may be redrawn again"""
        self.base: dict = {}
        """rank -> the steps before the epoch, where the bar's total is `Unknown`"""
        self.last_step: dict = {}
        self.header: tuple | None = None
        """An `Epoch` line seen before the stream was claimed (see `detect`)."""

    def detect(self, line: str) -> bool:
        """A Keras bar.  An `Epoch N/M` line alone does not claim the stream (loops of one's own
        print it too), but is kept: the bar that comes next runs under it."""
        if "Epoch " in line:
            m = EPOCH.fullmatch(line)
            if m is not None:
                self.header = (int(m.group(1)), int(m.group(2)))
                return False
        return ("/step" in line or "ETA: " in line or "\u2501" in line) and read_bar(line) is not None

    def parse(self, line: str, rank: int | None) -> list[dict]:
        if "Epoch " in line:
            m = EPOCH.fullmatch(line)
            if m is not None:
                done = self._give(rank)
                self.epoch[rank] = (int(m.group(1)), int(m.group(2)))
                self.base[rank] = self.last_step.get(rank, 0)
                return done
        bar = read_bar(line)
        if bar is None:
            return []
        if self.header is not None:
            self.epoch.setdefault(rank, self.header)
            self.header = None
        held = self.held.get(rank)
        out: list = []
        if held is not None and bar["n"] < held["n"]:
            out = self._give(rank)          # started again with no `Epoch` line: evaluate's bar
            self.epoch.pop(rank, None)
        elif held is not None and bar["n"] != held["n"] and rank in self.epoch:
            out = self._give(rank)          # fit's bar moved on: its step is done
        mark_drawn(bar, held)
        self.held[rank] = bar
        return out

    def place_events(self, recs: list[dict], rank) -> list[dict]:
        """ModelCheckpoint writes at the end of an epoch, while its last step is still held
        (its redraw with the validation metrics comes after): the events take that step."""
        bar, epochs = self.held.get(rank), self.epoch.get(rank)
        if bar is not None and epochs is not None and bar["total"] is not None:
            for r in recs:
                r["step"] = self._step_of(rank, bar, epochs[0])
        return recs

    def flush(self) -> list[dict]:
        return [r for rank in list(self.held) for r in self._give(rank)]

    def _give(self, rank) -> list[dict]:
        bar = self.held.pop(rank, None)
        if bar is None:
            return []
        fields, extra = _fields([i for i in bar["items"] if not i[0].startswith("val_")])
        if bar["step_avg_ms"] is not None:
            fields["step_avg_ms"] = bar["step_avg_ms"]
        epochs = self.epoch.get(rank)
        if epochs is None:
            if "loss" not in fields and not extra:
                return []           # `predict`'s bar: no metrics
            return [record("eval", self.name, rank, self.last_step.get(rank), phase="evaluate", **fields,
                           **({"metrics": extra} if extra else {}))]
        return self._step(rank, bar, epochs, fields, extra)

    def _step_of(self, rank, bar: dict, epoch: int) -> int:
        """The bar's step counted across epochs: from its epoch and total, or, where the total
        is `Unknown`, on from the steps before the epoch."""
        if bar["total"] is not None:
            return (epoch - 1) * bar["total"] + bar["n"]
        return self.base.get(rank, 0) + bar["n"]

    def _step(self, rank, bar: dict, epochs: tuple, fields: dict, extra: dict) -> list[dict]:
        """A training step, and the validation at the end of its epoch (`val_` metrics)."""
        (epoch, epoch_count), n, total = epochs, bar["n"], bar["total"]
        step = self._step_of(rank, bar, epoch)
        if total is None:
            fields["step_inferred"] = True
        self.last_step[rank] = step
        if bar["time_s"] is not None and n == total:
            fields["epoch_time_s"] = bar["time_s"]     # the epoch's, from its bar's start
        out = [record("progress", self.name, rank, step, epoch=epoch, iter_in_epoch=n,
                      total_steps=epoch_count * total if total is not None else None, **parsed(fields, _OWN_BAR),
                      **({"metrics": extra} if extra else {}), **drawn(bar))]
        val, val_extra = _fields([(k[4:], v, u) for k, v, u in bar["items"] if k.startswith("val_")])
        if val or val_extra:
            out.append(record("eval", self.name, rank, step, phase="validation", epoch=epoch, **parsed(val, _EPOCH),
                              **({"metrics": val_extra} if val_extra else {})))
        return out


def _fields(items: list) -> tuple[dict, dict]:
    """Record fields and extra metrics of a bar's `name: value` items (no step or epoch there:
    the bar's own head gives those)."""
    fields, extra = normalise(items)
    fields.pop("step", None)
    fields.pop("epoch", None)
    return fields, dict(list(extra.items())[:24])
