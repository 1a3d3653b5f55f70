"""GPU evidence in `explain`: counters that sharpen a verdict."""
from __future__ import annotations

from ridgescope.pipeline import explain


def test_low_sm_activity_during_compute_hints_launch_bound():
    lines = explain.gpu_evidence({"gpm.sm_active.mean": 22.0, "util_gpu.mean": 96.0,
                                  "cupti.compute_busy_ms": 30.0, "compute_ms": 80.0,
                                  "clock_event.sw_power_cap": 0.5, "clock_event.gpu_idle": 0.9})
    assert any("launch-bound" in line for line in lines)
    assert any("busy 30.0 of 80.0 ms" in line for line in lines)
    assert any("sw_power_cap" in line for line in lines)
    assert not any("gpu_idle" in line for line in lines)


def test_no_gpu_data_adds_nothing():
    assert explain.gpu_evidence({}) == []
    assert explain.gpu_evidence({"gpm.sm_active.mean": 90.0, "util_gpu.mean": 99.0}) == []


def test_answers_carry_the_evidence_of_the_rank():
    step = {"skew_ms": 0.0}
    row = {"rank": 0, "source": "hook", "input_ms": 1.0, "transfer_ms": 0.0, "compute_ms": 80.0,
           "idle_ms": 2.0, "arrival_ns": 0, "comm_wait_ms": 0.0, "communication_ms": 0.0,
           "checkpoint_ms": 0.0}
    pairs = explain.answers(step, [row], {}, {}, gpu={0: {"gpm.sm_active.mean": 20.0,
                                                           "util_gpu.mean": 95.0}})
    assert "launch-bound" in dict(pairs)["3. Were forward and backward kernels continuously "
                                         "available?"]
    assert "launch-bound" not in str(explain.answers(step, [row], {}, {}))
