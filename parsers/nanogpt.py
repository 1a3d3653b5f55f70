"""nanoGPT-style loops: karpathy `iter N: loss .., time ..ms, mfu ..%`, llama2.c `N | loss .. |
lr .. | ..ms | mfu ..%`, modded-nanogpt `step:N/T train_time:..ms step_avg:..ms`, llm.c `step  N/T |
train loss ..`, and `step N/T loss ..`."""
from __future__ import annotations

import re

from .base import OWN_TOTAL, READ_LINE, Parser, Pattern, is_decimal, is_digits, num, parsed, record
from .kv import _fast_pairs, normalise, pairs

KARPATHY = Pattern(r"iter (\d++): loss ([-\d.]++|nan), time ([\d.]++)ms(?:, mfu (-?[\d.]++)%)?")
LLAMA2C = Pattern(r"(\d{1,12}+) \| loss ([-\d.]++|nan) \| lr ([-+\d.e]{1,30}+) \| ([\d.]++)ms \| mfu (-?[\d.]++)%\s*+$")
KARPATHY_EVAL = Pattern(r"step (\d++): train loss ([\d.]++|nan), val loss ([\d.]++|nan)")
MODDED = Pattern(r"step:(\d++)/(\d++) (.{0,4000}+)")
STEP_SLASH = Pattern(r"step\s{1,8}+(\d++)\s*+/\s*+(\d++)\b\s*+[|:,]?(.{0,4000}+)")
STEP_PLAIN = Pattern(r"step\s{1,8}+(\d++)\s*+[|:,]\s*+(.{0,4000}+)")
MODDED_FAST = Pattern(
    r"step:(\d++)/(\d++) (?:val_loss:([\d.]++|nan) |train_loss:([\d.]++|nan) )?train_time:(\d++)ms step_avg:([\d.]++|nan)ms\s*+$")
# What the block readers (see `Parser.readers`) match: modded-nanogpt's line, the spine job's.
MODDED_LINE = re.compile(r"step:([0-9]++)/([0-9]++) (?:val_loss:([0-9.]++|nan) |train_loss:([0-9.]++|nan) )?"
                         r"train_time:([0-9]++)ms step_avg:([0-9.]++|nan)ms")
SPINE_LINE = re.compile(r"step ([0-9]++)/([0-9]++) loss ([-+0-9.eE]++) step_time_ms ([-+0-9.eE]++)")
MODDED_RUN = re.compile(MODDED_LINE.pattern + r"(?=\n|\Z)")
SPINE_RUN = re.compile(SPINE_LINE.pattern + r"(?=\n|\Z)")
_OWN_VALIDATION = frozenset({"total_steps", "phase", "loss"})
"""A `val_loss` line's step total, phase and loss are its own: its other values' give way."""
_MS = Pattern(r"([A-Za-z_]++):(-?[\d.]++|nan)ms")
_BARE_MS = Pattern(r"([\d.]++)\s*+ms\b")
_BARE_TOK = Pattern(r"([\d.]++)\s*+tok/s")
_BARE_MFU = Pattern(r"(?<![\w.-])(-?[\d.]{1,20}+)% (?:\w{1,20}+ )?MFU\b")
"""llm.c: `45.6% bf16 MFU`; `-100.0% bf16 MFU` where it knows no peak for the GPU, no
measurement."""


