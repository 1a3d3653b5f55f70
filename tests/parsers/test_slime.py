"""slime's step and perf dicts, as its training actor prints them behind Ray's prefix (the
`print(f"step {accumulated_step_id}: {log_dict}")` of its Megatron backend, the
`logger.info(f"perf {rollout_id}: {log_dict}")` of `train_metric_utils.py`, with the timers
that a run in slime's PR #1102 logged)."""
from __future__ import annotations

from pytest import approx

from ridgescope.parsers import Dispatcher

from .conftest import feed_all

ACTOR = "(MegatronTrainRayActor pid=38610) "


def perf_line(rollout: int, wait: float, train: float, save: float | None = None) -> str:
    timers = {"sleep": 4.04, "update_weights": 0.34, "wake_up": 1.94, "data_preprocess": 0.002,
              "train_wait": wait, "ref_log_probs": 1.4, "log_probs": 0.11, "actor_train": 1.02, "train": train}
    if save is not None:
        timers["save_model"] = save
    d = {f"perf/{k}_time": v for k, v in timers.items()}
    d.update({"perf/actor_train_tflops": 3.7, "perf/step_time": wait + train, "perf/wait_time_ratio": wait / (wait + train)})
    return f"{ACTOR}[2026-01-05 12:20:29] train_metric_utils.py:44 - perf {rollout}: {d!r}"


def step_line(step: int, loss: float) -> str:
    d = {"train/loss": loss, "train/pg_loss": loss, "train/pg_clipfrac": 0.0, "train/ppo_kl": 0.0,
         "train/grad_norm": 0.35, "train/lr-pg_0": 1e-06}
    return f"{ACTOR}step {step}: {d!r}"


def test_steps_and_their_phases():
    """A step's metrics, then its rollout's timers: the step's time is the wait for the rollout
    plus the training; the phases are lanes but for the wait, which shows as idle."""
    rollout = (f"{ACTOR}[2026-01-05 12:20:20] rollout.py:1193 - perf 2: {{'rollout/response_len/mean': 2773.7, "
               f"'perf/rollout_time': 371.18, 'perf/tokens_per_gpu_per_sec': 239.13}}")
    lines = [step_line(2, 0.0123), rollout, perf_line(2, 11.33, 2.84), step_line(3, 0.0101), perf_line(3, 9.0, 10.0, save=7.5)]
    recs, _ = feed_all([line.encode() for line in lines])
    d = Dispatcher()
    assert d.feed_chunk(("\n".join(lines) + "\n").encode()) + d.flush() == recs
    assert [(r["kind"], r["step"], r["framework"]) for r in recs] == [
        ("progress", 2, "slime"), ("timing", 2, "slime"), ("progress", 3, "slime"), ("timing", 3, "slime")]
    step = recs[0]
    assert (step["loss"], step["grad_norm"], step["lr"]) == (0.0123, 0.35, 1e-06)
    assert step["metrics"] == {"pg_loss": 0.0123, "pg_clipfrac": 0.0, "ppo_kl": 0.0}
    timing = recs[1]
    assert timing["step_time_ms"] == approx(14170)
    assert timing["timers_ms"]["train_wait"] == approx(11330) and "train" not in timing["timers_ms"]
    assert timing["lanes_ms"] == {"compute": approx(1400 + 110 + 1020), "input": approx(2),
                                  "communication": approx(340)}
    assert recs[3]["lanes_ms"]["checkpoint"] == approx(7500) and recs[3]["step_time_ms"] == approx(19000)
