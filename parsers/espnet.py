"""ESPnet2's trainer (speech recognition, synthesis, enhancement), and FunASR's, its fork.  Every
`log_interval` batches (by default an epoch's twentieth, at least 10) its reporter logs the means
of the interval, behind ESPnet's logger prefix:

    [host] 2023-10-27 13:37:46,484 (trainer:753) INFO: 1epoch:train:1-4025batch: iter_time=1.924e-04,
    forward_time=0.040, loss_ctc=174.564, loss=153.944, backward_time=0.049, grad_norm=156.442,
    clip=100.000, loss_scale=1.000, optim_step_time=0.015, optim0_lr0=1.007e-05, train_time=0.127

FunASR adds the run's update count: `2epoch:train:1-50batch:50num_updates: iter_time=...`.  After
each epoch's validation: `1epoch results: [train] iter_time=..., total_count=4025, ...,
[valid] loss=..., acc=..., cer=..., time=..., total_count=...`.

The times are seconds a batch: `iter_time` its wait for the data loader (the input lane),
`forward_time`, `backward_time` and `optim_step_time` its compute (under DDP the backward also
waits for the gradients' all-reduce, which ESPnet does not time apart), `train_time` the whole
step.  Under DDP (the prefix names the rank of the world, `[host:0/2]`) every batch begins with
an all-reduce that no timer holds (whether any rank's data ran out): there a rank waits for the
others' data loaders, and the step's time beyond its timers is that wait (communication).
The batch numbers count within the epoch: a record's step is the interval's last batch after
the batches of the epochs before, which the results line counts (`total_count`, all the
batches trained so far).  FunASR's update count is the step where it prints one.

A log that begins in a later epoch (`--resume`: `The training was resumed using .../checkpoint.pth`)
has no count of the epochs before: its first epoch's records wait for that epoch's results line,
and count its batches as the run's mean epoch (`total_count` / epoch, where that divides; the
last batch printed, where not); the steps say `step_inferred`, and a restart comes before them,
after the epochs before.
"""
from __future__ import annotations

from .base import Parser, Pattern, num, record, seconds_to_ms

INTERVAL = Pattern(r"(\d{1,6}+)epoch:(train|[\w.-]{1,40}+):(\d{1,12}+)-(\d{1,12}+)batch:"
                   r"(?:(\d{1,15}+)num_updates:)? (.{1,8000}+)")
RESULTS = Pattern(r"(\d{1,6}+)epoch results: (\[.{1,8000}+)")
_SECTION = Pattern(r"\[([\w.-]{1,40}+)\] ")
_TIMERS = {"iter_time": "data", "forward_time": "forward", "backward_time": "backward",
           "optim_step_time": "optimizer"}
_FIELDS = frozenset(("loss", "grad_norm", "loss_scale"))
"""Values that are record fields under their own names."""
_NOT_METRICS = {"time", "total_count", "train_time", *_TIMERS}
_METRICS = 32
_WORLD = Pattern(r"\[[^\]\s:]{0,255}+:\d{1,7}+/(\d{1,7}+)\] ")
"""ESPnet's logger prefix under DDP: `[host:rank/world] `."""
RESUMED = "The training was resumed using "
_PAIR = Pattern(r"([A-Za-z_][\w./-]{0,80}+)=([-+]?+(?:\d++(?:\.\d*+)?+(?:[eE][-+]?+\d++)?+|nan|inf))")
"""One `name=value`.  Its number is the reporter's (`%.3f`, `%.3e`): the next name may follow it
straight, with no `, ` between (the reporter leaves it out before the Nth value of a line whose
interval's Nth batch it ends: an interval of fewer batches than it prints values)."""


def _values(text: str) -> dict[str, float]:
    """`name=value, name=value, ...` -> the numbers (`time=5 minutes and 12.3 seconds` gives 5)."""
    out: dict = {}
    for m in _PAIR.finditer(text):
        v = num(m.group(2))
        if v is not None:
            out[m.group(1)] = v
    return out


def _distributed(line: str) -> bool:
    """Does the line's logger prefix name a world of more than one rank?"""
    m = _WORLD.match(line) if line[:1] == "[" else None
    return m is not None and int(m.group(1)) > 1


