"""Slow-step verdicts: a robust rolling baseline, the culprit rank and the culprit lane.

Plain functions over plain data (the aggregate agent keeps ``history`` in a Faust table), so
the rules can be tested without Kafka.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from ridgescope.pipeline import lanes
from ridgescope.schemas.kinds import LANES


@dataclass(frozen=True)
class VerdictConfig:
    warmup_steps: int = 3
    """The first steps (compilation, allocator and worker start) never count as slow."""
    min_history: int = 5
    min_eval_history: int = 2
    """Evaluation steps seen before one is judged against them, not against the normal steps
    (an evaluation runs every few hundred steps: waiting for five would call many slow)."""
    window: int = 50
    mad_k: float = 5.0
    rel_threshold: float = 0.25
    """A step must exceed the baseline by this fraction of it, too, to be slow."""
    abs_threshold_ms: float = 20.0
    skew_share: float = 0.3
    """Arrival skew above this share of the excess names the last-arriving rank as culprit."""


def new_history() -> dict:
    return {"durations": [], "ckpt_durations": [], "eval_durations": []}


def robust_baseline(values: list[float]) -> tuple[float, float]:
    """Median and MAD of recent values."""
    median = statistics.median(values)
    mad = statistics.median(abs(v - median) for v in values)
    return median, mad


def slow_threshold_ms(median: float, mad: float, cfg: VerdictConfig) -> float:
    return max(cfg.mad_k * 1.4826 * mad, cfg.rel_threshold * median, cfg.abs_threshold_ms)


def read_slack_ms(rows: list[dict]) -> float:
    """How far a step's time may be off where read times bound it (torchrun's `--tee` passes
    lines on up to 0.1 s late): an excess within it is no evidence of a slow step."""
    return max((r.get("read_late_ms", 0) for r in rows), default=0)


def step_phase(step: int, rows: list[dict], cfg: VerdictConfig) -> str:
    if step <= cfg.warmup_steps:
        return "warmup"
    if any(r["lanes_ms"].get("checkpoint", 0) > 0 or "checkpoint" in r.get("untimed_work", ())
           for r in rows):
        return "checkpoint"
    if any("eval" in r.get("untimed_work", ()) or r.get("evaluated") for r in rows):
        return "eval"   # an evaluation ran in the step's window: its time is no step's usual
    return "normal"


def mean_lanes(rows: list[dict]) -> dict[str, float]:
    keys = LANES + ("idle",)
    return {k: round(sum(r["lanes_ms"].get(k, 0.0) for r in rows) / len(rows), 3) for k in keys}


def _lane_excess(row: dict) -> dict[str, float]:
    """Each lane's excess over this rank's own baseline (correlate keeps it per rank);
    communication wait is the victim's share of communication, never the culprit's excess."""
    baseline = row.get("lane_baseline_ms") or {}
    excess = {}
    for lane in LANES:
        value = row["lanes_ms"].get(lane, 0.0)
        if lane == "communication":
            value -= row.get("comm_wait_ms", 0.0)
        excess[lane] = value - baseline.get(lane, 0.0)
    return excess


def _worked_ms(row: dict) -> float:
    """The part of a rank's window it spent in some lane: not idle, not waiting for others."""
    return row["duration_ms"] - row["lanes_ms"].get("idle", 0.0) - row.get("comm_wait_ms", 0.0)


