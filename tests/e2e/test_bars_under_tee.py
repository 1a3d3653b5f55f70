"""Stdout only, two ranks that print nothing but their own tqdm bar, under torchrun's `--tee`.
torchrun passes each redraw's text on when it is drawn and its newline with the rank's next
redraw, between the other rank's: each rank's steps are timed by when its redraws' text came,
and the one rank's slow step is found.  See replay_bar_per_rank.py for the job."""
from __future__ import annotations

import statistics
import sys
import uuid
from pathlib import Path

import pytest
from support import cli

JOB = Path(__file__).with_name("replay_bar_per_rank.py")
STEPS, NPROC, SLOW_STEP, SLOW_RANK, STEP_MS = 24, 2, 12, 1, 500

pytestmark = [pytest.mark.torch, pytest.mark.slow]


@pytest.mark.tansu
def test_bars_of_two_ranks_under_tee_have_the_slow_step_found(tansu_stack):
    job = f"tee-bars-{uuid.uuid4().hex[:6]}"
    result = cli("run", *tansu_stack.flags, "--job", job, "--no-hooks", "--", sys.executable, "-m",
                 "torch.distributed.run", "--nproc-per-node", str(NPROC), "--tee", "3", str(JOB),
                 timeout=300)
    assert "NOT delivered" not in result.stderr
    assert "[default1]:Steps: 100%" in result.stderr

    # Step 1 has no step drawn before it; every later one of each rank is timed and judged.
    steps = tansu_stack.wait_for_steps(job, STEPS - 1)
    assert [(s["step"], s["rank_count"]) for s in steps] == [(s, NPROC) for s in range(2, STEPS + 1)]
    slow = {s["step"]: s for s in steps if s["slow"]}
    assert SLOW_STEP in slow, steps
    assert slow[SLOW_STEP]["cause"] == "unknown"
    flagged = [s for s in slow if s not in (SLOW_STEP, SLOW_STEP + 1)]
    assert len(flagged) <= 1, f"false alarms at steps {flagged}"

    # Each rank's windows run from one step's first redraw to the next; only rank 1's step 12
    # is long, the others typically the step's time: torchrun's tail reads each rank's file
    # every 0.1 s, so a redraw comes up to that much late (on a busy machine more), which
    # lengthens one window and shortens the next; their median is held to the step time.
    rows = {(r["rank"], r["step"]): r for r in tansu_stack.sql(
        f"SELECT rank, step, t0_ns, t1_ns, duration_ms, source FROM step_rank FINAL "
        f"WHERE job = '{job}'")}
    assert sorted(rows) == [(rank, s) for rank in range(NPROC) for s in range(2, STEPS + 1)]
    assert all(r["source"] == "log" for r in rows.values())
    for (rank, step), r in rows.items():
        if step > 2:
            assert r["t0_ns"] == rows[rank, step - 1]["t1_ns"]
        if (rank, step) == (SLOW_RANK, SLOW_STEP):
            assert r["duration_ms"] > 4 * STEP_MS, r
    for rank in range(NPROC):
        windows = [r["duration_ms"] for (of, step), r in rows.items()
                   if of == rank and (rank, step) != (SLOW_RANK, SLOW_STEP)]
        assert abs(statistics.median(windows) - STEP_MS) < STEP_MS / 2, (rank, sorted(windows))


@pytest.mark.tansu
def test_unlabelled_bars_of_two_ranks_are_read_as_their_loops_when_told(tansu_stack):
    """A real tqdm bar with no label on each rank (tqdm_loop_job.py), an evaluation's after each
    epoch: `--log-format tqdm` reads each rank's epochs' bars as its steps, running on across
    epochs, and rank 1's slow step 12 is found."""
    job = f"tee-tqdm-{uuid.uuid4().hex[:6]}"
    result = cli("run", *tansu_stack.flags, "--job", job, "--no-hooks", "--log-format", "tqdm", "--",
                 sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(NPROC), "--tee", "3",
                 str(Path(__file__).with_name("tqdm_loop_job.py")), timeout=300)
    assert "NOT delivered" not in result.stderr and "--log-format tqdm reads it" not in result.stderr

    steps = tansu_stack.wait_for_steps(job, 15)
    assert [(s["step"], s["rank_count"]) for s in steps] == [(s, NPROC) for s in range(2, 17)]
    slow = {s["step"]: s for s in steps if s["slow"]}
    assert 12 in slow and slow[12]["cause"] == "unknown", steps
    rows = {(r["rank"], r["step"]): r["duration_ms"] for r in tansu_stack.sql(
        f"SELECT rank, step, duration_ms FROM step_rank FINAL WHERE job = '{job}'")}
    assert max(rows, key=rows.__getitem__) == (1, 12), rows
