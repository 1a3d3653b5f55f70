"""MindSpore's `Model.train` callbacks, and the rank its cluster gives a worker.

LossMonitor prints `epoch: 2 step: 100, loss is 2.302` (the step within its epoch, which the
generic parser runs on over the epochs) as each step ends, flushed: read live, its line says when
its step ended (`drawn_ns`, as a bar's redraw does).  TimeMonitor prints at each epoch's end
`Train epoch time: 802.759 ms, per step time: 66.897 ms` (MindSpore 1.x without `Train`, and
`(data time: 1.234 ms)` after it with `data_time=True`): the epoch's mean step, given as a timing
record of the epoch's last step that stands for no step's own time (`mean_step_time_ms`).  Under
dataset sinking an 'epoch' is one sink of `sink_size` steps, of which LossMonitor prints the last.

msrun's workers (`worker_N.log` in its `--log_dir`) log the rank that the cluster gave them, in
MindSpore's own log at its default level: `[WARNING] DISTRIBUTED(...) ... PostProcess] This node 1
rank id: 1`.  That is the file's rank where its path names none (`stated_rank`)."""
from __future__ import annotations

import re

from .base import Pattern, num, record

LOSS_MONITOR = "loss is "
TIME_MONITOR = Pattern(r"(?:^|\b(Train|Eval) )epoch time: ([0-9.]{1,20}+) ms, per step time: ([0-9.]{1,20}+) ms"
                       r"(?: \(data time: ([0-9.]{1,20}+) ms\))?")
RANK_ID = re.compile(rb"\] This node [0-9]{1,7} rank id: ([0-9]{1,7})\b")
RANK_ID_MARK = b" rank id: "


def time_monitor(line: str, rank, step: int | None) -> list[dict] | None:
    """TimeMonitor's line as a timing record of `step`, the last step LossMonitor printed (None
    where none was: the record is still the epoch's), an evaluation's as its duration; None for
    another line."""
    m = TIME_MONITOR.search(line)
    if m is None:
        return None
    mode, epoch_ms, step_ms, data_ms = m.groups()
    if mode == "Eval":
        return [record("eval", "mindspore", rank, step, phase="result", duration_ms=num(epoch_ms))]
    return [record("timing", "mindspore", rank, step, source="time_monitor", epoch_time_ms=num(epoch_ms),
                   mean_step_time_ms=num(step_ms), data_time_ms=num(data_ms))]


def stated_rank(raw: bytes) -> int | None:
    """The rank a MindSpore worker's line says the cluster gave it; None for any other line."""
    if RANK_ID_MARK not in raw:
        return None
    m = RANK_ID.search(raw)
    return int(m.group(1)) if m is not None else None