def pick_culprit(rows: list[dict], excess_ms: float,
                 cfg: VerdictConfig) -> tuple[int, str, float]:
    """(culprit rank, cause, arrival skew in ms) for a slow step."""
    arrivals = sorted(rows, key=lambda r: r["arrival_ns"])
    median_arrival = statistics.median(r["arrival_ns"] for r in rows)
    last = arrivals[-1]
    skew_ms = (last["arrival_ns"] - median_arrival) / 1e6
    if len(rows) > 1 and skew_ms > max(cfg.skew_share * excess_ms, 1.0):
        culprit = last
    elif len(rows) > 1 and not any(_worked_ms(r) > 0 for r in rows):
        # stdout with no printed timers: every window is idle, so the rank whose window stands
        # out, if one does (a synchronous job's ranks all print the slow step long)
        culprit = max(rows, key=lambda r: r["duration_ms"])
        others = [r["duration_ms"] for r in rows if r is not culprit]
        if culprit["duration_ms"] - statistics.median(others) < 0.5 * excess_ms:
            return -1, _an_untimed_save_or_unknown(culprit), skew_ms
    else:
        culprit = max(rows, key=_worked_ms)
    if culprit["source"] != "hook" and not any(
            culprit["lanes_ms"].get(lane, 0.0) > 0 for lane in LANES):
        # stdout with no printed timers: no split, unless the one thing the log says ran in
        # the window, besides the step, is a save
        return culprit["rank"], _an_untimed_save_or_unknown(culprit), skew_ms
    excess = _lane_excess(culprit)
    lane, lane_excess = max(excess.items(), key=lambda kv: kv[1])
    if lane_excess < 0.3 * excess_ms:
        # No lane stands out.  A culprit that saved a checkpoint in this window also spent
        # untimed time around it (state_dict() copies, serialising optimizer state), which
        # lands in idle and compute: the checkpoint is then the likeliest cause.  Not in
        # stdout, where the untimed rest of a window also holds what the log does not time
        # (an evaluation run between the same two lines), unless the log names a save alone.
        if culprit["lanes_ms"].get("checkpoint", 0.0) > 0 and culprit["source"] == "hook":
            return culprit["rank"], "checkpoint", skew_ms
        return culprit["rank"], _an_untimed_save_or_unknown(culprit), skew_ms
    named = _named_slowest(culprit, lane, excess_ms)
    if named is not None:
        return named[0], named[1], skew_ms
    return culprit["rank"], lane, skew_ms


def _an_untimed_save_or_unknown(row: dict) -> str:
    """"checkpoint" for a stdout window in which the log names a checkpoint save whose time it
    did not print, and nothing else that ran between the steps' lines (no evaluation): the save
    is then the likeliest use of the time no printed timer explains.  "unknown" otherwise."""
    return "checkpoint" if row.get("untimed_work") == ["checkpoint"] else "unknown"


def _named_slowest(row: dict, lane: str, excess_ms: float) -> tuple[int, str] | None:
    """(rank, lane) that the framework itself names for a slow step, where it measured every
    rank and printed the slowest of each lane (Megatron's straggler detector): that rank, even
    where one rank alone prints the steps.  A step slow in communication waited for another
    rank (a pipeline stage receiving from the one before): the rank and lane with the widest
    gap between slowest and fastest, where that gap explains the step."""
    named = row.get("slowest_ranks")
    if not isinstance(named, dict):
        return None
    if lane == "communication":
        gaps = {k: v["ms"] - v["fastest_ms"] for k, v in named.items()
                if isinstance(v, dict) and isinstance(v.get("ms"), (int, float))
                and isinstance(v.get("fastest_ms"), (int, float))}
        if gaps:
            widest = max(gaps, key=lambda k: gaps[k])
            if gaps[widest] >= 0.3 * excess_ms and isinstance(named[widest].get("rank"), int):
                return named[widest]["rank"], widest
    slowest = named.get(lane)
    if isinstance(slowest, dict) and isinstance(slowest.get("rank"), int):
        return slowest["rank"], lane
    return None


def attribute_wait(rows: list[dict]) -> list[dict]:
    """Split each rank's exposed communication into running and waiting for the last rank."""
    last = max(r["arrival_ns"] for r in rows)
    out = []
    for row in rows:
        comm_ns = int(row["lanes_ms"].get("communication", 0.0) * 1e6)
        _, wait_ns = lanes.split_wait(comm_ns, row["arrival_ns"], last)
        out.append({**row, "comm_wait_ms": round(wait_ns / 1e6, 3)})
    return out


