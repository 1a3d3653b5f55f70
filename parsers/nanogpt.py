"""nanoGPT-style loops: karpathy `iter N: loss .., time ..ms, mfu ..%`, modded-nanogpt
`step:N/T train_time:..ms step_avg:..ms`, llm.c `step  N/T | train loss ..`, and `step N/T loss ..`."""
from __future__ import annotations

import regex

from .base import LIMIT, Parser, num, record
from .kv import normalise, pairs

KARPATHY = regex.compile(r"iter (\d++): loss ([-\d.]++|nan), time ([\d.]++)ms(?:, mfu (-?[\d.]++)%)?")
KARPATHY_EVAL = regex.compile(r"step (\d++): train loss ([\d.]++|nan), val loss ([\d.]++|nan)")
MODDED = regex.compile(r"step:(\d++)/(\d++) (.{0,2000}+)")
STEP_SLASH = regex.compile(r"step\s{1,8}+(\d++)\s*+/\s*+(\d++)\b\s*+[|:,]?(.{0,2000}+)")
STEP_PLAIN = regex.compile(r"step\s{1,8}+(\d++)\s*+[|:,]\s*+(.{0,2000}+)")
MODDED_FAST = regex.compile(
    r"step:(\d++)/(\d++) (?:val_loss:([\d.]++|nan) |train_loss:([\d.]++|nan) )?train_time:(\d++)ms step_avg:([\d.]++|nan)ms\s*+$")
_MS = regex.compile(r"([A-Za-z_]++):(-?[\d.]++|nan)ms")


class NanoGPTParser(Parser):
    name = "nanogpt"

    def __init__(self) -> None:
        self.prev: dict = {}    # rank -> (step, cumulative train_time ms)

    def detect(self, line: str) -> bool:
        return line.startswith(("step:", "iter ", "step ")) and bool(self.parse_only(line))

    def parse(self, line: str, rank: int | None) -> list[dict]:
        return self.parse_only(line, rank, update=True)

    def _modded_fast(self, m, rank, update: bool) -> list[dict]:
        step, total = int(m.group(1)), int(m.group(2))
        cumulative = float(m.group(5))
        fields = {"train_time_ms": cumulative}
        avg = num(m.group(6))
        if avg is not None:
            fields["step_avg_ms"] = avg
        if m.group(3) is not None:
            return [record("eval", self.name, rank, step, total_steps=total, phase="validation",
                           loss=num(m.group(3)), **fields)]
        if m.group(4) is not None:
            fields["loss"] = num(m.group(4))
        prev = self.prev.get(rank)
        if prev and prev[1] is not None and step == prev[0] + 1 and cumulative >= prev[1]:
            fields["step_time_ms"] = round(cumulative - prev[1], 3)
        if update:
            self.prev[rank] = (step, cumulative)
        return [record("progress", self.name, rank, step, total_steps=total, **fields)]

    def parse_only(self, line: str, rank=None, update: bool = False) -> list[dict]:
        s = line.lstrip()
        if s.startswith("step:"):
            m = MODDED_FAST.match(s, timeout=LIMIT.timeout)
            if m:
                return self._modded_fast(m, rank, update)
            m = MODDED.match(s, timeout=LIMIT.timeout)
            if not m:
                return []
            step, total, rest = int(m.group(1)), int(m.group(2)), m.group(3)
            fields, extra = normalise(pairs(rest))
            fields.pop("step", None)
            cumulative = None
            for km in _MS.finditer(rest, timeout=LIMIT.timeout):
                key, v = km.group(1), num(km.group(2))
                if key == "train_time":
                    cumulative = v
                elif key == "step_avg" and v is not None:
                    fields["step_avg_ms"] = v
            fields.pop("step_time_ms", None)
            if cumulative is not None:
                fields["train_time_ms"] = cumulative
            if "val_loss" in extra:
                return [record("eval", self.name, rank, step, total_steps=total, phase="validation",
                               loss=extra["val_loss"], **{k: v for k, v in fields.items() if k != "loss"})]
            if "train_loss" in extra or "loss" in fields:
                fields["loss"] = fields.get("loss", extra.get("train_loss"))
            prev = self.prev.get(rank)
            if (prev and cumulative is not None and prev[1] is not None and step == prev[0] + 1
                    and cumulative >= prev[1]):
                fields["step_time_ms"] = round(cumulative - prev[1], 3)
            if update:
                self.prev[rank] = (step, cumulative)
            return [record("progress", self.name, rank, step, total_steps=total, **fields)]
        if s.startswith("iter "):
            m = KARPATHY.match(s, timeout=LIMIT.timeout)
            if m:
                return [record("progress", self.name, rank, int(m.group(1)), loss=num(m.group(2)),
                               step_time_ms=num(m.group(3)), mfu=num(m.group(4)))]
            return []
        if s.startswith("step "):
            m = KARPATHY_EVAL.match(s, timeout=LIMIT.timeout) if ": train loss" in s else None
            if m:
                return [record("eval", self.name, rank, int(m.group(1)), phase="validation",
                               train_loss=num(m.group(2)), loss=num(m.group(3)))]
            m = STEP_SLASH.match(s, timeout=LIMIT.timeout)
            total = None
            if m:
                step, total, rest = int(m.group(1)), int(m.group(2)), m.group(3)
            else:
                m = STEP_PLAIN.match(s, timeout=LIMIT.timeout)
                if not m:
                    return []
                step, rest = int(m.group(1)), m.group(2)
            fields, extra = normalise(pairs(rest.replace("(", " ").replace(")", " ")))
            fields.pop("step", None)
            if "step_time_ms" not in fields:
                # llm.c prints '(1233.64 ms | 425 tok/s)': a bare ms value is the step time
                bare = regex.search(r"([\d.]++)\s*+ms\b", rest, timeout=LIMIT.timeout)
                if bare:
                    fields["step_time_ms"] = num(bare.group(1))
                tok = regex.search(r"([\d.]++)\s*+tok/s", rest, timeout=LIMIT.timeout)
                if tok and "tokens_per_s" not in fields:
                    fields["tokens_per_s"] = num(tok.group(1))
            if not fields:
                return []
            return [record("progress", self.name, rank, step, total_steps=total, **fields)]
        return []
