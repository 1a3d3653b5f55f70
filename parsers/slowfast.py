"""PySlowFast's meters (facebookresearch/SlowFast, and the video models trained with it): each
`json_stats: {...}` line, JSON with sorted keys:

    [11/18 19:39:49][INFO] logging.py:  99: json_stats: {"_type": "train_iter", "dt": 4.99287,
      "dt_data": 0.00628, "dt_net": 4.98658, "epoch": "10/50", "eta": "8:54:59", "gpu_mem": "4.68G",
      "iter": "90/159", "loss": 2.40392, "lr": 0.00038, "top1_err": 12.50000, "top5_err": 0.00000}

(one line, every `LOG_PERIOD` iterations).  `iter` counts in its `epoch`, both from 1 of their
totals: the run's step is the epochs before times the epoch's iterations, plus `iter`.  `dt` is
that iteration's own time, `dt_data` its wait for data (the input lane) and `dt_net` the rest
(compute).  A `val_epoch` line is an evaluation's result, at its epoch's last step; the epoch's
means (`train_epoch`) and the evaluations' iterations give nothing."""
from __future__ import annotations

import json

from .base import num, record, seconds_to_ms

_NOT_METRICS = frozenset(("_type", "dt", "dt_data", "dt_net", "epoch", "eta", "gpu_mem", "iter", "loss",
                          "lr", "grad_norm", "RAM", "time_diff"))
_METRICS = 32


def _of(value) -> tuple[int, int] | None:
    """`"90/159"` as (90, 159)."""
    if not isinstance(value, str):
        return None
    n, _, total = value.partition("/")
    return (int(n), int(total)) if n.isdigit() and total.isdigit() else None


def _number(value) -> float | None:
    """A JSON number (not a bool, which Python's JSON reads as an int)."""
    return value if value.__class__ in (int, float) else None


def _metrics(stats: dict) -> dict:
    out = {k: v for k, v in stats.items() if k not in _NOT_METRICS and _number(v) is not None}
    return dict(list(out.items())[:_METRICS])


def read(s: str, rank, per_epoch: dict) -> list[dict] | None:
    """The records of a `json_stats:` line; None where the line holds no such JSON object.
    `per_epoch`: rank -> the iterations of an epoch, as its training lines print them."""
    at = s.find("json_stats: {")
    if at < 0:
        return None
    try:
        stats = json.loads(s[at + len("json_stats: "):])
    except ValueError:
        return None
    if not isinstance(stats, dict):
        return None
    kind, epoch = stats.get("_type"), _of(stats.get("epoch"))
    if kind == "val_epoch":
        iters = per_epoch.get(rank)
        return [record("eval", "slowfast", rank, epoch[0] * iters if epoch and iters else None,
                       phase="result", epoch=epoch[0] if epoch else None, metrics=_metrics(stats) or None)]
    it = _of(stats.get("iter"))
    if not isinstance(kind, str) or not kind.startswith("train_iter") or epoch is None or it is None:
        return []
    per_epoch[rank] = it[1]
    fields: dict = {"loss": _number(stats.get("loss")), "lr": _number(stats.get("lr")),
                    "grad_norm": _number(stats.get("grad_norm"))}
    dt, data, net = (_number(stats.get(k)) for k in ("dt", "dt_data", "dt_net"))
    if dt is not None:
        fields["step_time_ms"] = seconds_to_ms(dt)
    timers = {name: seconds_to_ms(v) for name, v in (("data", data), ("net", net)) if v is not None}
    if timers:
        fields["timers_ms"] = timers
        fields["lanes_ms"] = {lane: timers[name] for name, lane in (("data", "input"), ("net", "compute"))
                              if name in timers}
    mem = stats.get("gpu_mem")
    if isinstance(mem, str) and mem.endswith("G"):
        fields["mem_gb"] = num(mem[:-1])
    metrics = _metrics(stats)
    step = (epoch[0] - 1) * it[1] + it[0]      # (`record` leaves out what is None)
    return [record("progress", "slowfast", rank, step, epoch=epoch[0], iter_in_epoch=it[0], iters_per_epoch=it[1],
                   total_steps=epoch[1] * it[1], metrics=metrics or None, **fields)]