class EspnetParser(Parser):
    name = "espnet"

    def __init__(self) -> None:
        self.epochs: dict = {}
        """rank -> [epoch, the batches of the epochs before it, the last batch it printed, whether
        that count was estimated]"""
        self.trained: dict = {}
        """rank -> {epoch: the batches trained through it, as its results line counts them}"""
        self.held: dict = {}
        """rank -> (epoch, its records) of a log that begins in that epoch, not the first"""
        self.resumed: dict = {}
        """rank -> the checkpoint a resumed run loaded, until its first epoch's steps are known"""

    def detect(self, line: str) -> bool:
        if "epoch" in line:
            return ("batch:" in line and INTERVAL.search(line) is not None) or "epoch results: [" in line
        return RESUMED in line

    def parse(self, line: str, rank: int | None) -> list[dict]:
        if "epoch results: " in line:
            m = RESULTS.search(line)
            return self._results(m, rank) if m is not None else []
        if RESUMED in line:
            self.resumed[rank] = line[line.find(RESUMED) + len(RESUMED):].strip()[:500]
            return []
        if "batch:" not in line:
            return []
        m = INTERVAL.search(line)
        if m is None or m.group(2) != "train":
            return []
        epoch, end = int(m.group(1)), int(m.group(4))
        rec = self._interval(m.group(6), rank, epoch, end, _distributed(line))
        if rec is None:
            return []
        if m.group(5) is not None:      # FunASR's count of updates
            rec["step"] = int(m.group(5))
            return [rec]
        out: list = []
        held = self.held.get(rank)
        if held is not None:
            if held[0] == epoch:
                held[1].append(rec)
                return []
            out = self._release(rank, None)     # (its results line never came)
        state = self.epochs.get(rank)
        if state is None and epoch > 1 and epoch - 1 not in self.trained.get(rank, {}):
            self.held[rank] = (epoch, [rec])
            return out
        if state is None or state[0] != epoch:
            trained = self.trained.get(rank, {})
            if epoch - 1 in trained:
                out += self._begin(rank, epoch, trained[epoch - 1], False)
            else:
                out += self._begin(rank, epoch, state[1] + state[2] if state else 0, state is not None)
        state = self.epochs[rank]
        state[2] = end
        rec["step"] = state[1] + end
        if state[3]:
            rec["step_inferred"] = True
        out.append(rec)
        return out

    def flush(self) -> list[dict]:
        out: list = []
        for rank in list(self.held):
            out += self._release(rank, None)
        return out

    def _interval(self, text: str, rank, epoch: int, end: int, distributed: bool) -> dict | None:
        """The record of an interval's line, its step not yet set."""
        values = _values(text)
        if not values:
            return None
        fields: dict = {}
        timers = {name: seconds_to_ms(values[key]) for key, name in _TIMERS.items() if key in values}
        if timers:
            fields["timers_ms"] = timers
            lanes = {}
            if "data" in timers:
                lanes["input"] = timers["data"]
            compute = [timers[k] for k in ("forward", "backward", "optimizer") if k in timers]
            if compute:
                lanes["compute"] = round(sum(compute), 6)
            fields["lanes_ms"] = lanes
        if "train_time" in values:
            fields["step_time_ms"] = seconds_to_ms(values["train_time"])
            waited = fields["step_time_ms"] - sum(timers.values()) if distributed and timers else 0
            if waited > 0:
                fields["lanes_ms"]["communication"] = round(waited, 3)
        metrics: dict = {}
        for key, v in values.items():
            if key in _FIELDS:
                fields[key] = v
            elif key == "lr" or (key.startswith(("optim0_lr", "lr_")) and key[-1:].isdigit()):
                fields.setdefault("lr", v)
            elif key not in _NOT_METRICS and len(metrics) < _METRICS:
                metrics[key] = v
        return record("progress", self.name, rank, None, epoch=epoch, iter_in_epoch=end, **fields,
                      metrics=metrics or None)

    def _begin(self, rank, epoch: int, before: int, estimated: bool) -> list[dict]:
        """Start counting `epoch`'s batches after `before`; the restart of a resumed run there."""
        self.epochs[rank] = [epoch, before, 0, estimated]
        path = self.resumed.pop(rank, None)
        if path is None:
            return []
        return [record("restart", self.name, rank, before, path=path, step_inferred=estimated or None)]

    def _release(self, rank, trained_through: int | None) -> list[dict]:
        """The held records of a log's first epoch, its batches counted as the run's mean epoch:
        `trained_through` / epoch where its results line gave that and it divides, else the last
        batch printed."""
        epoch, recs = self.held.pop(rank)
        last = recs[-1]["iter_in_epoch"]
        if trained_through is not None and trained_through % epoch == 0:
            before = trained_through - trained_through // epoch
        elif trained_through is not None:
            before = trained_through - last
        else:
            before = (epoch - 1) * last
        out = self._begin(rank, epoch, before, True)
        self.epochs[rank][2] = last
        for rec in recs:
            rec["step"] = before + rec["iter_in_epoch"]
            rec["step_inferred"] = True
        return out + recs

    def _results(self, m, rank) -> list[dict]:
        """The epoch's results: how many batches were trained through it, and its validation's
        metrics as an evaluation after its last step."""
        epoch = int(m.group(1))
        text = m.group(2)
        sections: dict = {}
        starts = list(_SECTION.finditer(text))
        for i, s in enumerate(starts):
            end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
            sections[s.group(1)] = _values(text[s.end():end])
        total = sections.get("train", {}).get("total_count")
        step = int(total) if total is not None and total == int(total) else None
        out: list = []
        if step is not None:
            self.trained.setdefault(rank, {})[epoch] = step
            held = self.held.get(rank)
            if held is not None and held[0] == epoch:
                out = self._release(rank, step)
        valid = {k: v for k, v in sections.get("valid", {}).items() if k not in ("time", "total_count")}
        if valid:
            out.append(record("eval", self.name, rank, step, phase="result", epoch=epoch, metrics=valid))
        return out
