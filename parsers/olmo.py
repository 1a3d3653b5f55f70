"""AI2's OLMo trainer and OLMo-core: a logged step is a header behind the logger's prefix, then
one indented `name=value` line per metric (one `log.info` call):

    2024-08-06 09:59:26.181 host:0  olmo.train:908  INFO    [step=2/739328,epoch=0]
        train/CrossEntropyLoss=1.787e-06
        throughput/device/tokens_per_second=26,668
        System/Peak GPU Memory (MB)=53,695

OLMo-core adds `,eta=...` to the header, prints a bare header at steps it logs no metrics for,
and names its metrics `train/CE loss`, `throughput/device/BPS` (1 / the step's time),
`throughput/device/data loading (s)` (the step's wait for its batch: the input lane) and
`checkpoint/save_duration_s` (the checkpoint lane).  OLMo's
`throughput/device/batches_per_second` is a mean over a window of steps, so it gives no step
time.  An evaluation begins with `Running evaluation for 'LABEL'...` and ends with its label,
then its `eval/...=value` lines; OLMo-core's with `Running LABEL evals...` and ends with
`Finished LABEL evals in 0.5 seconds. Metrics:`, then its indented `name=value` lines.

OLMo-core prints its values with its own `format_float` (`2,378`, `2.107B`, `1.59E-06`, `nan`),
and reduces a step's metrics in the background: a step whose checkpoint is saved is printed as
two records under the same header (its loss first, then its throughput and save time), and with
more than one rank a record can come a few steps late, after the next steps' checkpoint and
evaluation lines.  So an evaluation's records wait for the step record that counts its batches
(`throughput/in-loop eval batches`): it ran in that step, and its records go right before that
step's.  Read live, a record carries when its header was printed (`drawn_ns`)."""
from __future__ import annotations

from .base import CLOCK, Parser, Pattern, num, record, seconds_to_ms

