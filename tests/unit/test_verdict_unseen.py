"""Whom a slow step is blamed on where only some ranks print (stdout of rank 0 alone, or of the
last pipeline stage): pure `verdict.judge` on hand-made rows."""
from __future__ import annotations

import pytest

from ridgescope.pipeline import verdict

CFG = verdict.VerdictConfig()
HISTORY = {"durations": [100.0] * 10, "ckpt_durations": []}


def printing_rank(world: int, lanes: dict, **extra) -> dict:
    """Rank 0's stdout row of a 600 ms step, against a 100 ms baseline with empty lanes."""
    timed = sum(lanes.values())
    return {"step": 20, "rank": 0, "duration_ms": 600.0, "source": "log", "world_size": world,
            "arrival_ns": 0, "comm_wait_ms": 0.0, "lane_baseline_ms": {},
            "lanes_ms": {**lanes, "idle": 600.0 - timed}, **extra}


REPORT = {"input": {"rank": 1, "ms": 500.0, "fastest_rank": 0, "fastest_ms": 1.0}}


@pytest.mark.parametrize("world, lanes, extra, cause, culprit", [
    # Megatron's timers are the slowest rank's: they name the lane, not the rank
    (2, {"input": 500.0}, {"lanes_across_ranks": True}, "input", -1),
    # ... unless its straggler report names the rank
    (2, {"input": 500.0}, {"lanes_across_ranks": True, "slowest_ranks": REPORT}, "input", 1),
    # a report that names the slowest rank of other lanes than the cause's names no culprit
    (2, {}, {"slowest_ranks": REPORT}, "unknown", -1),
    # a printing rank's own timers (DeepSpeed's breakdown) name itself
    (2, {"input": 500.0}, {}, "input", 0),
    # nothing printed why: a synchronous step is as slow on every rank
    (2, {}, {}, "unknown", -1),
    # a wait in communication, for a rank that prints nothing
    (2, {"communication": 500.0}, {}, "communication", -1),
    # the log named a save of the printing rank's
    (2, {}, {"untimed_work": ["checkpoint"]}, "checkpoint", 0),
    # every rank of the job prints: the one seen is the one
    (1, {"input": 500.0}, {"lanes_across_ranks": True}, "input", 0),
    (1, {}, {}, "unknown", 0),
    # the job's size not known (0): the ranks seen are the job
    (0, {}, {}, "unknown", 0),
])
def test_a_rank_is_blamed_only_where_what_it_printed_is_its_own(world, lanes, extra, cause, culprit):
    v, _ = verdict.judge(20, [printing_rank(world, lanes, **extra)], HISTORY, CFG)
    assert v["slow"] and (v["cause"], v["culprit_rank"]) == (cause, culprit)