class NanoGPTParser(Parser):
    name = "nanogpt"
    readers: tuple = ("_step_at",)
    runs: tuple = (("s", "_step_run"),)

    def __init__(self) -> None:
        self.prev: dict = {}    # rank -> (step, cumulative train_time ms)
        self.evaluated_at: dict = {}
        """rank -> N of its last `step N: train loss ..` evaluation, until it prints step N"""

    def detect(self, line: str) -> bool:
        return (line.startswith(("step:", "iter ", "step ")) or line[:1].isdigit()) and bool(self.parse_only(line))

    def parse(self, line: str, rank: int | None) -> list[dict]:
        recs = self.parse_only(line, rank, update=True)
        if recs and rank in self.evaluated_at and recs[0]["kind"] == "progress" and (
                recs[0]["step"] >= self.evaluated_at[rank]):
            del self.evaluated_at[rank]
        return recs

    def place_events(self, recs: list[dict], rank) -> list[dict]:
        """nanoGPT and llama2.c evaluate, and save, at the top of iteration N, before training
        it: `step N: train loss ..` and `saving checkpoint` come before `iter N: ..`, whose time
        holds them.  The evaluation's record and the events after it until step N is printed
        say so (`before_step`): their work is step N's, not the step's after it."""
        at = self.evaluated_at.get(rank)
        if at is not None:
            for r in recs:
                if r["step"] == at:
                    r["before_step"] = True
        return recs

    def fast(self, line: str) -> list[dict] | None:
        """`step N/T key value ...` (the spine job's line) without a regex, for an unprefixed,
        printable line; None whenever the line is not exactly that shape, and the caller takes
        the full path.  The record is the one `parse` builds."""
        toks = line.split(" ")
        if toks[0][:5] == "step:":
            return self._modded_line(toks)
        if len(toks) < 4 or toks[0] != "step" or len(toks) & 1:
            return None
        a, sep, b = toks[1].partition("/")
        if not (sep and a.isdigit() and b.isdigit() and a.isascii() and b.isascii()) \
                or toks[2][:1] in ("", "|", ":", ","):
            return None
        rest = line[6 + len(toks[1]):]
        if "(" in rest or ")" in rest or "," in rest or "\t" in rest or "NCCL" in rest:
            return None
        if len(toks) == 6 and toks[2] == "loss" and toks[4] == "step_time_ms":
            try:
                recs = self._spine(a, b, toks[3], toks[5])
            except ValueError:
                return None
            if recs is not None:
                return recs
        items = _fast_pairs(rest, 64)
        if not items:
            return None
        fields, _ = normalise(items)
        fields.pop("step", None)
        if "step_time_ms" not in fields:
            return None
        return [record("progress", self.name, None, int(a), total_steps=int(b), **parsed(fields, OWN_TOTAL))]

    def _spine(self, step: str, total: str, printed_loss: str, printed_ms: str, rank=None) -> list[dict] | None:
        """Exactly the spine line: what normalise makes of its two keys, spelled out; None
        when a value is not finite (the general path decides).  ValueError: not numbers."""
        loss, ms = float(printed_loss), float(printed_ms)
        if loss - loss == 0.0 and ms - ms == 0.0:
            return [{"kind": "progress", "rank": rank, "step": int(step), "framework": self.name,
                     "total_steps": int(total), "loss": loss, "step_time_ms": ms}]
        return None

    def _step_at(self, text: str, start: int, end: int, rank) -> list[dict] | None:
        if not text.startswith("step", start, end):
            return None
        m = MODDED_LINE.fullmatch(text, start, end)
        if m is not None:
            return self._modded_fast(m.groups(), rank, True)
        m = SPINE_LINE.fullmatch(text, start, end)
        if m is None:
            return None
        try:
            return self._spine(m[1], m[2], m[3], m[4], rank)
        except ValueError:
            return None

    def _step_run(self, text: str, pos: int, end: int) -> tuple[int, int, list]:
        """`_step_at` on each line of a run of unprefixed modded-nanogpt or spine lines (see
        `Parser.runs`)."""
        out: list = []
        recs: list | None
        n = 0
        modded, spine = MODDED_RUN.match, SPINE_RUN.match
        while pos < end:
            m = modded(text, pos, end)
            if m is not None:
                if m.end() - pos >= READ_LINE:
                    break
                recs = self._modded_fast(m.groups(), None, True)
            else:
                m = spine(text, pos, end)
                if m is None or m.end() - pos >= READ_LINE:
                    break
                try:
                    recs = self._spine(m[1], m[2], m[3], m[4])
                except ValueError:
                    break
                if recs is None:
                    break
            out += recs
            n += 1
            pos = m.end() + 1
        return pos, n, out

    def _modded_line(self, toks: list[str]) -> list[dict] | None:
        """modded-nanogpt `step:N/T [val_loss:x |train_loss:x ]train_time:Nms step_avg:xms`, split
        on single spaces, unprefixed: what MODDED_FAST matches, without it; None otherwise."""
        n = len(toks)
        if n == 3:
            val = train = None
        elif n == 4:
            mid = toks[1]
            val = train = None
            if mid[:9] == "val_loss:":
                val = mid[9:]
                if not (is_decimal(val) or val == "nan"):
                    return None
            elif mid[:11] == "train_loss:":
                train = mid[11:]
                if not (is_decimal(train) or train == "nan"):
                    return None
            else:
                return None
        else:
            return None
        a, sep, b = toks[0][5:].partition("/")
        tt, avg = toks[-2], toks[-1]
        if not (sep and a and b and tt[:11] == "train_time:" and tt[-2:] == "ms"
                and avg[:9] == "step_avg:" and avg[-2:] == "ms"):
            return None
        tt, avg = tt[11:-2], avg[9:-2]
        if not (tt and is_digits(a + b + tt) and (is_decimal(avg) or avg == "nan")):
            return None
        return self._modded_fast((a, b, val, train, tt, avg), None, True)

    def _modded_fast(self, g, rank, update: bool) -> list[dict]:
        """The record of a MODDED_FAST match; `g` its six groups.  (The record is spelt out:
        a third of the corpus's progress lines take this path.)"""
        step = int(g[0])
        cumulative = float(g[4])
        if g[2] is not None:
            fields = {"train_time_ms": cumulative}
            avg = num(g[5])
            if avg is not None:
                fields["step_avg_ms"] = avg
            return [record("eval", self.name, rank, step, total_steps=int(g[1]), phase="validation",
                           loss=num(g[2]), **fields)]
        rec = {"kind": "progress", "rank": rank, "step": step, "framework": "nanogpt",
               "total_steps": int(g[1]), "train_time_ms": cumulative}
        avg = num(g[5])
        if avg is not None:
            rec["step_avg_ms"] = avg
        if g[3] is not None:
            loss = num(g[3])
            if loss is not None:
                rec["loss"] = loss
        prev = self.prev.get(rank)
        if prev and prev[1] is not None and step == prev[0] + 1 and cumulative >= prev[1]:
            # train_time is printed in whole ms: the gap is a whole number, which `round`
            # (a tenth of this line's cost) would give back unchanged
            gap = cumulative - prev[1]
            rec["step_time_ms"] = gap if gap.is_integer() else round(gap, 3)
        if update:
            self.prev[rank] = (step, cumulative)
        return [rec]

    def parse_only(self, line: str, rank=None, update: bool = False) -> list[dict]:
        s = line.lstrip()
        total: int | None
        if s.startswith("step:"):
            m = MODDED_FAST.match(s)
            if m:
                return self._modded_fast(m.groups(), rank, update)
            m = MODDED.match(s)
            if not m:
                return []
            step, total, rest = int(m.group(1)), int(m.group(2)), m.group(3)
            fields, extra = normalise(pairs(rest))
            fields.pop("step", None)
            cumulative = None
            for km in _MS.finditer(rest):
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
                               loss=extra["val_loss"], **parsed(fields, _OWN_VALIDATION))]
            if "train_loss" in extra or "loss" in fields:
                fields["loss"] = fields.get("loss", extra.get("train_loss"))
            prev = self.prev.get(rank)
            if (prev and cumulative is not None and prev[1] is not None and step == prev[0] + 1
                    and cumulative >= prev[1]):
                fields["step_time_ms"] = round(cumulative - prev[1], 3)
            if update:
                self.prev[rank] = (step, cumulative)
            return [record("progress", self.name, rank, step, total_steps=total, **parsed(fields, OWN_TOTAL))]
        if s[:1].isdigit():
            m = LLAMA2C.match(s) if " | loss " in s else None
            if m is None:
                return []
            mfu = num(m.group(5))       # -100.00% until measured, as nanoGPT's
            return [record("progress", self.name, rank, int(m.group(1)), loss=num(m.group(2)), lr=num(m.group(3)),
                           step_time_ms=num(m.group(4)), step_time_wall=True,
                           mfu=mfu if mfu is not None and mfu >= 0 else None)]
        if s.startswith("iter "):
            m = KARPATHY.match(s)
            if m:
                mfu = num(m.group(4))       # -100.00% until nanoGPT has measured it (5 iterations)
                # its time runs from one iteration's end to the next: it holds the evaluation
                # and the save at the top of the iteration (`step_time_wall`)
                return [record("progress", self.name, rank, int(m.group(1)), loss=num(m.group(2)),
                               step_time_ms=num(m.group(3)), step_time_wall=True,
                               mfu=mfu if mfu is not None and mfu >= 0 else None)]
            return []
        if s.startswith("step "):
            m = KARPATHY_EVAL.match(s) if ": train loss" in s else None
            if m:
                if update:
                    self.evaluated_at[rank] = int(m.group(1))
                return [record("eval", self.name, rank, int(m.group(1)), phase="validation",
                               train_loss=num(m.group(2)), loss=num(m.group(3)), before_step=True)]
            m = STEP_SLASH.match(s)
            total = None
            if m:
                step, total, rest = int(m.group(1)), int(m.group(2)), m.group(3)
            else:
                m = STEP_PLAIN.match(s)
                if not m:
                    return []
                step, rest = int(m.group(1)), m.group(2)
            items = pairs(rest)
            if "(" in rest:     # `time (ms): 153.2` first; then llm.c's `(1233.64 ms | 425 tok/s)` unbracketed
                items += pairs(rest.replace("(", " ").replace(")", " "))
            fields, extra = normalise(items)
            fields.pop("step", None)
            if "step_time_ms" not in fields:
                # llm.c prints '(1233.64 ms | 425 tok/s)': a bare ms value is the step time
                bare = _BARE_MS.search(rest)
                if bare:
                    fields["step_time_ms"] = num(bare.group(1))
                tok = _BARE_TOK.search(rest)
                if tok and "tokens_per_s" not in fields:
                    fields["tokens_per_s"] = num(tok.group(1))
            if "mfu" not in fields and "MFU" in rest:
                mfu = _BARE_MFU.search(rest)
                value = num(mfu.group(1)) if mfu else None
                if value is not None and value >= 0:
                    fields["mfu"] = value
            if not fields:
                return []
            return [record("progress", self.name, rank, step, total_steps=total, **parsed(fields, OWN_TOTAL))]
        return []
