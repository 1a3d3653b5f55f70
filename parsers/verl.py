"""verl (RL post-training of LLMs: PPO, GRPO, DAPO, and its SFT trainer): the driver prints each
step's metrics as one line,

    (TaskRunner pid=4072644) step:4 - actor/pg_loss:0.010 - actor/grad_norm:0.279 - ...
        - timing_s/gen:1400.087 - timing_s/step:1630.262 - timing_s/update_actor:75.486 - ...

behind Ray's prefix when the driver runs as a Ray task (the job's metrics: no rank).  The
`timing_s/*` values are the step's phases in seconds, one after another inside `step`, the
whole step.  Rollout generation (`gen`), the log-prob and value passes and the actor and
critic updates are the compute lane; sending the trainer's weights to the rollout engine
(`update_weights`) is communication; `save_checkpoint` the checkpoint lane.  The reward,
advantage and validation phases get no lane: they may run on the CPU or in another service.
Validation metrics (`val-core/...`, `val-aux/...`) are an evaluation's result; `step:0` holds
only those, from the validation before the first step.

The SFT trainer prints `step:8 - train/loss:5.06 - train/lr:0.001 - train/mfu:0.0026 - ...`,
with no time: read live, its record says when it was read (`drawn_ns`), its step's end."""
from __future__ import annotations

from .base import CLOCK, Parser, Pattern, num, parsed, phase_lanes, record, seconds_to_ms

_OWN = frozenset({"step", "mem_gb", "timers_ms", "lanes_ms", "metrics"})
"""What a step's record sets itself (see `parsed`)."""
_FIELDS = {"actor/pg_loss": "loss", "train/loss": "loss", "actor/grad_norm": "grad_norm",
           "train/grad_norm": "grad_norm", "actor/lr": "lr", "train/lr": "lr",
           "perf/throughput": "tokens_per_s_per_gpu", "training/epoch": "epoch"}
_LANES = {"gen": "compute", "old_log_prob": "compute", "ref": "compute", "values": "compute",
          "update_actor": "compute", "update_critic": "compute", "update_weights": "communication",
          "save_checkpoint": "checkpoint"}
_MEMORY = ("perf/max_memory_reserved_gb", "perf/max_memory_allocated_gb")
_METRICS = 32
_PAIRS = 400
_EPOCH_OF = Pattern(r"Epoch \d{1,6}+/\d{1,6}+: ")


def _after_bar(s: str) -> str:
    """The SFT trainer's line after its tqdm bar's redraw, which never ends its line: `Epoch
    1/1:  35%|###5      | 7/20 [00:01<00:03,  3.62it/s]step:8 - train/loss:5.06 - ...`."""
    if "%|" in s:
        at = s.find("]step:")
        if at > 0:
            return s[at + 1:]
    return s


class VerlParser(Parser):
    name = "verl"

    def detect(self, line: str) -> bool:
        if "step:" not in line or " - " not in line:
            return False
        s = _after_bar(line.lstrip())
        return s.startswith("step:") and _step(s[:s.find(" - ")]) is not None

    def owns(self, line: str) -> bool:
        """The SFT trainer's bar alone (`Epoch 1/1:  95%|...| 19/20 [..]`, its last redraw after
        the run's last line): its steps are those of the step lines, and Lightning's bar, whose
        label it resembles, counts no epochs of a total."""
        s = line.lstrip()
        return "%|" in s and _EPOCH_OF.match(s) is not None

    def parse(self, line: str, rank: int | None) -> list[dict]:
        s = _after_bar(line.strip())
        if not s.startswith("step:") or " - " not in s:
            return []
        items = s.split(" - ", _PAIRS)
        step = _step(items[0])
        if step is None:
            return []
        fields: dict = {}
        timers: dict = {}
        metrics: dict = {}
        validation: dict = {}
        memory: dict = {}
        for item in items[1:_PAIRS]:
            key, colon, printed = item.rpartition(":")
            v = num(printed) if colon else None
            if v is None:
                continue
            if key.startswith("timing_s/"):
                timers[key[9:]] = seconds_to_ms(v)
            elif key.startswith(("val-core/", "val-aux/", "val/")):
                validation[key] = v
            elif key in _FIELDS:
                fields.setdefault(_FIELDS[key], v)
            elif key == "perf/mfu/actor" or key == "train/mfu":
                fields["mfu"] = round(v * 100, 6) if v <= 1 else v
            elif key in _MEMORY:
                memory[key] = v
            elif len(metrics) < _METRICS:
                metrics[key] = v
        out = []
        if fields or timers or metrics:
            if "step" in timers:
                fields["step_time_ms"] = timers.pop("step")
            lanes = phase_lanes(timers, _LANES)
            if "epoch" in fields:
                fields["epoch"] = int(fields["epoch"])
            mem = next((memory[k] for k in _MEMORY if k in memory), None)
            rec = record("progress", self.name, rank, step, **parsed(fields, _OWN), mem_gb=mem,
                         timers_ms=timers or None, lanes_ms=lanes or None, metrics=metrics or None)
            if "step_time_ms" not in rec and CLOCK.now_ns is not None:
                rec["drawn_ns"] = CLOCK.now_ns     # the SFT trainer times no step: it ended now
            out.append(rec)
        if validation:
            out.append(record("eval", self.name, rank, step, phase="result", metrics=validation))
        return out


def _step(head: str) -> int | None:
    """N of `step:N`; None for any other head."""
    printed = head[5:].strip() if head.startswith("step:") else ""
    return int(printed) if printed.isdigit() and printed.isascii() and len(printed) < 12 else None
