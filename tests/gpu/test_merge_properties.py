"""Property tests of the per-step merging of GPU activity into busy intervals (pure functions)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ridgescope.pipeline import breakdown, lanes
from ridgescope.probes import cuda_trace

interval = st.tuples(st.integers(-50, 250), st.integers(0, 120)).map(lambda t: (t[0], t[0] + t[1]))
phase_intervals = st.dictionaries(st.sampled_from(cuda_trace.PHASES),
                                  st.lists(interval, max_size=30), max_size=6)
window = st.tuples(st.integers(0, 100), st.integers(0, 150)).map(lambda t: (t[0], t[0] + t[1]))


def covered(intervals, lo, hi) -> set[int]:
    """Brute force: the integer instants [t, t+1) some interval covers inside the window."""
    return {t for s, e in intervals for t in range(max(s, lo), min(e, hi))}


@settings(max_examples=300, deadline=None)
@given(phase_intervals, window)
def test_union_never_exceeds_the_window_and_overlaps_count_once(raw, win):
    lo, hi = win
    spans, busy, added = cuda_trace.merge_window(raw, lo, hi, max_spans=10_000)
    assert added == 0
    for phase in cuda_trace.PHASES:
        mine = [(s, e) for p, s, e in spans if p == phase]
        assert all(lo <= s < e <= hi for s, e in mine)
        assert all(a[1] < b[0] for a, b in zip(mine, mine[1:]))  # sorted, disjoint, not touching
        assert busy[phase] == len(covered(raw.get(phase, []), lo, hi)) <= hi - lo
        assert sum(e - s for s, e in mine) == busy[phase]


@settings(max_examples=300, deadline=None)
@given(phase_intervals, window, st.integers(1, 5))
def test_the_cap_bounds_the_count_and_reports_what_it_added(raw, win, cap):
    lo, hi = win
    spans, busy, added = cuda_trace.merge_window(raw, lo, hi, max_spans=cap)
    total_after = 0
    for phase in cuda_trace.PHASES:
        mine = [(s, e) for p, s, e in spans if p == phase]
        assert len(mine) <= cap
        assert all(lo <= s < e <= hi for s, e in mine)
        assert covered(raw.get(phase, []), lo, hi) <= covered(mine, lo, hi)
        total_after += sum(e - s for s, e in mine)
    assert total_after - sum(busy.values()) == added


@settings(max_examples=300, deadline=None)
@given(phase_intervals, window, st.lists(interval, max_size=5))
def test_lanes_from_gpu_spans_partition_the_step(raw, win, waits):
    lo, hi = win
    spans, busy, _ = cuda_trace.merge_window(raw, lo, hi, max_spans=10_000)
    payload = {"t0_ns": lo, "t1_ns": hi, "buckets": [],
               "spans": [["data_wait", s, e] for s, e in waits] + [["forward", lo, hi]] + spans}
    charges = breakdown.rank_lanes_ns(payload)
    assert sum(charges.values()) == hi - lo
    gpu = any(p in breakdown.GPU_PHASES for p, _, _ in spans)
    if gpu:
        # compute is exactly kernel busy time; the host's forward stamp no longer counts
        assert charges["compute"] == busy["gpu_compute"]
        h2d_alone = covered(raw.get("gpu_h2d", []), lo, hi) - covered(
            raw.get("gpu_compute", []), lo, hi)
        assert charges["transfer"] == len(h2d_alone)
        comm_alone = covered(raw.get("gpu_comm", []), lo, hi) - covered(
            raw.get("gpu_compute", []) + raw.get("gpu_h2d", []), lo, hi)
        assert charges["communication"] == len(comm_alone)
    else:
        assert charges["compute"] == hi - lo


@settings(max_examples=200, deadline=None)
@given(st.lists(interval, max_size=40), st.integers(1, 8))
def test_cap_intervals_keeps_coverage(intervals, cap):
    merged = lanes.clip_and_merge(intervals, -100, 400)
    capped, added = cuda_trace.cap_intervals(merged, cap)
    assert len(capped) <= max(cap, 0) or not merged
    assert lanes.total(capped) == lanes.total(merged) + added
    assert capped[:1] == [] or (capped[0][0] == merged[0][0] and capped[-1][1] == merged[-1][1])
