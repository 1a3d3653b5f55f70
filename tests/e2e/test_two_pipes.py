"""Stdout only, a job that draws its bar on stderr and prints every 10th step on stdout, as an
Ignite job with its ProgressBar and the MNIST example's handlers does (replay_ignite.py).  The
bar's count lags the iterations by one: its steps are timed by the redraw that ended each, so
the slow iteration is found as itself, not the one before.  The prints' records are stored, but
the rank's steps are timed from the bar's pipe alone (probes/step_streams.py)."""
from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest
from support import cli

JOB = Path(__file__).with_name("replay_ignite.py")
SLOW_ITERATION, STEP_MS = 21, 100

pytestmark = [pytest.mark.slow]


@pytest.mark.tansu
def test_a_bar_on_stderr_and_prints_on_stdout_time_each_step_once(tansu_stack):
    job = f"ignite-{uuid.uuid4().hex[:6]}"
    result = cli("run", *tansu_stack.flags, "--job", job, "--no-hooks", "--", sys.executable,
                 str(JOB), timeout=300)
    assert "NOT delivered" not in result.stderr

    # the bar gives steps 2-47 (the first iteration is drawn under the count it starts at);
    # step 2 has no step drawn before it
    steps = tansu_stack.wait_for_steps(job, 45)
    assert [s["step"] for s in steps] == list(range(3, 48))
    slow = [s["step"] for s in steps if s["slow"]]
    assert SLOW_ITERATION in slow and SLOW_ITERATION - 1 not in slow, steps
    assert len(slow) <= 2, f"false alarms at steps {slow}"
    rows = {r["step"]: r for r in tansu_stack.sql(
        f"SELECT step, duration_ms FROM step_rank FINAL WHERE job = '{job}' ORDER BY step")}
    assert rows[SLOW_ITERATION]["duration_ms"] > 5 * STEP_MS > 2 * rows[SLOW_ITERATION - 1]["duration_ms"]

    stored = tansu_stack.sql(f"SELECT stream, step, record FROM progress WHERE job = '{job}' "
                             f"AND kind = 'progress' ORDER BY stream, step")
    printed = [(r["step"], json.loads(r["record"])["loss"]) for r in stored if r["stream"] == "stdout"]
    drawn = {r["step"]: json.loads(r["record"])["loss"] for r in stored if r["stream"] == "stderr"}
    assert [s for s, _ in printed] == [10, 20, 30, 40] and sorted(drawn) == list(range(2, 48))
    assert all(drawn[step] == loss for step, loss in printed), "each step's loss, from either pipe"
