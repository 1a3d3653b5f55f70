"""CPU-side cost of the GPU probes, against the fakes of tests/gpu (no GPU needed).

    .venv/bin/python bench/gpu/bench_probes.py [--out bench/gpu/results.json]

- nvml_tick:    one sampler tick over the fake two-GPU node (H200 with GPM + L4): every NVML
                reading, the tick bookkeeping and the per-second summaries.  This is the Python
                side only; real NVML calls add their driver time (measured by scripts/gpu-check).
- cupti_ingest: the buffer-completed callback, per activity record (classification and storage),
                on CUPTI's thread.
- cupti_step:   the per-step work on the training thread (flush, cut each phase's intervals at
                the window's end, cap, build the step's spans and GPU summary) for steps of 500,
                2000 and 10000 records.  The records of a step are flushed (ingest) before the
                step is taken, as the tier's flushing thread does in a rank, so step_us is the
                training thread's share only.

The numbers of the tier before incremental merging (per-record storage, merging on the training
thread) are kept in results.json under "cupti_before"; this script measures the current tier.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from gpu.fake_cupti import FakeCupti, kernel, memcpy  # noqa: E402
from gpu.fake_nvml import FakeNvml  # noqa: E402

from ridgescope.probes import cuda_trace, gpu  # noqa: E402

NS = 1_000_000_000


def bench_nvml(ticks: int) -> dict:
    probe = gpu.GpuProbe(None, lambda *a: None, nvml=FakeNvml(), processes=lambda: [])
    probe.open()
    t0 = 1_700_000_000 * NS
    costs = []
    for i in range(ticks):
        start = time.perf_counter_ns()
        probe.tick(t0 + i * NS // 10, i / 10)
        costs.append(time.perf_counter_ns() - start)
    costs = costs[10:]
    return {"ticks": len(costs), "gpus": 2, "median_us": statistics.median(costs) / 1e3,
            "p99_us": sorted(costs)[int(len(costs) * 0.99)] / 1e3,
            "cpu_share_at_100ms": statistics.median(costs) / 1e8}


def records(n: int, base: int) -> list:
    out = []
    t = base
    for i in range(n):
        if i % 50 == 0:
            out.append(memcpy(t, t + 20_000, 1))
        name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL" if i % 40 == 39 else "sm90_gemm"
        out.append(kernel(t + 5_000, t + 45_000, name))
        t += 40_000  # kernels overlap their neighbours a little, with gaps now and then
        if i % 7 == 0:
            t += 15_000
    return out


def bench_cupti(per_step: int, steps: int) -> dict:
    fake = FakeCupti(capacity=10 ** 7, chunk=1024)
    tier = cuda_trace.CuptiTier(fake, emit=lambda *a: None)
    tier.arm()
    tier.offset_ns = 0
    ingest, step_cost = [], []
    base = 0
    for _ in range(steps):
        batch = records(per_step, base)
        span = batch[-1].end - base
        fake.push(*batch)
        start = time.perf_counter_ns()
        fake.activity_flush_all(0)  # runs the completion callback: the ingest cost
        ingest.append((time.perf_counter_ns() - start) / len(batch))
        payload = {"step": 1, "t0_ns": base, "t1_ns": base + span, "spans": [], "buckets": []}
        start = time.perf_counter_ns()
        tier.attach(payload)
        step_cost.append(time.perf_counter_ns() - start)
        base += span
    return {"records_per_step": per_step, "steps": steps,
            "ingest_ns_per_record": statistics.median(ingest),
            "step_us": statistics.median(step_cost) / 1e3,
            "step_us_max": max(step_cost) / 1e3}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(Path(__file__).with_name("results.json")))
    args = ap.parse_args()
    results = {
        "machine": {"python": platform.python_version(), "cpu": platform.processor() or
                    platform.machine(), "gpu": None},
        "nvml_tick": bench_nvml(600),
        "cupti": [bench_cupti(n, 20) for n in (500, 2000, 10000)],
    }
    print(json.dumps(results, indent=2))
    out = Path(args.out)
    if out.exists():
        try:
            before = json.loads(out.read_text()).get("cupti_before")
        except ValueError:
            before = None
        if before:
            results["cupti_before"] = before
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
