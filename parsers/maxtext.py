"""MaxText (JAX): `completed step: 10, seconds: 13.360, TFLOP/s/device: 305.127, Tokens/s/device:
3679.158, total_weights: 12582912, loss: 10.565` lines (newer versions spell the rates in lower
case and may add `lr`, `grad_norm` and more).  Its steps count from 0.  An evaluation begins
with `Starting eval after train step 10` and ends with `Completed eval after train step 10,
loss=5.985, perplexity=397.428, ...` (its batches' `Completed eval step: 0, ...` lines between)."""
from __future__ import annotations

from .base import Parser, Pattern, num, record, to_ms
from .kv import normalise

STEP = Pattern(r"completed step: (\d++), seconds: ([\d.]++)(.{0,4000}+)")
EVAL = Pattern(r"(Starting|Completed) eval after train step (\d++)(.{0,2000}+)")
_PER_DEVICE = {"tflop/s/device": "tflops", "tokens/s/device": "tokens_per_s_per_gpu"}


class MaxTextParser(Parser):
    name = "maxtext"

    def detect(self, line: str) -> bool:
        return "completed step: " in line and STEP.search(line) is not None

    def parse(self, line: str, rank: int | None) -> list[dict]:
        if "completed step: " not in line:
            return self._eval(line, rank) if " eval after train step " in line else []
        m = STEP.search(line)
        if m is None:
            return []
        fields: dict = {"step_time_ms": to_ms(num(m.group(2)), "s")}
        items = []
        for part in m.group(3).split(",", 64)[1:64]:
            key, sep, value = part.partition(":")
            key = key.strip()
            if not sep:
                continue
            name = _PER_DEVICE.get(key.lower())
            if name is None:
                items.append((key, value.strip(), None))
            else:
                fields[name] = num(value)       # `record` drops a None
        more, extra = normalise(items, fields)      # the per-device rates stay as read
        more.pop("step", None)
        return [record("progress", self.name, rank, int(m.group(1)), **more,
                       **({"metrics": extra} if extra else {}))]

    def _eval(self, line: str, rank: int | None) -> list[dict]:
        m = EVAL.search(line)
        if m is None:
            return []
        step = int(m.group(2))
        if m.group(1) == "Starting":
            return [record("eval", self.name, rank, step, phase="start")]
        metrics = {}
        for part in m.group(3).split(",", 32)[:32]:
            key, sep, value = part.partition("=")
            v = num(value) if sep else None
            if v is not None:
                metrics[key.strip()] = v
        return [record("eval", self.name, rank, step, phase="result", metrics=metrics or None)]
