"""The CUPTI tier against a fake cupti-python, and its path into the step summary and lanes."""
from __future__ import annotations

import pytest

from ridgescope.pipeline import breakdown
from ridgescope.probes import cuda_trace
from ridgescope.probes.torch_hooks import StepRecorder

from .fake_cupti import ActivityKind, FakeCupti, kernel, memcpy, memset, sync

MS = 1_000_000
KINDS = {int(ActivityKind.CONCURRENT_KERNEL): "kernel", int(ActivityKind.MEMCPY): "memcpy",
         int(ActivityKind.MEMSET): "memset", int(ActivityKind.SYNCHRONIZATION): "sync"}


def armed(fake=None, **kw):
    sent = []
    tier = cuda_trace.CuptiTier(fake or FakeCupti(), emit=lambda *a: sent.append(a), **kw)
    assert tier.arm()
    tier.offset_ns = 0  # the fake's clock is the wall clock
    return tier, sent


@pytest.mark.parametrize("name,phase", [
    ("ncclKernel_AllReduce_RING_LL_Sum_float", "gpu_comm"),
    ("ncclDevKernel_AllGather_RING_LL", "gpu_comm"),
    ("_Z29ncclDevKernel_ReduceScatter_Sum_bf16_RING_LLP26ncclDevKernelArgsStorageILm4096EE",
     "gpu_comm"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
     "gpu_compute"),
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_cga1x2x1", "gpu_compute"),
])
def test_kernels_and_nccl_kernels(name, phase):
    assert cuda_trace.classify(kernel(10, 20, name), KINDS)[0] == phase


def test_copies_memsets_and_syncs():
    got = cuda_trace.classify(memcpy(0, 5, 1, src_kind=2), KINDS)
    assert got[:3] == ("gpu_h2d", 0, 5) and got[3]["h2d_pinned_bytes"] == 1 << 20
    assert "h2d_pageable_bytes" in cuda_trace.classify(memcpy(0, 5, 1, src_kind=1), KINDS)[3]
    assert cuda_trace.classify(memcpy(0, 5, 2, dst_kind=1), KINDS)[0] == "gpu_d2h"
    assert cuda_trace.classify(memcpy(0, 5, 8), KINDS)[0] == "gpu_d2d"
    assert cuda_trace.classify(memcpy(0, 5, 10), KINDS)[0] == "gpu_d2d"  # peer copy
    assert cuda_trace.classify(memset(0, 5), KINDS)[0] == "gpu_compute"
    assert cuda_trace.classify(sync(0, 5), KINDS)[0] == "gpu_sync"
    assert cuda_trace.classify(kernel(9, 5), KINDS) is None  # end before start: skipped