HEADER = Pattern(r"\[step=(\d++)/(\d++|\?\?\?)(?:,epoch=(\d++))?(?:,eta=[^\]]{0,60}+)?\]$")
METRIC = Pattern(r"([A-Za-z][^=]{0,160}+)=(\S{1,40}+)$")
EVAL_START = Pattern(r"Running evaluation for '([^']{1,200}+)'")
CORE_EVAL_START = Pattern(r"Running (.{1,200}?) evals\.\.\.$")
CORE_EVAL_END = Pattern(r"Finished (.{1,200}?) evals in ([\d.]++) seconds\. Metrics:$")
_SCALE = {"B": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_FIELDS = {"train/crossentropyloss": "loss", "train/ce loss": "loss",
           "optim/total_grad_norm": "grad_norm", "optim/total grad norm": "grad_norm",
           "throughput/device/tokens_per_second": "tokens_per_s_per_gpu",
           "throughput/device/tps": "tokens_per_s_per_gpu",
           "throughput/device/batches_per_second": "it_per_s", "throughput/device/mfu": "mfu",
           "throughput/device/tflops_per_gpu": "tflops"}
_LANE_TIMERS = {"throughput/device/data loading (s)": ("data", "input"),
                "checkpoint/save_duration_s": ("save_checkpoint", "checkpoint")}
"""Seconds of a step spent in one lane: its wait for the batch, and OLMo-core's checkpoint save
(printed with the step that saved)."""
_MEMORY_UNITS = {"(mb)": 1 / 1024, "(mib)": 1 / 1024, "(gb)": 1.0, "(gib)": 1.0}
_METRICS = 32
IN_LOOP_EVAL = "throughput/in-loop eval"
"""OLMo-core's metrics of the step an evaluation ran in (`throughput/in-loop eval batches=10.000`)."""
EVAL_LAG = 4
"""Steps after the one an evaluation began in at which its records go on without that step's
record having named it (an OLMo-core that logs no in-loop metrics)."""


class OlmoParser(Parser):
    name = "olmo"

    def __init__(self) -> None:
        self.open: dict = {}        # rank -> the record whose metric lines are being read
        self.last_step: dict = {}   # rank -> its last step: the step an evaluation comes after
        self.eval_step: dict = {}   # rank -> the step of OLMo-core's evaluation under way
        self.held: dict = {}
        """rank -> OLMo-core's evaluation records, until the step record that names them"""
        self.ran_eval: set = set()  # ranks whose open step record named an in-loop evaluation

    def detect(self, line: str) -> bool:
        return "[step=" in line and line.rstrip().endswith("]") and HEADER.search(line.rstrip()) is not None

    def parse(self, line: str, rank: int | None) -> list[dict]:
        s = line.strip()
        out = []
        if s.endswith("]") and "[step=" in s:
            m = HEADER.search(s)
            if m:
                if rank in self.open:
                    out.extend(self._close(rank))
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
                v = _value(m.group(2))
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
            return self._close(rank)
        if "Running evaluation for '" in s:
            m = EVAL_START.search(s)
            if m:
                return [record("eval", self.name, rank, self.last_step.get(rank), phase="start",
                               label=m.group(1))]
        if " evals" in s:
            return self._core_eval(s, rank)
        return []

    def _core_eval(self, s: str, rank: int | None) -> list[dict]:
        """OLMo-core evaluates within a step, before that step's record is printed: its step is
        the one after the last record.  (Where records come late, so does this step.)"""
        m = CORE_EVAL_START.search(s)
        if m:
            last = self.last_step.get(rank)
            step = self.eval_step[rank] = last + 1 if last is not None else None
            self.held.setdefault(rank, []).append(record("eval", self.name, rank, step, phase="start",
                                                         label=m.group(1)))
            return []
        m = CORE_EVAL_END.search(s)
        if m:       # its metrics follow, one a line
            step = self.eval_step.pop(rank, None)
            self.open[rank] = record("eval", self.name, rank, step, phase="result", label=m.group(1),
                                     duration_ms=seconds_to_ms(float(m.group(2))))
        return []

    def flush(self) -> list[dict]:
        out = []
        for rank in list(self.open):
            out.extend(self._close(rank))
        for rank in list(self.held):
            out.extend(self.held.pop(rank))
        return out

    def _close(self, rank) -> list[dict]:
        """The records that the open one's end gives: an OLMo-core evaluation's result joins its
        held start; a step record that names an in-loop evaluation gives the held evaluation
        records first, at its step (or at theirs, EVAL_LAG steps on, where none names them; at
        once where they have no step, an evaluation before the first step record)."""
        rec = self.open.pop(rank)
        ran_in = rank in self.ran_eval
        self.ran_eval.discard(rank)
        held = self.held.get(rank)
        if held is None:
            return [rec]
        if rec["kind"] == "eval":
            held.append(rec)
            return []
        first = held[0]["step"]
        if not ran_in and first is not None and rec["step"] < first + EVAL_LAG:
            return [rec]
        del self.held[rank]
        if ran_in:
            for r in held:
                r["step"] = rec["step"]
        return held + [rec]

    def _add(self, rec: dict, name: str, v: float) -> None:
        if name.startswith(IN_LOOP_EVAL) and rec["kind"] == "progress":
            self.ran_eval.add(rec["rank"])
        if rec["kind"] == "progress" and _into_field(rec, name.lower(), v):
            return
        metrics = rec.setdefault("metrics", {})
        if len(metrics) < _METRICS:
            metrics[name] = v


def _value(printed: str) -> float | None:
    """A value as OLMo-core's `format_float` prints it: `2,378`, `1.59E-06`, or scaled, `2.107B`."""
    scale = _SCALE.get(printed[-1])
    if scale is not None and printed[-2:-1].isdigit():
        v = num(printed[:-1])
        return round(v * scale, 3) if v is not None else None
    return num(printed)


def _into_field(rec: dict, key: str, v: float) -> bool:
    """Set the record's field that metric `key` (lowercased) gives, if it gives one."""
    field, unit = _FIELDS.get(key), key[key.rfind(" ") + 1:]
    if field is not None:
        rec.setdefault(field, v)
    elif key == "throughput/device/bps" and v > 0:
        rec["it_per_s"] = v
        rec["step_time_ms"] = round(1000.0 / v, 6)
    elif key in _LANE_TIMERS:
        timer, lane = _LANE_TIMERS[key]
        ms = seconds_to_ms(v)
        rec.setdefault("timers_ms", {})[timer] = ms
        rec.setdefault("lanes_ms", {})[lane] = ms
    elif key.startswith(("optim/learning_rate_group", "optim/lr")):
        rec.setdefault("lr", v)
    elif unit in _MEMORY_UNITS and "mem" in key and any(w in key for w in ("peak", "max", "reserved")):
        rec.setdefault("mem_gb", round(v * _MEMORY_UNITS[unit], 6))     # `System/Peak GPU Memory (MB)`
    else:
        return False
    return True
