"""torchtitan `step: N  loss: ..  memory: ..GiB(..%)  tps: ..  tflops: ..  mfu: ..%` lines (since 0.3
with `grad_norm: ..` after the loss), its validation's `validate step: N  loss: ..`, and its
checkpoints' `Finished saving the checkpoint in 0.46 seconds.` and `Last step checkpoint
completed in 0.87s`.  A step line times nothing: read live, its record says when it was read
(`drawn_ns`), its step's end where every step is logged (`metrics.log_freq` 1)."""
from __future__ import annotations

from .base import CLOCK, OWN_TOTAL, Parser, Pattern, num, parsed, record, to_gb, to_ms
from .kv import normalise, pairs

STEP = Pattern(r"(?:^|\s)(validate\s++)?step:\s*+(\d++)\s++loss:")
MEM = Pattern(r"memory:\s*+([\d.]++)\s*+(GiB|GB|MiB)(?:\(\s*+([\d.]++)%\))?")
TOTAL = Pattern(r"total steps (\d++)")
START = Pattern(r"Training starts at step (\d++)")
CKPT_DONE = Pattern(r"Finished (saving|loading) the (?:full )?checkpoint.{0,80}?in ([\d.]++) seconds"
                    r"|Last step checkpoint completed in ([\d.]++)s\b")


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
                if "tokens_per_s" in fields:        # `tps`: "tokens per second per device"
                    fields["tokens_per_s_per_gpu"] = fields.pop("tokens_per_s")
                mm = MEM.search(rest)
                if mm:
                    fields["mem_gb"] = to_gb(num(mm.group(1)), mm.group(2))
                    if mm.group(3):
                        fields["mem_pct"] = num(mm.group(3))
                if m.group(1):
                    return [record("eval", self.name, rank, step, phase="validation", **fields)]
                self.last_step[rank] = step
                rec = record("progress", self.name, rank, step, total_steps=self.total, **parsed(fields, OWN_TOTAL))
                if CLOCK.now_ns is not None:
                    rec["drawn_ns"] = CLOCK.now_ns
                return [rec]
        if "total steps" in line:
            m = TOTAL.search(line)
            if m:
                self.total = int(m.group(1))
        if "Training starts at step" in line:
            m = START.search(line)
            if m and int(m.group(1)) > 1:
                return [record("restart", self.name, rank, int(m.group(1)), message=line.strip()[-300:])]
        if ("Finished" in line or "Last step" in line) and "checkpoint" in line:
            m = CKPT_DONE.search(line)
            if m:
                verb, seconds = (m.group(1), m.group(2)) if m.group(1) else ("saving", m.group(3))
                return [record("checkpoint", self.name, rank, self.last_step.get(rank),
                               action="save" if verb == "saving" else "load", phase="end",
                               duration_ms=to_ms(num(seconds), "s"))]
        return []
