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


def every_rank(durations: list[float], **extra) -> list[dict]:
    """Every rank's stdout row of a step, no timers printed: each window all idle."""
    return [{"step": 20, "rank": rank, "duration_ms": ms, "source": "log", "world_size": len(durations),
             "arrival_ns": 0, "comm_wait_ms": 0.0, "lane_baseline_ms": {}, "lanes_ms": {"idle": ms}, **extra}
            for rank, ms in enumerate(durations)]


@pytest.mark.parametrize("durations, culprit", [
    ([100.0, 600.0, 101.0, 99.0], 1),       # one rank's own step stands out: it is the one
    ([600.0, 596.0, 603.0, 598.0], -1),     # a synchronous step, as long on every rank: not known
    ([600.0, 350.0], 0),                    # half the excess or more over the others' median
    ([600.0, 400.0], -1),
])
def test_every_rank_printed_and_no_timers_name_a_rank_only_where_its_step_stands_out(durations, culprit):
    """Every rank prints its own step and no timers (each window all idle): the rank whose step
    stands out, by half the step's excess over the others' median, else none (the rows were all
    blamed on the first rank, whatever their lengths)."""
    v, _ = verdict.judge(20, every_rank(durations), HISTORY, CFG)
    assert v["slow"] and (v["cause"], v["culprit_rank"]) == ("unknown", culprit)


def test_rows_ranked_by_the_order_of_an_unlabelled_logs_prints_name_no_culprit():
    """Rows whose rank is only the order in which an unlabelled log printed the step (`ingest`'s
    `print_order`): the step that stands out is slow, but its print is no rank's."""
    v, _ = verdict.judge(20, every_rank([100.0, 600.0, 101.0, 99.0], rank_from_print_order=True), HISTORY, CFG)
    assert v["slow"] and (v["cause"], v["culprit_rank"]) == ("unknown", -1)
