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


# --- the incremental path: flat interval lists merged as records arrive ----------------------------

def pairs(flat):
    return list(zip(flat[0::2], flat[1::2]))


positive = st.tuples(st.integers(-50, 250), st.integers(1, 120)).map(lambda t: (t[0], t[0] + t[1]))


@settings(max_examples=300, deadline=None)
@given(st.lists(positive, max_size=40))
def test_merge_into_in_any_order_is_the_union(intervals):
    flat: list = []
    count = 0
    for s, e in intervals:
        count += cuda_trace.merge_into(flat, s, e)
        assert all(a < b for a, b in zip(flat, flat[1:]))  # disjoint, sorted, not touching
    assert pairs(flat) == lanes.clip_and_merge(intervals, -10**9, 10**9)
    assert count == len(flat) // 2


@settings(max_examples=200, deadline=None)
@given(st.lists(positive, min_size=1, max_size=30), positive)
def test_merge_into_refuses_only_a_new_interval(intervals, extra):
    flat: list = []
    for s, e in intervals:
        cuda_trace.merge_into(flat, s, e)
    before = list(flat)
    got = cuda_trace.merge_into(flat, *extra, allow_new=False)
    if got is None:
        assert flat == before and all(e < extra[0] or s > extra[1] for s, e in pairs(before))
    else:
        assert got <= 0


@settings(max_examples=300, deadline=None)
@given(st.lists(positive, max_size=30), st.integers(-60, 380))
def test_split_and_clip_cut_at_the_instant(intervals, cut):
    flat: list = []
    for s, e in intervals:
        cuda_trace.merge_into(flat, s, e)
    before, after = cuda_trace.split_flat(flat, cut)
    assert pairs(before) == lanes.clip_and_merge(pairs(flat), -10**9, cut)
    assert pairs(after) == lanes.clip_and_merge(pairs(flat), cut, 10**9)
    clipped, _ = cuda_trace.clip_flat(flat, cut)
    assert clipped == after
    assert cuda_trace.busy_flat(before) + cuda_trace.busy_flat(after) == lanes.total(pairs(flat))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-50, 250), st.sampled_from([1, 2, 5, 9])).map(
    lambda t: (t[0], t[0] + t[1])), max_size=40), st.integers(1, 8))
def test_cap_flat_is_cap_intervals(intervals, cap):
    merged = lanes.clip_and_merge(intervals, -100, 400)  # small lengths: many equal gaps
    flat = [x for iv in merged for x in iv]
    capped, added = cuda_trace.cap_flat(flat, cap)
    assert (pairs(capped), added) == cuda_trace.cap_intervals(merged, cap)


def _as_records(raw):
    from .fake_cupti import kernel, memcpy, memset
    out = []
    for phase, items in raw.items():
        for s, e in items:
            if phase == "gpu_compute":
                out.append(kernel(s, e) if s % 3 else memset(s, e))
            elif phase == "gpu_comm":
                out.append(kernel(s, e, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"))
            elif phase == "gpu_h2d":
                out.append(memcpy(s, e, 1))
            elif phase == "gpu_d2h":
                out.append(memcpy(s, e, 2))
            elif phase == "gpu_d2d":
                out.append(memcpy(s, e, 8))
            else:
                from .fake_cupti import sync
                out.append(sync(s, e))
    return out


@settings(max_examples=200, deadline=None)
@given(phase_intervals, st.lists(st.integers(1, 80), min_size=1, max_size=5), st.randoms(),
       st.integers(1, 9), st.integers(1, 4))
def test_the_tier_sends_what_merge_window_would(raw, widths, rnd, chunk, cap):
    """Records delivered in any order and buffer sizes, each before the step that it falls in
    is taken: every window gets exactly merge_window of all records (clip, union, cap)."""
    from .fake_cupti import FakeCupti
    fake = FakeCupti(chunk=chunk)
    tier = cuda_trace.CuptiTier(fake)
    assert tier.arm()
    tier.offset_ns = 0
    tier.max_records = 10**6
    edges = [0]
    for w in widths:
        edges.append(edges[-1] + w)
    records = _as_records(raw)
    rnd.shuffle(records)
    # each record is delivered before the first window that it overlaps is taken
    due = {}
    for record in records:
        first = next((k for k in range(len(widths)) if record.end > edges[k]), 0)
        due.setdefault(rnd.randint(0, first), []).append(record)
    old_cap = cuda_trace.MAX_SPANS_PER_PHASE
    cuda_trace.MAX_SPANS_PER_PHASE = cap
    try:
        for k in range(len(widths)):
            fake.push(*due.get(k, []))
            got = tier.collect(edges[k], edges[k + 1])
            want = cuda_trace.merge_window(raw, edges[k], edges[k + 1], max_spans=cap)
            assert (got["spans"], got["busy_ns"], got["coalesced_ns"]) == want
            assert "late" not in got["counters"]
    finally:
        cuda_trace.MAX_SPANS_PER_PHASE = old_cap
    assert tier.held == len([1 for iv in tier.live.values() for _ in iv[0::2]])
