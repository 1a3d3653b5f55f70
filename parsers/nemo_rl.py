"""NeMo RL (NVIDIA's post-training library: GRPO, SFT, DPO, its `examples/run_*.py`): the driver
prints each step as a block,

    ========================= Epoch 1/1 =========================
    ========================= Step 3/20 =========================
    ▶ Preparing batch...                       (and the step's other phases as they begin)
    📊 Training Results:
      • Loss: 0.1032
      • Avg Reward: 0.3486                     (GRPO's; SFT prints the loss alone)
    ⏱️  Timing:
      • Total step time: 66.55s
      • generation: 32.52s (48.9%)             (each phase, the longest first)
      • policy_training: 25.05s (37.6%)

The header counts the steps of the epoch, out of the epoch's batches (or the run's steps where
fewer): the run's step is the epochs before times that, plus the header's.  The block's bullets
give one progress record, when the first line after its timing bullets ends it (or the next
header, or the stream).  A validation inside the step prints its bullets deeper: one eval
record at that step, from `▶ Starting validation at step 5...` on.  What the validation prints
(generation's bars, samples) is passed over up to its results (`📊 Validation Results:`, or
its first bullet); its bullets give the record's values (`    • Validation loss: 0.6645`,
SFT's and DPO's; GRPO's `    • Accuracy: 0.4500`, a line with no word the pre-check knows),
its timing bullet its duration (`    • Total validation time: 32.10s`).  A traceback, or
VALIDATION_LINES lines with no results, drops the record; a validation seen from its results
or its time alone gives what they say.

Phases timed: rollout generation, the log-prob passes and the policy's update are the compute
lane, loading and preparing the batch the input lane, moving the policy's
weights to the generation engine (`weight_sync`, the refit's `transfer_and_update_weights`)
communication, and `checkpointing` the checkpoint lane; the rest (rewards, the engines' wake and
sleep) gets no lane."""
from __future__ import annotations

from .base import CLOCK, Parser, Pattern, num, phase_lanes, record, seconds_to_ms

HEADER = Pattern(r"\s*+={25} (Step|Epoch) (\d{1,9}+)/(\d{1,9}+) ={25}\s*+$")
BULLET = "  \u2022 "
DEEP_BULLET = "    \u2022 "
TIMED = Pattern(r"  \u2022 ([\w/.-]{1,120}+): (\d{1,12}+(?:\.\d{1,12}+)?)s \(\d{1,12}+(?:\.\d{1,6}+)?%\)\s*+$")
ITEM = Pattern(r"  \u2022 ([^:]{1,120}+): (\S{1,40}+)\s*+$")
TOTAL = "  \u2022 Total step time: "
VALIDATION_TIME = "    \u2022 Total validation time: "
VALIDATION_START = "\u25b6 Starting validation"
VALIDATION_RESULTS = "Validation Results"
VALIDATION_LINES = 5000
"""The most lines a validation prints before its results (its samples, its generation's bars)."""
_AT_STEP = Pattern(r"at step (\d{1,9}+)")
_LANES = {"generation": "compute", "exposed_generation": "compute", "policy_and_reference_logprobs": "compute",
          "policy_training": "compute", "data_processing": "input", "buffer_sampling": "input",
          "weight_sync": "communication", "prepare_for_generation/transfer_and_update_weights": "communication",
          "checkpointing": "checkpoint"}
_METRICS = 32


