"""`explain`'s answers from stdout rows (pure)."""
from __future__ import annotations

from ridgescope.pipeline import explain

CHECKPOINT = "7. Did the optimizer or a checkpoint create the peak?"


def stdout_row(checkpoint_ms: float) -> dict:
    return {"rank": 0, "source": "log", "input_ms": 0.0, "transfer_ms": 0.0, "compute_ms": 0.0,
            "idle_ms": 2300.0, "arrival_ns": 0, "comm_wait_ms": 0.0, "communication_ms": 0.0,
            "checkpoint_ms": checkpoint_ms}


def test_a_save_the_log_named_without_a_time_is_not_denied():
    """A checkpoint step whose save printed no time: its lane is 0, but a save ran."""
    step = {"skew_ms": 0.0, "phase": "checkpoint"}
    answer = dict(explain.answers(step, [stdout_row(0.0)], {}, {}))[CHECKPOINT]
    assert answer == "a checkpoint was saved in this step; the log printed no time for it"
    normal = dict(explain.answers({"skew_ms": 0.0, "phase": "normal"}, [stdout_row(0.0)], {}, {}))
    assert normal[CHECKPOINT] == "no checkpoint was saved in this step"
    timed = dict(explain.answers(step, [stdout_row(460.0)], {}, {}))
    assert timed[CHECKPOINT] == "rank 0 spent 460.0 ms saving a checkpoint"


def test_a_step_whose_culprit_is_not_known_says_whose_rows_it_shows():
    """Stdout of fewer ranks than the job has, and no culprit known, or one named by a report
    (Megatron's straggler report): the ranks the answers name printed the times, which may be
    another rank's (Megatron's slowest-rank timers)."""
    slow = {"skew_ms": 0.0, "phase": "normal", "slow": True, "culprit_rank": -1}
    probes = dict(explain.answers(slow, [stdout_row(0.0)], {}, {}))["Probes"]
    assert probes == ("only stdout saw this step: its time cannot be split into lanes; 1 rank(s) "
                      "printed it, so a rank named below is one that printed, not necessarily the "
                      "one whose time it was")
    named = dict(explain.answers(dict(slow, culprit_rank=0), [stdout_row(0.0)], {}, {}))["Probes"]
    assert named == "only stdout saw this step: its time cannot be split into lanes"
    # a culprit that a framework's report named, which printed no row of its own
    reported = dict(explain.answers(dict(slow, culprit_rank=1), [stdout_row(0.0)], {}, {}))["Probes"]
    assert reported == probes


def test_an_evaluation_step_says_the_log_showed_an_evaluation():
    step = {"skew_ms": 0.0, "phase": "eval", "slow": True, "culprit_rank": 0}
    probes = dict(explain.answers(step, [stdout_row(0.0)], {}, {}))["Probes"]
    assert probes == ("only stdout saw this step: its time cannot be split into lanes; the log "
                      "shows an evaluation ran in this step, which it did not time")

