"""slime (THUDM's RL post-training: Megatron trains, SGLang generates the rollouts): each training
step's metrics as a dict, and each rollout's phase timers as another, both behind Ray's prefix of
the training actor,

    (MegatronTrainRayActor pid=38610) step 2: {'train/loss': 0.0123, 'train/grad_norm': 0.35, ...}
    (MegatronTrainRayActor pid=38610) [2026-01-05 12:20:29] train_metric_utils.py:44 - perf 2:
        {'perf/sleep_time': 4.03, 'perf/train_wait_time': 11.33, 'perf/actor_train_time': 1.02,
         'perf/train_time': 2.84, 'perf/step_time': 14.18, 'perf/wait_time_ratio': 0.79, ...}

(`print(f"step {accumulated_step_id}: {log_dict}")` in its Megatron backend, the optimizer
step counted from 0 over the rollouts; `logger.info(f"perf {rollout_id}: {log_dict}")` in
`train_metric_utils.py`, the rollout from 0).  With one optimizer step a rollout (slime's
default) the two count alike, and the perf line's timers join the step's record.

`perf/step_time` is the trainer's wait for its rollout plus its training (`train_wait_time` +
`train_time`): the step's time.  Lanes: the actor's update and the log-prob passes are
compute, preparing the rollout's data input, sending the weights to the rollout engines
(`update_weights`) communication, saving the model the checkpoint lane.  The wait for the
rollout gets no lane (generation ran on the engines, not on the trainer's GPUs): it shows as
the step's idle time.  The rollout manager's own `perf` dict (`{'rollout/response_len/mean': ..,
'perf/rollout_time': ..}`) holds no step time, and gives no record."""
from __future__ import annotations

from .base import Parser, Pattern, phase_lanes, record, seconds_to_ms
from .pydict import parse_flat_dict

STEP = Pattern(r"step (\d{1,12}+): (\{'train/.{0,8000}+)")
PERF = Pattern(r"(?:\[[^\]]{1,40}+\] [\w.]{1,80}+:\d{1,6}+ - )?perf (\d{1,12}+): (\{'perf/.{0,8000}+)")
_FIELDS = {"train/loss": "loss", "train/grad_norm": "grad_norm", "train/lr-pg_0": "lr"}
_LANES = {"actor_train": "compute", "log_probs": "compute", "ref_log_probs": "compute",
          "data_preprocess": "input", "update_weights": "communication", "save_model": "checkpoint"}
_METRICS = 32


class SlimeParser(Parser):
    name = "slime"

    def detect(self, line: str) -> bool:
        s = line.lstrip()
        return (s.startswith("step ") and ": {'train/" in s) or (
            "perf " in s and ": {'perf/" in s and PERF.match(s) is not None)

    def parse(self, line: str, rank: int | None) -> list[dict]:
        s = line.strip()
        if s.startswith("step "):
            m = STEP.match(s)
            return self._step(int(m.group(1)), m.group(2), rank) if m is not None else []
        if "perf " in s:
            m = PERF.match(s)
            if m is not None:
                return self._perf(int(m.group(1)), m.group(2), rank)
        return []

    def _step(self, step: int, body: str, rank) -> list[dict]:
        fields: dict = {}
        metrics: dict = {}
        for key, v in _numbers(body):
            if key in _FIELDS:
                fields[_FIELDS[key]] = v
            elif len(metrics) < _METRICS:
                metrics[key.removeprefix("train/")] = v
        if not fields and not metrics:
            return []
        return [record("progress", self.name, rank, step, **fields, metrics=metrics or None)]

    def _perf(self, step: int, body: str, rank) -> list[dict]:
        timers: dict = {}
        metrics: dict = {}
        step_s = None
        for key, v in _numbers(body):
            name = key.partition("/")[2]
            if key == "perf/step_time":
                step_s = v
            elif key.startswith("perf/") and name.endswith("_time") and name != "train_time":
                timers[name[:-5]] = seconds_to_ms(v)     # (`train_time` holds the phases after the wait)
            elif len(metrics) < _METRICS:
                metrics[key] = v
        if step_s is None:
            return []
        return [record("timing", self.name, rank, step, step_time_ms=seconds_to_ms(step_s), timers_ms=timers,
                       lanes_ms=phase_lanes(timers, _LANES), metrics=metrics or None)]


def _numbers(body: str) -> list[tuple[str, float]]:
    """The (key, number) items of a printed dict; nothing where it is no dict."""
    d = parse_flat_dict(body) or {}
    return [(key, v) for key, v in d.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
