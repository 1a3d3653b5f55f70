"""The lane arithmetic: unit and property tests of the pure interval functions."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ridgescope.pipeline import lanes

MS = 1_000_000


def test_partition_charges_by_priority_and_sums_to_window():
    charges = lanes.partition((0, 100), {
        "input": [(0, 30)],
        "compute": [(20, 60)],
        "communication": [(50, 90)],
    })
    assert charges == {"compute": 40, "transfer": 0, "communication": 30, "checkpoint": 0,
                       "input": 20, "idle": 10}
    assert sum(charges.values()) == 100


def test_overlapping_spans_of_one_lane_are_charged_once():
    charges = lanes.partition((0, 100), {"compute": [(10, 50), (20, 60), (55, 58)]})
    assert charges["compute"] == 50
    assert charges["idle"] == 50


def test_empty_lanes_and_empty_window_give_zero():
    assert lanes.partition((5, 5), {"compute": [(0, 10)]}) == {
        "compute": 0, "transfer": 0, "communication": 0, "checkpoint": 0, "input": 0, "idle": 0}
    charges = lanes.partition((0, 10), {"input": []})
    assert charges["input"] == 0 and charges["idle"] == 10


def test_spans_outside_the_window_are_clipped():
    charges = lanes.partition((100, 200), {"checkpoint": [(50, 150)], "input": [(190, 400)]})
    assert charges["checkpoint"] == 50 and charges["input"] == 10 and charges["idle"] == 40


def test_unknown_lane_and_reversed_window_are_errors():
    with pytest.raises(ValueError, match="unknown lanes: \\['gpu'\\]"):
        lanes.partition((0, 1), {"gpu": []})
    with pytest.raises(ValueError, match="window ends before it starts"):
        lanes.partition((10, 0), {})


def test_split_wait_blames_the_time_until_the_last_rank_arrived():
    assert lanes.split_wait(50 * MS, arrival_ns=0, last_arrival_ns=30 * MS) == (20 * MS, 30 * MS)
    assert lanes.split_wait(10 * MS, arrival_ns=0, last_arrival_ns=30 * MS) == (0, 10 * MS)
    assert lanes.split_wait(10 * MS, arrival_ns=30 * MS, last_arrival_ns=30 * MS) == (10 * MS, 0)


spans = st.lists(st.tuples(st.integers(-50, 1050), st.integers(0, 400)).map(
    lambda t: (t[0], t[0] + t[1])), max_size=12)
lane_maps = st.dictionaries(st.sampled_from(lanes.PRIORITY), spans)


def brute_force(window, lane_map):
    """Charge each ns to the first lane (by priority) that covers it."""
    charges = {lane: 0 for lane in lanes.PRIORITY} | {"idle": 0}
    for t in range(*window):
        for lane in lanes.PRIORITY:
            if any(s <= t < e for s, e in lane_map.get(lane, ())):
                charges[lane] += 1
                break
        else:
            charges["idle"] += 1
    return charges


@settings(max_examples=150, deadline=None)
@given(lo=st.integers(0, 300), length=st.integers(0, 700), lane_map=lane_maps)
def test_partition_matches_brute_force_and_sums_to_window(lo, length, lane_map):
    window = (lo, lo + length)
    charges = lanes.partition(window, lane_map)
    assert sum(charges.values()) == length
    assert all(v >= 0 for v in charges.values())
    assert charges == brute_force(window, lane_map)


@settings(max_examples=200, deadline=None)
@given(a=spans, b=spans)
def test_merge_and_subtract_are_set_operations(a, b):
    ma, mb = lanes.clip_and_merge(a, 0, 1000), lanes.clip_and_merge(b, 0, 1000)
    assert all(s < e for s, e in ma)
    assert all(ma[i][1] < ma[i + 1][0] for i in range(len(ma) - 1))
    assert lanes.total(ma) <= 1000
    points_a = {t for s, e in ma for t in range(s, e)}
    points_b = {t for s, e in mb for t in range(s, e)}
    diff = lanes.subtract(ma, mb)
    assert {t for s, e in diff for t in range(s, e)} == points_a - points_b


def test_forward_of_a_model_without_ddp_is_the_time_from_batch_to_backward():
    from ridgescope.pipeline import breakdown
    spans = [["data_wait", 0, 10], ["backward", 40, 70], ["optimizer", 70, 80]]
    charges = breakdown.rank_lanes_ns({"t0_ns": 0, "t1_ns": 100, "spans": spans, "buckets": []})
    assert charges["input"] == 10 and charges["compute"] == 70 and charges["idle"] == 20
    timed = spans + [["forward", 12, 30]]
    charges = breakdown.rank_lanes_ns({"t0_ns": 0, "t1_ns": 100, "spans": timed, "buckets": []})
    assert charges["compute"] == 18 + 30 + 10  # the timed forward wins; nothing is implied