class NemoRLParser(Parser):
    name = "nemo_rl"

    def __init__(self) -> None:
        self.open: dict = {}        # rank -> the step's record whose bullets are being read
        self.timing: set = set()    # ranks whose open record's timing bullets have begun
        self.at: dict = {}          # rank -> (epoch, the header's step, steps an epoch)
        self.validating: dict = {}  # rank -> lines left for its open validation's results to begin

    def detect(self, line: str) -> bool:
        return ((line.lstrip().startswith("=" * 25) and HEADER.match(line) is not None)
                or line.startswith((TOTAL, BULLET + "Loss: ", VALIDATION_START)))

    def parse(self, line: str, rank: int | None) -> list[dict]:
        if rank in self.open:
            if self._adds(line, rank):
                return []
            closed = self._close(rank)
            out = [closed] if closed is not None else []
        else:
            out = []
        if "=" * 25 in line:
            m = HEADER.match(line)
            if m is not None:
                n, of = int(m.group(2)), int(m.group(3))
                epoch, _, _ = self.at.get(rank, (None, None, None))
                self.at[rank] = (n, None, None) if m.group(1) == "Epoch" else (epoch, n, of)
                return out
        if line.startswith(VALIDATION_START):
            step = self._step(rank)
            if step is None:        # (a validation before the first step: `at step 0`)
                m = _AT_STEP.search(line)
                step = int(m.group(1)) if m is not None else None
            self.open[rank] = record("eval", self.name, rank, step, phase="result")
            self.validating[rank] = VALIDATION_LINES
            return out
        if line.startswith(VALIDATION_TIME):
            seconds = num(line[len(VALIDATION_TIME):].strip().rstrip("s"))
            if seconds is not None:
                out.append(record("eval", self.name, rank, self._step(rank), phase="result",
                                  duration_ms=seconds_to_ms(seconds)))
            return out
        if line.startswith((BULLET + "Loss: ", TOTAL, DEEP_BULLET + "Validation ")):
            kind = "eval" if line.startswith(DEEP_BULLET) else "progress"
            rec = self.open[rank] = record(kind, self.name, rank, self._step(rank))
            if kind == "eval":
                rec["phase"] = "result"
            self._adds(line, rank)
        return out

    def _step(self, rank) -> int | None:
        epoch, n, of = self.at.get(rank, (None, None, None))
        if n is None:
            return None
        return n if epoch is None or of is None else (epoch - 1) * of + n

    def _adds(self, line: str, rank) -> bool:
        """Does `line` belong to the rank's open block?  Adds its value to the record."""
        rec = self.open[rank]
        if rec["kind"] == "eval":
            left = self.validating.get(rank)
            if left is None:
                return self._adds_validation(line, rec)
            if VALIDATION_RESULTS in line or line.startswith(DEEP_BULLET):    # (its header, or a bullet)
                del self.validating[rank]
                return self._adds_validation(line, rec) if line.startswith(DEEP_BULLET) else True
            if left <= 1 or "Traceback (most recent call last)" in line:
                self.validating[rank] = 0       # no results: `_close` drops the record
                return False
            self.validating[rank] = left - 1
            return True
        if not line.startswith(BULLET):
            # its headers, the blank lines before them; after the timing bullets, the block's end
            return rank not in self.timing and (not line.strip() or line.rstrip().endswith(":"))
        if line.startswith(TOTAL):
            seconds = num(line[len(TOTAL):].strip().rstrip("s"))
            if seconds is not None:
                rec["step_time_ms"] = seconds_to_ms(seconds)
            self.timing.add(rank)
            return True
        timed = TIMED.match(line)
        if timed is not None:
            rec.setdefault("timers_ms", {})[timed.group(1)] = seconds_to_ms(float(timed.group(2)))
            self.timing.add(rank)
            return True
        if rank in self.timing:
            return False
        item = ITEM.match(line)
        if item is not None:
            key, v = item.group(1).strip(), num(item.group(2))
            if v is not None:
                if key == "Loss":
                    rec["loss"] = v
                elif len(rec.get("metrics", ())) < _METRICS:
                    rec.setdefault("metrics", {})[key.lower().replace(" ", "_")] = v
        return True

    @staticmethod
    def _adds_validation(line: str, rec: dict) -> bool:
        """A validation's bullet (`    • Validation loss: 0.6645`, `    • Accuracy: 0.4500`), its
        time's, or a blank line or header among them (`  ⏱️  Validation Timing:`)."""
        if not line.startswith(DEEP_BULLET):
            return "duration_ms" not in rec and (not line.strip() or line.rstrip().endswith("Timing:"))
        if line.startswith(VALIDATION_TIME):
            seconds = num(line[len(VALIDATION_TIME):].strip().rstrip("s"))
            if seconds is not None:
                rec["duration_ms"] = seconds_to_ms(seconds)
            return True
        item = ITEM.match(line, 2)
        v = num(item.group(2)) if item is not None else None
        if v is not None:
            key = item.group(1).strip().removeprefix("Validation ").replace(" ", "_").lower()
            if key == "loss":
                rec["loss"] = v
            elif len(rec.get("metrics", ())) < _METRICS:
                rec.setdefault("metrics", {})[key] = v
        return True

    def _close(self, rank) -> dict | None:
        rec = self.open.pop(rank)
        self.timing.discard(rank)
        if rec["kind"] == "eval":
            return None if self.validating.pop(rank, None) is not None else rec
        timers = rec.get("timers_ms")
        if timers:
            if "exposed_generation" in timers:     # (the part of `generation` the step waited for)
                timers = {k: v for k, v in timers.items() if k != "generation"}
            lanes = phase_lanes(timers, _LANES)
            if lanes:
                rec["lanes_ms"] = lanes
        epoch, n, of = self.at.get(rank, (None, None, None))
        if n is not None and of is not None:
            rec.update(iter_in_epoch=n, iters_per_epoch=of)
        if epoch is not None:
            rec["epoch"] = epoch
        if "step_time_ms" not in rec and CLOCK.now_ns is not None:
            rec["drawn_ns"] = CLOCK.now_ns      # read live with no step time: its step ended now
        return rec

    def flush(self) -> list[dict]:
        return [rec for rec in (self._close(rank) for rank in list(self.open)) if rec is not None]
