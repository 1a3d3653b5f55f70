"""LitGPT (`litgpt pretrain`, `litgpt finetune`): a line per logged iteration,

    Epoch 34 | iter 3050700 step 610140 | loss train: 2.846, val: 2.861 | iter time: 112.20 ms (step) remaining time: 0:01:54
    iter 1760 | step 220: loss 1.5947, iter time: 263.85 ms (optimizer.step)       (early 2024)
    iter 0 step 1: loss 10.9819, iter time: 1036.84ms (optimizer.step)              (lit-gpt, 2023)

and `iter 4800: val loss 1.7258, val time: 3778.02 ms` after a validation (its duration), which
follows an optimizer step; `Final evaluation | val loss: 4.993 | val ppl: 147.314` at the end.

An iteration is one micro-batch.  `step` counts the optimizer steps done, and moves once every
few iterations under gradient accumulation, on the iteration marked `(step)` or
`(optimizer.step)`.  A step's record is that marked line, and its step is `step`.  The printed
time is that one iteration's: the step's time only where every iteration is a step (`iter` equal
to `step`, or one less where iterations count from 0); otherwise it is kept as `iter_time_ms`.
The lines of accumulating iterations end no step and give no record (`litgpt pretrain` prints
none: it logs every `log_interval` steps, on their last iteration).  Read live, a record with no
step time says when it was read (`drawn_ns`): a step's end, where every step is printed."""
from __future__ import annotations

from .base import CLOCK, Parser, Pattern, num, record

LINE = Pattern(r"(?:Epoch (\d++) \| )?iter (\d++) (?:\| )?step (\d++)(?::|\s\|)(.{0,1000}+)")
VALIDATION = Pattern(r"iter (\d++): val loss (-?[\d.]++(?:[eE][-+]?\d++)?), val time: ([\d.]++) ?ms")
_LOSS = Pattern(r"loss(?: train)?(?: \(curr\))?:? ?(-?[\d.]++(?:[eE][-+]?\d++)?)")
_VAL_LOSS = Pattern(r"val(?: \(prev val iter\))?: (-?[\d.]++(?:[eE][-+]?\d++)?)")
_ITER_TIME = Pattern(r"iter time: ([\d.]++) ?ms")
FINAL = Pattern(r"Final evaluation \| val loss: (-?[\d.]++) \| val ppl: ([\d.]++)")
_STEP_MARKS = ("(step)", "(optimizer.step)", "(opt.step)")


class LitGPTParser(Parser):
    name = "litgpt"

    def __init__(self) -> None:
        self.last_step: dict = {}   # rank -> its last step: the step a validation comes after
        self.iters_per_step: dict = {}  # rank -> iterations a step, as its marked lines tell

    def detect(self, line: str) -> bool:
        if "iter " not in line:
            return False
        s = line.lstrip()
        if not s.startswith(("iter ", "Epoch ")):
            return False
        return LINE.match(s) is not None or VALIDATION.match(s) is not None

    def owns(self, line: str) -> bool:
        return LINE.match(line.strip()) is not None

    def parse(self, line: str, rank: int | None) -> list[dict]:
        s = line.strip()
        if not s.startswith(("iter ", "Epoch ")):
            if s.startswith("Final evaluation"):
                f = FINAL.match(s)
                if f:
                    return [record("eval", self.name, rank, self.last_step.get(rank), phase="result",
                                   label="final", metrics={"val_loss": num(f.group(1)), "val_ppl": num(f.group(2))})]
            return []
        m = LINE.match(s)
        if m is None:
            v = VALIDATION.match(s)
            if v is None:
                return []
            # a validation follows an optimizer step: the step its iteration ends, where known
            it, per = int(v.group(1)), self.iters_per_step.get(rank)
            step = it // per if per and it % per == 0 else self.last_step.get(rank)
            return [record("eval", self.name, rank, step, phase="result",
                           duration_ms=num(v.group(3)), metrics={"val_loss": num(v.group(2))})]
        it, step, tail = int(m.group(2)), int(m.group(3)), m.group(4)
        every_iteration_a_step = it == step or it + 1 == step
        if not every_iteration_a_step and not any(mark in tail for mark in _STEP_MARKS):
            return []       # an accumulating micro-batch
        if step < 1:
            return []
        loss = _LOSS.search(tail)
        val = _VAL_LOSS.search(tail)
        tm = _ITER_TIME.search(tail)
        iter_ms = num(tm.group(1)) if tm else None
        self.last_step[rank] = step
        if it % step == 0:
            self.iters_per_step[rank] = it // step
        metrics: dict = {"iter": it}
        if val:
            metrics["val_loss"] = num(val.group(1))
        if iter_ms is not None and not every_iteration_a_step:
            metrics["iter_time_ms"] = iter_ms
        rec = record("progress", self.name, rank, step,
                     epoch=int(m.group(1)) if m.group(1) else None,
                     loss=num(loss.group(1)) if loss else None,
                     step_time_ms=iter_ms if every_iteration_a_step else None, metrics=metrics)
        if "step_time_ms" not in rec and CLOCK.now_ns is not None:
            rec["drawn_ns"] = CLOCK.now_ns
        return [rec]