def test_concurrent_kernels_are_merged_and_clipped_to_the_window():
    fake = FakeCupti()
    tier, _ = armed(fake)
    fake.push(kernel(100, 300), kernel(200, 400),  # two streams at once: 100-400 once
              kernel(500, 700, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"),
              memcpy(50, 150, 1), kernel(900, 1200))  # crosses the window end
    got = tier.collect(0, 1000)
    assert got["busy_ns"]["gpu_compute"] == 300 + 100
    assert got["busy_ns"]["gpu_comm"] == 200 and got["busy_ns"]["gpu_h2d"] == 100
    assert ["gpu_compute", 900, 1000] in got["spans"]
    assert got["counters"] == {"kernels": 3, "nccl_kernels": 1, "memcpy_h2d": 1,
                               "h2d_pinned_bytes": 1 << 20}
    nxt = tier.collect(1000, 2000)  # the rest of the crossing kernel belongs to the next one
    assert nxt["busy_ns"]["gpu_compute"] == 200 and tier.held == 0


def test_cupti_buffer_overflow_and_our_bound_are_counted():
    fake = FakeCupti(capacity=50)
    tier, sent = armed(fake, max_records=30)
    fake.push(*[kernel(i * 10, i * 10 + 5) for i in range(80)])  # 30 dropped by CUPTI
    rec = StepRecorder(lambda *a: sent.append(a), lambda: 1)
    rec.gpu = tier
    rec.span("forward", 0, 100)
    rec.end_step(1000)
    rec.end_step(2000)
    spans_msg = [a for a in sent if a[0] == "step_spans"][0][1]
    assert spans_msg["gpu"]["dropped"] == 30 + 20  # CUPTI's 30, then 20 past our 30 held
    sample = [a for a in sent if a[0] == "gpu_sample"][0][1]
    assert sample["metrics"]["cupti.dropped"] == 50.0
    assert sample["metrics"]["cupti.kernels"] == 30.0
    assert tier.collect(2000, 3000)["dropped"] == 0  # counts are per step


def test_second_subscriber_is_refused_and_the_tier_steps_aside(capsys):
    tier = cuda_trace.CuptiTier(FakeCupti(holder=True))
    assert tier.arm() is False and not tier.active
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "stepped aside" in err[0] and "MULTIPLE_SUBSCRIBERS" in err[0]
    assert "hook probe keeps running" in err[0]
    # the hook tier is untouched: a recorder with no GPU tier emits at once
    sent = []
    rec = StepRecorder(lambda *a: sent.append(a), lambda: 1)
    rec.span("forward", 0, 10)
    rec.end_step(20)
    assert sent[0][1]["spans"] == [["forward", 0, 10]]


def test_an_injected_profiler_makes_it_step_aside(monkeypatch, capsys):
    monkeypatch.setenv("CUDA_INJECTION64_PATH", "/opt/nsight/libToolsInjection64.so")
    fake = FakeCupti()
    assert cuda_trace.CuptiTier(fake).arm() is False and fake.callbacks is None
    assert "stepped aside" in capsys.readouterr().err


def test_a_profiler_started_later_takes_over(capsys):
    fake = FakeCupti()
    tier, _ = armed(fake)
    fake.push(kernel(10, 20))
    tier.step_aside("the PyTorch profiler was started in this process")
    assert fake.enabled == set() and not tier.active
    assert "PyTorch profiler" in capsys.readouterr().err
    assert tier.collect(0, 100)["busy_ns"]["gpu_compute"] == 10  # what it had is still sent


def test_step_summary_is_sent_one_step_late_with_its_gpu_spans():
    fake = FakeCupti()
    tier, _ = armed(fake)
    sent = []
    tier.emit = lambda *a: sent.append(a)
    rec = StepRecorder(lambda *a: sent.append(a), lambda: 1)
    rec.gpu = tier
    # step 1: [0, 100 ms]; the host stamps forward/backward/optimizer, the GPU runs kernels
    rec.span("data_wait", 0, 20 * MS)
    rec.span("h2d", 20 * MS, 22 * MS)
    rec.span("forward", 22 * MS, 40 * MS)
    rec.span("backward", 40 * MS, 80 * MS)
    rec.span("optimizer", 80 * MS, 100 * MS)
    fake.push(memcpy(21 * MS, 26 * MS, 1),           # H2D, its last 2 ms under a kernel
              kernel(24 * MS, 60 * MS), kernel(30 * MS, 50 * MS),
              kernel(58 * MS, 70 * MS, "ncclKernel_AllReduce_RING_LL_Sum_float"),
              kernel(75 * MS, 90 * MS))
    rec.end_step(100 * MS)
    assert sent == []  # held until the GPU work of step 1 has been delivered
    fake.push(kernel(110 * MS, 150 * MS))
    rec.end_step(200 * MS)
    kinds = [a[0] for a in sent]
    assert kinds == ["gpu_sample", "step_spans"]
    payload = sent[1][1]
    assert payload["step"] == 1 and payload["t1_ns"] == 100 * MS
    lanes = breakdown.rank_lanes_ns(payload)
    assert sum(lanes.values()) == 100 * MS
    kernel_busy = payload["gpu"]["busy_ns"]["gpu_compute"]
    assert kernel_busy == (60 - 24 + 90 - 75) * MS
    assert lanes["compute"] == kernel_busy          # compute is kernel busy time
    assert lanes["transfer"] == 3 * MS              # H2D 21-24 ms, before any kernel
    assert lanes["communication"] == 10 * MS        # NCCL 60-70 ms, not under compute
    assert lanes["input"] == 20 * MS                # the data wait, from the hook probe
    metrics = sent[0][1]["metrics"]
    assert metrics["cupti.compute_busy_ms"] == pytest.approx(51.0)
    assert metrics["cupti.h2d_busy_ms"] == pytest.approx(5.0)
    assert sent[0][2] == 100 * MS + 1
    rec.flush_held()  # at exit, the last step goes out too
    assert sent[-1][1]["step"] == 2
    assert sent[-1][1]["gpu"]["busy_ns"]["gpu_compute"] == 40 * MS


def test_without_gpu_spans_the_host_stamps_still_make_the_lanes():
    payload = {"t0_ns": 0, "t1_ns": 100, "spans": [["forward", 0, 40], ["h2d", 40, 50]],
               "buckets": [[0, 30, 60]]}
    lanes = breakdown.rank_lanes_ns(payload)
    assert lanes == {"compute": 40, "transfer": 10, "communication": 10, "checkpoint": 0,
                     "input": 0, "idle": 40}


def test_arm_in_rank_is_quiet_without_cupti_python(monkeypatch, capsys):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "cupti" else real(name, *a))
    rec = StepRecorder(lambda *a: None, lambda: 1)
    assert cuda_trace.arm_in_rank(lambda *a: None, rec) is None and rec.gpu is None
    monkeypatch.setenv("RIDGESCOPE_CUPTI", "0")
    assert cuda_trace.arm_in_rank(lambda *a: None, rec) is None
    assert capsys.readouterr().err == ""


