"""A job whose size nobody says: a shell starts two workers, each writing `[defaultN]:step
K/16 ...` lines into the one stdout, with no launcher flags and no WORLD_SIZE to read.  Each
rank's rows come on its own partition, and one partition may be read seconds after the other:
judged as soon as every rank seen so far had sent it, a step was one rank's alone (live, with
srun under a shell: 2 of 3 runs, one with its slow step not found).  The steps of such a job
wait a moment for ranks not yet seen (windows.SETTLE_NS)."""
from __future__ import annotations

import sys
import uuid

import pytest
from support import cli

pytestmark = [pytest.mark.tansu, pytest.mark.slow]

WORKER = """
import sys, time
rank = int(sys.argv[1])
for step in range(1, 17):
    t0 = time.perf_counter()
    time.sleep(0.5 if (rank, step) == (1, 10) else 0.05)
    ms = (time.perf_counter() - t0) * 1000
    sys.stdout.write(f"[default{rank}]:step {step}/16 loss {1 / step:.3f} step_time_ms {ms:.1f}\\n")
    sys.stdout.flush()
"""


def test_a_job_of_unknown_size_has_every_rank_in_its_steps(tansu_stack, tmp_path):
    job = f"unknown-size-{uuid.uuid4().hex[:6]}"
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    result = cli("run", *tansu_stack.flags, "--job", job, "--no-hooks", "--", "sh", "-c",
                 f"{sys.executable} {worker} 0 & {sys.executable} {worker} 1 & wait")
    assert result.stdout.count("step 16/16") == 2, result.stdout
    steps = tansu_stack.wait_for_steps(job, 16)
    assert [(s["step"], s["rank_count"]) for s in steps] == [(n, 2) for n in range(1, 17)]
    step_10 = next(s for s in steps if s["step"] == 10)
    assert step_10["slow"] and step_10["culprit_rank"] == 1, step_10
