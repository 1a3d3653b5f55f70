"""Mixed precision's skipped steps: a dynamic loss scaler found inf or NaN in the fp16 gradients,
threw the step's update away and lowered its scale.  A few in a run's first steps are the scaler
finding its level; a run of them later says the loss is diverging, and each is a step that cost
its time and did no update.

What each library prints, once an overflow:
- DeepSpeed's ZeRO loss scaler (and stage 3's, once `[deepscale]`), rank 0:
  `[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768`, or,
  while its hysteresis lasts, `... Attempted loss scale: 65536, but hysteresis is 2. Reducing
  hysteresis to 1` (the scale kept); bf16's without the scales.
- DeepSpeed's fused fp16 optimizer, every rank: `Grad overflow on iteration 0` (its logger's header on
  the line before), `Reducing dynamic loss scale from 65536 to 32768.0`; then rank 0:
  `[Rank 0] Overflow detected. Skipping step. Attempted loss scale: 65536, reducing to 32768.0`
  (the same overflow again: not counted twice); earlier releases `[deepspeed] fp16 dynamic loss
  scale overflow! Skipping step. Attempted loss scale: ..., reducing to ...`.
- apex's FP16_Optimizer (and the MLPerf trainers built on it): `Grad overflow on iteration 0`, then
  `Using dynamic loss scale of 32768`; amp: `Gradient overflow.  Skipping step, loss scaler 0
  reducing loss scale to 32768.0`.
- fairseq: `NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: 64.0`
  (earlier `| WARNING: overflow detected, setting loss scale to: 0.25`, `AMP: overflow detected,
  setting scale to: 64.0`).
"""
from __future__ import annotations

from .base import Pattern, num

_NUM = r"([0-9][0-9.]*+(?:e[-+]?[0-9]++)?)"
SKIPPING = Pattern(
    r"(?:OVERFLOW!(?: Rank (\d{1,7}+))? Skipping step\.|Overflow detected\. Skipping step\."
    r"|loss scale overflow! Skipping step\.)"
    r"(?: Attempted loss scale: " + _NUM + r"(?:, reducing to " + _NUM
    + r"|, but hysteresis is (\d{1,6}+)\. Reducing hysteresis to (\d{1,6}+))?)?")
AMP = Pattern(r"Gradient overflow\. {1,2}+Skipping step, loss scaler \d++ reducing loss scale to " + _NUM)
FAIRSEQ = Pattern(r"overflow detected, (?:ignoring gradient, )?setting (?:loss )?scale to:? " + _NUM)
ITERATION = Pattern(r"Grad overflow on iteration\s++(\d{1,12}+)(?!\d)")
REDUCING = Pattern(r"Reducing dynamic loss scale from " + _NUM + r" to " + _NUM)
USING = Pattern(r"Using dynamic loss scale of\s++" + _NUM)


def _scale(text: str | None):
    return num(text.rstrip(".")) if text else None


def skipping(line: str) -> dict | None:
    """The fields of a line that says its step was skipped, with the scale it tried and the one it
    goes on with; None for any other line.  `rank` where DeepSpeed names the rank that says it."""
    if "kipping step" in line:
        m = SKIPPING.search(line)
        if m:
            rank, tried, lowered, hysteresis, left = m.groups()
            fields = {"loss_scale": _scale(tried)}
            if lowered:
                fields["new_loss_scale"] = _scale(lowered)
            elif hysteresis:
                fields.update(new_loss_scale=_scale(tried), hysteresis=int(hysteresis), hysteresis_left=int(left))
            if rank:
                fields["rank"] = int(rank)
            return fields
        m = AMP.search(line)
        if m:
            return {"new_loss_scale": _scale(m.group(1))}
    elif "overflow detected, " in line:
        m = FAIRSEQ.search(line)
        if m:
            return {"new_loss_scale": _scale(m.group(1))}
    return None


class ScalerLines:
    """The two-line form (`Grad overflow on iteration N`, then the new scale) read as one overflow
    of the rank that printed it.  Ranks that print it unprefixed interleave their lines, so each
    rank holds a queue of the iterations still waiting for their scale."""

    def __init__(self) -> None:
        self.pending: dict = {}     # rank -> iterations whose scale line has not come yet
        self.seen = False
        """Has this stream printed the two-line form?  Then DeepSpeed's `Overflow detected.
        Skipping step.` after it is the same overflow told again."""

    def read(self, line: str, rank) -> dict | None:
        """The overflow a scale line completes, or None (an iteration line is held)."""
        if "Grad overflow on iteration" in line:
            m = ITERATION.search(line)
            if m:
                self.pending.setdefault(rank, []).append(int(m.group(1)))
                self.seen = True
            return None
        waiting = self.pending.get(rank)
        if not waiting:
            return None
        m = REDUCING.search(line)
        if m:
            return {"iteration": waiting.pop(0), "loss_scale": _scale(m.group(1)),
                    "new_loss_scale": _scale(m.group(2))}
        m = USING.search(line)
        if m:
            return {"iteration": waiting.pop(0), "new_loss_scale": _scale(m.group(1))}
        return None

    def flush(self) -> list[tuple]:
        """(rank, fields) of each iteration whose scale line never came."""
        out = [(rank, {"iteration": it}) for rank, its in self.pending.items() for it in its]
        self.pending.clear()
        return out
