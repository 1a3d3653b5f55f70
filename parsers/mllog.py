"""MLPerf's logger (mlcommons/logging's `mllog`), which every MLPerf Training submission prints,
whatever its framework: one JSON object a line behind `:::MLLOG `, with the Unix time in ms.

    :::MLLOG {"namespace": "", "time_ms": 1593112761379, "event_type": "POINT_IN_TIME",
              "key": "eval_accuracy", "value": 0.1949, "metadata": {"file": "train.py",
              "lineno": 562, "epoch_num": 1}}

Read: `eval_start` (an evaluation begins), `eval_accuracy` (its result, the benchmark's quality
metric), `tracked_stats` (since v3.0, every few steps: `throughput`, and in some benchmarks
`loss` and `lr`), and `run_stop`, whose `status` says whether the run reached its quality target
(`success`) or gave up (`aborted`): an evaluation's end.  The rest (configuration, `init_*`,
`run_start`, `block_*`, `epoch_*`) gives no record.  An evaluation comes after the step the stream's other lines had reached (its
metadata's counts ride along, its `step` as `logged_step`); where they give none, and for `tracked_stats`, the step is the
metadata's `step` (or the library's constant, `step_num`), else `samples_count`, else
`epoch_num` (`step_from` says which, where not a step: benchmarks count in samples or epochs,
and BERT's `epoch_num` counts samples).  Each record keeps the line's own time (`log_time_s`),
so `ingest` dates it.
"""
from __future__ import annotations

from .base import num, record
from .structured import json_object

TAG = ":::MLLOG "
_COUNTS = ("step", "step_num", "samples_count", "epoch_num")
_COUNT_FIELDS = {"step": "logged_step", "step_num": "logged_step"}
"""The metadata's counts as an evaluation's fields, where the record's step is the stream's."""


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def read(line: str, rank, stream_step) -> list[dict] | None:
    """The records of an `:::MLLOG` line (`line` starts with TAG), `stream_step` the step the
    stream's other lines had reached (None where they gave none); None where its object cannot
    be read (cut short, or not JSON)."""
    obj = json_object(line[len(TAG):])
    if obj is None:
        return None
    key = obj.get("key")
    if key not in ("eval_start", "eval_accuracy", "tracked_stats", "run_stop"):
        return []
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    counts = {c: meta[c] for c in _COUNTS if _number(meta.get(c)) and isinstance(meta[c], int)}
    fields: dict = {}
    when = obj.get("time_ms")
    if isinstance(when, (int, float)) and not isinstance(when, bool):
        fields["log_time_s"] = when / 1000.0
    if key == "tracked_stats" or stream_step is None:
        step = next(iter(counts.values()), None)
        if step is not None and "step" not in counts and "step_num" not in counts:
            fields["step_from"] = next(iter(counts))
    else:
        step = stream_step
        fields.update((_COUNT_FIELDS.get(c, c), v) for c, v in counts.items())
    value = obj.get("value")
    if key == "eval_start":
        return [record("eval", "mlperf", rank, step, phase="start", **fields)]
    if key == "run_stop":     # the benchmark's verdict: its quality target reached, or not
        status = meta.get("status")
        return [record("eval", "mlperf", rank, step, phase="end", status=status, **fields)] \
            if isinstance(status, str) else []
    if key == "eval_accuracy":
        return [record("eval", "mlperf", rank, step, phase="result",
                       metrics={"accuracy": num(value) if _number(value) else None}, **fields)]
    stats = {k: num(v) for k, v in value.items() if _number(v) and num(v) is not None} if isinstance(value, dict) else {}
    for name in ("loss", "lr"):
        if name in stats:
            fields[name] = stats.pop(name)
    if step is None or not (stats or "loss" in fields):
        return []
    return [record("progress", "mlperf", rank, step, **fields, metrics=stats or None)]
