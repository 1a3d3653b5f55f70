"""MosaicML Composer console logger: `[epoch=1][batch=16/625]:` headers and `Train key: value` lines."""
from __future__ import annotations

from .base import Parser, Pattern, num, record

HEADER = Pattern(r"(?:\[epoch=(\d++)\])?\[batch=(\d++)(?:/(\d++))?\]:(.{0,4000}+)")
ITEM = Pattern(r"\s*+(Train|Eval)\s++([\w/.@-]{1,120}+):\s*+(-?[\d.]++(?:[eE][-+]?\d++)?|nan|inf)")
_INLINE = Pattern(r"\s*+([\w/.@-]{1,120}+):\s*+(-?[\d.]++(?:[eE][-+]?\d++)?)")
_MAP = {"loss/train/total": "loss", "throughput/batches_per_sec": "it_per_s",
        "throughput/samples_per_sec": "samples_per_s", "throughput/tokens_per_sec": "tokens_per_s",
        "throughput/device/mfu": "mfu", "throughput/device/tokens_per_sec": "tokens_per_s_per_gpu",
        "memory/peak_allocated_mem": "mem_gb", "time/epoch": "epoch", "time/batch": "batch"}


class ComposerParser(Parser):
    name = "composer"

    def __init__(self) -> None:
        self.open: dict = {}

    def detect(self, line: str) -> bool:
        return line.startswith("[batch=") or line.startswith("[epoch=")

    def _add(self, rec: dict, key: str, v: float, kind: str) -> None:
        if kind == "Eval":
            rec.setdefault("eval", {})[key] = v
            return
        name = _MAP.get(key)
        if name == "mfu":
            v = v * 100 if v <= 1 else v
        if name:
            rec.setdefault(name, v)
        elif key.startswith("lr-"):
            rec.setdefault("lr", v)
        elif key.startswith("loss/train"):
            rec.setdefault("losses", {})[key] = v
        elif key.startswith("time/") or key.startswith("wall_clock/"):
            rec.setdefault("timers_s", {})[key] = v

    def parse(self, line: str, rank: int | None) -> list[dict]:
        out = []
        s = line.strip()
        if s.startswith(("[batch=", "[epoch=")):
            m = HEADER.match(s)
            if m:
                if rank in self.open:
                    out.append(self.open.pop(rank))
                rec = record("progress", self.name, rank, int(m.group(2)),
                             total_steps=int(m.group(3)) if m.group(3) else None,
                             epoch=int(m.group(1)) if m.group(1) else None)
                for im in _INLINE.finditer(m.group(4)):
                    v = num(im.group(2))
                    if v is not None:
                        self._add(rec, im.group(1), v, "Train")
                self.open[rank] = rec
                return out
        if rank in self.open and (s.startswith("Train ") or s.startswith("Eval ")):
            m = ITEM.match(s)
            if m:
                v = num(m.group(3))
                if v is not None:
                    self._add(self.open[rank], m.group(2), v, m.group(1))
                return out
        if rank in self.open:
            out.append(self.open.pop(rank))
        return out

    def flush(self) -> list[dict]:
        out = list(self.open.values())
        self.open.clear()
        return out