def judge(step: int, rows: list[dict], history: dict, cfg: VerdictConfig) -> tuple[dict, dict]:
    """Verdict for one step from its per-rank rows; returns (step payload, updated history).

    ``rows`` are step_rank payloads with ``rank`` and ``comm_wait_ms`` (see attribute_wait).
    ``history`` is not mutated.
    """
    duration = max(r["duration_ms"] for r in rows)
    phase = step_phase(step, rows, cfg)
    reference = _reference(phase, history, cfg)
    baseline, mad = robust_baseline(reference) if reference else (0.0, 0.0)
    excess = duration - baseline if baseline else 0.0
    threshold = slow_threshold_ms(baseline, mad, cfg) + read_slack_ms(rows)
    slow = bool(baseline) and phase != "warmup" and excess > threshold
    culprit, cause, skew_ms = -1, "none", 0.0
    if slow:
        culprit, cause, skew_ms = pick_culprit(rows, excess, cfg)
        if _held_up_by_the_unseen(rows, cause):
            culprit = -1
    sources = {r["source"] for r in rows}
    confidence = 0.9 if sources == {"hook"} else 0.3
    if cause == "unknown":
        confidence = min(confidence, 0.5)
    verdict = {
        "step": step, "rank_count": len(rows), "duration_ms": round(duration, 3),
        "baseline_ms": round(baseline, 3), "slow": slow, "cause": cause,
        "culprit_rank": culprit, "excess_ms": round(max(excess, 0.0), 3),
        "lanes_ms": mean_lanes(rows), "skew_ms": round(skew_ms, 3),
        "confidence": confidence, "phase": phase,
    }
    return verdict, _remember(history, duration, phase, cfg)


def _reference(phase: str, history: dict, cfg: VerdictConfig) -> list[float]:
    """The durations a step is judged against: an evaluation step against the evaluations
    before it, once there are enough (it is slow where it is slow for an evaluation), any
    other against the normal steps; none while too few are known."""
    evals = history.get("eval_durations", [])
    if phase == "eval" and len(evals) >= cfg.min_eval_history:
        return evals
    durations = history["durations"]
    return durations if len(durations) >= cfg.min_history else []


def _held_up_by_the_unseen(rows: list[dict], cause: str) -> bool:
    """Stdout where only some ranks print (rank 0 alone, or the last pipeline stage): the rank
    that held the step up may be one that prints nothing, and then is not known.
    - Communication: a printing rank's time in it may be its wait for a rank it cannot see
      (DeepSpeed's breakdown, rank 0's alone); the rank that waited is no culprit.
    - No cause the log printed ("unknown"): a synchronous step is as slow on every rank.
    - Timers that are the slowest rank's (Megatron's `max time across ranks`,
      `lanes_across_ranks`): they name the lane, not the rank.
    A framework's report of the slowest rank of the cause's lane (`slowest_ranks`) names it, and
    a printing rank's own timers (DeepSpeed's) name itself.
    Rows whose rank is only the order in which an unlabelled log printed the step
    (`rank_from_print_order`) name no rank at all."""
    if any(r.get("rank_from_print_order") for r in rows):
        return True
    world = max((r.get("world_size") or 0 for r in rows), default=0)
    if len(rows) >= world or any(r.get("source") != "log" for r in rows):
        return False
    if cause == "communication":
        return True
    if any(cause in (r.get("slowest_ranks") or {}) for r in rows):
        return False
    return cause == "unknown" or any(r.get("lanes_across_ranks") for r in rows)


def _remember(history: dict, duration: float, phase: str, cfg: VerdictConfig) -> dict:
    updated = {"durations": history["durations"], "ckpt_durations": history["ckpt_durations"],
               "eval_durations": history.get("eval_durations", [])}
    if phase == "checkpoint":
        updated["ckpt_durations"] = (updated["ckpt_durations"] + [duration])[-cfg.window:]
    elif phase == "eval":
        updated["eval_durations"] = (updated["eval_durations"] + [duration])[-cfg.window:]
    elif phase == "normal":
        updated["durations"] = (updated["durations"] + [duration])[-cfg.window:]
    return updated
