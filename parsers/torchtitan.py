"""torchtitan `step: N  loss: ..  memory: ..GiB(..%)  tps: ..  tflops: ..  mfu: ..%` lines."""
from __future__ import annotations

from .base import Parser, Pattern, num, record, to_gb, to_ms
from .kv import normalise, pairs

STEP = Pattern(r"(?:^|\s)(validate\s++)?step:\s*+(\d++)\s++loss:")
MEM = Pattern(r"memory:\s*+([\d.]++)\s*+(GiB|GB|MiB)(?:\(\s*+([\d.]++)%\))?")
TOTAL = Pattern(r"total steps (\d++)")
START = Pattern(r"Training starts at step (\d++)")
CKPT_DONE = Pattern(r"Finished (saving|loading) the (?:full )?checkpoint.{0,80}?in ([\d.]++) seconds")


class TorchtitanParser(Parser):
    name = "torchtitan"

    def __init__(self) -> None:
        self.total: int | None = None
        self.last_step: dict = {}

    def detect(self, line: str) -> bool:
        return "[titan]" in line or ("step:" in line and "loss:" in line and STEP.search(line) is not None)

    def parse(self, line: str, rank: int | None) -> list[dict]:
        if "step:" in line and "loss:" in line:
            m = STEP.search(line)
            if m:
                step = int(m.group(2))
                rest = line[m.start(2):]
                fields, extra = normalise(pairs(rest.replace("%", "% ")))
                fields.pop("step", None)
                fields.pop("mem_gb", None)
                mm = MEM.search(rest)
                if mm:
                    fields["mem_gb"] = to_gb(num(mm.group(1)), mm.group(2))
                    if mm.group(3):
                        fields["mem_pct"] = num(mm.group(3))
                if m.group(1):
                    return [record("eval", self.name, rank, step, phase="validation", **fields)]
                self.last_step[rank] = step
                return [record("progress", self.name, rank, step, total_steps=self.total, **fields)]
        if "total steps" in line:
            m = TOTAL.search(line)
            if m:
                self.total = int(m.group(1))
        if "Training starts at step" in line:
            m = START.search(line)
            if m and int(m.group(1)) > 1:
                return [record("restart", self.name, rank, int(m.group(1)), message=line.strip()[-300:])]
        if "Finished" in line and "checkpoint" in line:
            m = CKPT_DONE.search(line)
            if m:
                return [record("checkpoint", self.name, rank, self.last_step.get(rank),
                               action="save" if m.group(1) == "saving" else "load",
                               duration_ms=to_ms(num(m.group(2)), "s"))]
        return []
