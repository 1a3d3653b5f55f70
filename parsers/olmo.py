"""AI2's OLMo trainer and OLMo-core: a logged step is a header behind the logger's prefix, then
one indented `name=value` line per metric (one `log.info` call):

    2024-08-06 09:59:26.181 host:0  olmo.train:908  INFO    [step=2/739328,epoch=0]
        train/CrossEntropyLoss=1.787e-06
        throughput/device/tokens_per_second=26,668
        System/Peak GPU Memory (MB)=53,695

OLMo-core adds `,eta=...` to the header, prints a bare header at steps it logs no metrics for,
and names its metrics `train/CE loss`, `throughput/device/BPS` (1 / the step's time),
`throughput/device/data loading (s)` (the step's wait for its batch: the input lane).  OLMo's
`throughput/device/batches_per_second` is a mean over a window of steps, so it gives no step
time.  An evaluation begins with `Running evaluation for 'LABEL'...` and ends with its label,
then its `eval/...=value` lines.  Read live, a record
carries when its header was printed (`drawn_ns`), as the step ended."""
from __future__ import annotations

from .base import CLOCK, Parser, Pattern, num, record, seconds_to_ms

HEADER = Pattern(r"\[step=(\d++)/(\d++|\?\?\?)(?:,epoch=(\d++))?(?:,eta=[^\]]{0,60}+)?\]$")
METRIC = Pattern(r"([A-Za-z][^=]{0,160}+)=(-?[\d,]{1,40}+(?:\.\d*+)?(?:[eE][-+]?\d++)?)$")
EVAL_START = Pattern(r"Running evaluation for '([^']{1,200}+)'")
_FIELDS = {"train/crossentropyloss": "loss", "train/ce loss": "loss",
           "optim/total_grad_norm": "grad_norm", "optim/total grad norm": "grad_norm",
           "throughput/device/tokens_per_second": "tokens_per_s_per_gpu",
           "throughput/device/tps": "tokens_per_s_per_gpu",
           "throughput/device/batches_per_second": "it_per_s", "throughput/device/mfu": "mfu"}
_MEMORY_UNITS = {"(mb)": 1 / 1024, "(mib)": 1 / 1024, "(gb)": 1.0, "(gib)": 1.0}
_METRICS = 32


class OlmoParser(Parser):
    name = "olmo"

    def __init__(self) -> None:
        self.open: dict = {}        # rank -> the record whose metric lines are being read
        self.last_step: dict = {}   # rank -> its last step: the step an evaluation comes after

    def detect(self, line: str) -> bool:
        return "[step=" in line and line.rstrip().endswith("]") and HEADER.search(line.rstrip()) is not None

    def parse(self, line: str, rank: int | None) -> list[dict]:
        s = line.strip()
        out = []
        if s.endswith("]") and "[step=" in s:
            m = HEADER.search(s)
            if m:
                if rank in self.open:
                    out.append(self.open.pop(rank))
                step = self.last_step[rank] = int(m.group(1))
                rec = record("progress", self.name, rank, step,
                             total_steps=int(m.group(2)) if m.group(2).isdigit() else None,
                             epoch=int(m.group(3)) if m.group(3) else None)
                if CLOCK.now_ns is not None:     # read live: the step ended as it was logged
                    rec["drawn_ns"] = CLOCK.now_ns
                self.open[rank] = rec
                return out
        if "=" in s:
            m = METRIC.match(s)
            if m:
                v = num(m.group(2))
                name = m.group(1).strip()
                into = self.open.get(rank)
                if into is None and name.startswith("eval/"):    # an evaluation's result
                    into = self.open[rank] = record("eval", self.name, rank, self.last_step.get(rank),
                                                    phase="result")
                if into is not None:
                    if v is not None:
                        self._add(into, name, v)
                    return out
        if rank in self.open:   # the record's end: the line is then read as any other
            return [self.open.pop(rank)]
        if "Running evaluation for '" in s:
            m = EVAL_START.search(s)
            if m:
                return [record("eval", self.name, rank, self.last_step.get(rank), phase="start",
                               label=m.group(1))]
        return []

    def flush(self) -> list[dict]:
        return [self.open.pop(rank) for rank in list(self.open)]

    def _add(self, rec: dict, name: str, v: float) -> None:
        if rec["kind"] == "progress" and _into_field(rec, name.lower(), v):
            return
        metrics = rec.setdefault("metrics", {})
        if len(metrics) < _METRICS:
            metrics[name] = v


def _into_field(rec: dict, key: str, v: float) -> bool:
    """Set the record's field that metric `key` (lowercased) gives, if it gives one."""
    field, unit = _FIELDS.get(key), key[key.rfind(" ") + 1:]
    if field is not None:
        rec.setdefault(field, v)
    elif key == "throughput/device/bps" and v > 0:
        rec["it_per_s"] = v
        rec["step_time_ms"] = round(1000.0 / v, 6)
    elif key == "throughput/device/data loading (s)":
        ms = seconds_to_ms(v)
        rec["timers_ms"] = {"data": ms}
        rec["lanes_ms"] = {"input": ms}
    elif key.startswith(("optim/learning_rate_group", "optim/lr")):
        rec.setdefault("lr", v)
    elif unit in _MEMORY_UNITS and "mem" in key and any(w in key for w in ("peak", "max", "reserved")):
        rec.setdefault("mem_gb", round(v * _MEMORY_UNITS[unit], 6))     # `System/Peak GPU Memory (MB)`
    else:
        return False
    return True