def test_arm_in_rank_arms_only_when_asked(monkeypatch):
    """Opt-in: cupti-python installed and a GPU seen are not enough (its cost on real records)."""
    import sys
    import types

    import torch
    fake = FakeCupti()
    monkeypatch.setitem(sys.modules, "cupti", types.SimpleNamespace(cupti=fake, __spec__=None))
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "cupti" else real(name, *a))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(cuda_trace, "_watch_profilers", lambda tier: None)
    monkeypatch.delenv("RIDGESCOPE_CUPTI", raising=False)
    rec = StepRecorder(lambda *a: None, lambda: 1)
    assert cuda_trace.arm_in_rank(lambda *a: None, rec) is None and rec.gpu is None
    monkeypatch.setenv("RIDGESCOPE_CUPTI", "1")
    tier = cuda_trace.arm_in_rank(lambda *a: None, rec)
    try:
        assert tier is not None and tier.active and rec.gpu is tier
    finally:
        if tier is not None:
            tier.close()


def test_a_step_boundary_during_a_buffer_waits_for_it_and_cuts_the_crossing_kernel():
    """CUPTI's thread is reducing a buffer when the training thread takes the window: the
    window waits for that buffer's merge, gets its records, and a kernel across the boundary
    is cut in two (one part per step)."""
    import threading
    fake = FakeCupti()
    tier, _ = armed(fake)
    tier.active = False  # no flush from collect: the buffer comes from "CUPTI's thread"
    midway, resume = threading.Event(), threading.Event()

    def buffer():
        yield kernel(100, 200)
        midway.set()
        resume.wait(5)
        yield kernel(900, 1300)       # crosses the boundary at 1000
        yield kernel(1100, 1150, "ncclDevKernel_AllReduce_Sum_f32_RING_LL")

    cupti_thread = threading.Thread(target=tier._buffer_completed, args=(buffer(),))
    cupti_thread.start()
    assert midway.wait(5)
    got = {}
    boundary = threading.Thread(target=lambda: got.update(tier.collect(0, 1000)))
    boundary.start()
    boundary.join(0.05)
    assert boundary.is_alive()  # waiting for the buffer being merged
    resume.set()
    cupti_thread.join(5)
    boundary.join(5)
    assert got["busy_ns"]["gpu_compute"] == 100 + 100 and got["busy_ns"]["gpu_comm"] == 0
    assert ["gpu_compute", 900, 1000] in got["spans"]
    assert got["counters"]["kernels"] == 2 and got["counters"]["nccl_kernels"] == 1
    nxt = tier.collect(1000, 2000)
    assert nxt["busy_ns"]["gpu_compute"] == 300 and nxt["busy_ns"]["gpu_comm"] == 50
    assert tier.held == 0


def test_records_of_a_step_already_sent_are_counted_late():
    fake = FakeCupti()
    tier, _ = armed(fake)
    tier.collect(0, 1000)
    tier.offset_ns = 0  # collect calibrates again; the fake's clock is the wall clock
    fake.push(kernel(500, 700), kernel(950, 1200), kernel(1300, 1400))
    got = tier.collect(1000, 2000)
    assert got["busy_ns"]["gpu_compute"] == 200 + 100  # 950-1000 is lost, 1000-1200 kept
    assert got["counters"]["late"] == 2


def test_the_bound_is_on_intervals_held_not_on_records_merged():
    fake = FakeCupti(chunk=1000)
    tier, _ = armed(fake, max_records=10)
    # 500 back-to-back kernels on a stream: one interval, nothing dropped
    fake.push(*[kernel(i * 10, i * 10 + 12) for i in range(500)])
    # then 20 kernels with gaps: 9 more intervals fit, 11 are dropped
    fake.push(*[kernel(10_000 + i * 100, 10_000 + i * 100 + 5) for i in range(20)])
    got = tier.collect(0, 20_000)
    assert got["dropped"] == 11 and got["counters"]["kernels"] == 509
    assert got["busy_ns"]["gpu_compute"] == 5_002 + 9 * 5
    assert len(got["spans"]) == 10


def test_the_flushing_thread_takes_the_ingest_off_the_training_thread():
    import time
    fake = FakeCupti()
    tier, _ = armed(fake, flush_period_s=0.005, flush_margin_ns=0)
    try:
        fake.push(kernel(100, 200), kernel(150, 300))
        now = time.time_ns()
        deadline = time.monotonic() + 5
        while tier._flushed_from <= now and time.monotonic() < deadline:
            time.sleep(0.002)
        assert tier.held == 1  # merged by our thread
        flushes = fake.flushes
        got = tier.collect(0, 1000)  # the window ended before that flush began: no flush here
        assert tier.sync_flushes == 0
        assert got["busy_ns"]["gpu_compute"] == 200
        # a window that ends after the last flush began is flushed on the spot
        tier.collect(1000, time.time_ns() + 10**9)
        assert tier.sync_flushes == 1 and fake.flushes > flushes
    finally:
        tier.close()
    assert tier._flusher is None and not tier.active
