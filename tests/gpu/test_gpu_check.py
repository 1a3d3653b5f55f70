"""scripts/gpu-check: the no-GPU path, and its checks over store rows (pure, on the CPU)."""
from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu-check"


def load():
    loader = importlib.machinery.SourceFileLoader("gpu_check", str(SCRIPT))
    spec = importlib.util.spec_from_loader("gpu_check", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_without_a_gpu_it_says_so_and_exits_cleanly(tmp_path):
    out = subprocess.run([str(SCRIPT), "--out", str(tmp_path / "r.txt")], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0
    assert out.stdout.strip().splitlines() == [out.stdout.strip()]  # one line
    assert "no NVIDIA GPU on this machine" in out.stdout and "nothing to check" in out.stdout


def test_compute_match_and_overhead():
    gc = load()
    steps = [{"step": s, "compute_ms": 10.0 + (0.2 if s % 2 else -0.2)} for s in range(1, 30)]
    busy = [{"step": s, "busy_ms": 10.0} for s in range(1, 30)]
    match = gc.compute_match(steps, busy)
    assert match["ok"] and match["steps"] == 24 and match["median_rel_err"] == 0.02
    off = [{"step": s, "compute_ms": 20.0} for s in range(1, 30)]
    assert not gc.compute_match(off, busy)["ok"]
    assert gc.compute_match(steps, [])["ok"] is False
    assert gc.overhead([10.0, 10.2], [10.03, 10.5]) == pytest.approx(0.003)


def test_verdicts():
    gc = load()
    facts = {"nvml_rows": 40, "nvml_rank0": 40, "nvml_step_rows": 30, "gpm_rows": 20,
             "cupti_kernel_rows": 199, "cupti_h2d_rows": 199, "h2d_pinned_bytes": 6e9,
             "hopper": True, "cupti_installed": True, "steps": 200, "step_rows": 200,
             "compute_match": {"ok": True, "steps": 190, "median_rel_err": 0.01},
             "overhead_hook_gpu": 0.002, "overhead_all": 0.05}
    got = {name: status for name, status, _ in gc.verdicts(facts)}
    assert got["overhead with CUPTI tier"] == "FAIL"
    assert all(v == "PASS" for k, v in got.items() if k != "overhead with CUPTI tier")
    facts.update(cupti_installed=False, hopper=False, cupti_kernel_rows=0)
    got = {name: status for name, status, _ in gc.verdicts(facts)}
    assert got["GPM metrics"] == got["CUPTI kernel intervals"] == "SKIP"


@pytest.mark.torch
def test_the_training_loop_runs_on_the_cpu():
    out = subprocess.run([sys.executable, str(SCRIPT), "--loop-only", "--device", "cpu",
                          "--steps", "10", "--batch", "2"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "step 10 loss" in out.stdout and "LOOP_S" in out.stdout
