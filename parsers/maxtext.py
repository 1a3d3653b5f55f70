"""MaxText (JAX): `completed step: 10, seconds: 13.360, TFLOP/s/device: 305.127, Tokens/s/device:
3679.158, total_weights: 12582912, loss: 10.565` lines (newer versions spell the rates in lower
case and may add `lr`, `grad_norm` and more)."""
from __future__ import annotations

from .base import Parser, Pattern, num, record, to_ms
from .kv import normalise

STEP = Pattern(r"completed step: (\d++), seconds: ([\d.]++)(.{0,4000}+)")
_PER_DEVICE = {"tflop/s/device": "tflops", "tokens/s/device": "tokens_per_s_per_gpu"}


class MaxTextParser(Parser):
    name = "maxtext"

    def detect(self, line: str) -> bool:
        return "completed step: " in line and STEP.search(line) is not None

    def parse(self, line: str, rank: int | None) -> list[dict]:
        if "completed step: " not in line:
            return []
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
