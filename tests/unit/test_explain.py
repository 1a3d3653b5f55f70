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



def test_lanes_no_printed_timer_measured_are_not_answered_with_zeros():
    """A stdout-only step of a framework that prints no timers (torchtitan): its 0 ms lanes
    are no measurement, and one rank's print time is no arrival to compare."""
    step = {"skew_ms": 0.0, "phase": "normal", "slow": True, "culprit_rank": -1}
    said = dict(explain.answers(step, [stdout_row(0.0)], {}, {}))
    assert said["1. Was the next batch ready?"] == "not measured: the log printed no data-loading timer"
    assert said["2. Did the host-to-device copy overlap with compute?"] == (
        "not measured: the log printed no host-to-device copy timer")
    assert said["3. Were forward and backward kernels continuously available?"] == (
        "not measured: the log printed no compute timer (rank 0's 2300.0 ms are not split)")
    assert said["4. When did each gradient bucket become ready?"] == (
        "not measured: only the hook probe sees gradient buckets")
    assert said["5. Did all ranks arrive together?"] == "cannot tell: only rank 0 printed this step"
    assert said["6. How much communication remained after backward?"] == (
        "not measured: the log printed no communication timer")


def test_lanes_a_framework_times_are_answered_even_where_they_read_zero():
    """Megatron's timers give input, compute and communication: those lanes are answered with
    their numbers, a lane the step's rows leave at 0 too where the rank's usual steps time it;
    the copy, which no timer names, stays unmeasured.  Two ranks' print times are compared."""
    rows = [dict(stdout_row(0.0), input_ms=400.0, compute_ms=900.0, communication_ms=0.0,
                 idle_ms=100.0, arrival_ns=0),
            dict(stdout_row(0.0), rank=1, input_ms=5.0, compute_ms=900.0, communication_ms=0.0,
                 idle_ms=100.0, arrival_ns=2_000_000)]
    baselines = {0: {"input": 5.0, "compute": 880.0, "communication": 30.0},
                 1: {"input": 5.0, "compute": 880.0, "communication": 30.0}}
    said = dict(explain.answers({"skew_ms": 1.0, "phase": "normal"}, rows, baselines, {}))
    assert said["1. Was the next batch ready?"] == (
        "rank 0 waited 400.0 ms for its batch (+395.0 ms vs its usual 5.0 ms); median of all "
        "ranks 202.5 ms")
    assert said["2. Did the host-to-device copy overlap with compute?"] == (
        "not measured: the log printed no host-to-device copy timer")
    assert said["3. Were forward and backward kernels continuously available?"].startswith(
        "rank 0 computed 900.0 ms (+20.0 ms vs its usual 880.0 ms)")
    assert said["5. Did all ranks arrive together?"] == (
        "yes: arrival skew 1.0 ms (from when each rank printed the step)")
    assert said["6. How much communication remained after backward?"] == (
        "exposed communication per rank: 0.0 ms running, 0.0 ms waiting for the last rank "
        "(mean of 2 ranks)")


def test_a_hooked_step_answers_every_lane():
    """The hook probe measures every lane: a 0 ms lane is a measured 0."""
    row = dict(stdout_row(0.0), source="hook", arrival_ns=0)
    said = dict(explain.answers({"skew_ms": 0.0, "phase": "normal"}, [row], {}, {}))
    assert said["1. Was the next batch ready?"].startswith("rank 0 waited 0.0 ms for its batch")
    assert said["2. Did the host-to-device copy overlap with compute?"] == (
        "no exposed host-to-device copy was recorded")
    assert said["4. When did each gradient bucket become ready?"] == (
        "last bucket ready, relative to the first rank (ms): rank 0 +0.0")
    assert said["5. Did all ranks arrive together?"] == "yes: arrival skew 0.0 ms"
    assert said["3. Were forward and backward kernels continuously available?"] == (
        "rank 0 computed 0.0 ms (+0.0 ms vs its usual 0.0 ms); idle on that rank 2300.0 ms")
    assert said["6. How much communication remained after backward?"] == (
        "exposed communication per rank: 0.0 ms running, 0.0 ms waiting for the last rank (mean of 1 ranks)")
