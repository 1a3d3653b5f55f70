"""Stdout only, a job that prints nothing but a progress bar: Keras 3's bar, with no step time
in it.  Its steps are timed by when the log probe read each step's first redraw, and the slow
one is found.  See replay_bar.py for the job."""
from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest
from support import cli

JOB = Path(__file__).with_name("replay_bar.py")
STEPS, SLOW_STEP, STEP_MS = 32, 20, 300

pytestmark = [pytest.mark.slow]


@pytest.mark.tansu
def test_a_bar_only_job_has_its_slow_step_found(tansu_stack):
    job = f"bar-{uuid.uuid4().hex[:6]}"
    result = cli("run", *tansu_stack.flags, "--job", job, "--no-hooks", "--", sys.executable,
                 str(JOB), timeout=300)
    assert "NOT delivered" not in result.stderr

    # Step 1 has no step drawn before it; every later one is timed and judged.
    steps = tansu_stack.wait_for_steps(job, STEPS - 1)
    assert [s["step"] for s in steps] == list(range(2, STEPS + 1))
    slow = [s for s in steps if s["slow"]]
    assert SLOW_STEP in [s["step"] for s in slow], steps
    for s in slow:
        assert s["cause"] == "unknown" and s["excess_ms"] > 0, s
    flagged = [s["step"] for s in slow if s["step"] not in (SLOW_STEP, SLOW_STEP + 1)]
    assert len(flagged) <= 1, f"false alarms at steps {flagged}"

    # The windows are the times between the bar's first redraws of consecutive steps.
    rows = {r["step"]: r for r in tansu_stack.sql(
        f"SELECT step, t0_ns, t1_ns, duration_ms, source FROM step_rank FINAL "
        f"WHERE job = '{job}' ORDER BY step")}
    assert sorted(rows) == list(range(2, STEPS + 1))
    assert all(r["source"] == "log" for r in rows.values())
    assert all(rows[s]["t0_ns"] == rows[s - 1]["t1_ns"] for s in range(3, STEPS + 1))
    assert rows[SLOW_STEP]["duration_ms"] > 3 * STEP_MS
    records = [json.loads(p["record"]) for p in tansu_stack.sql(
        f"SELECT record FROM progress WHERE job = '{job}' AND kind = 'progress' ORDER BY step")]
    assert [r["step"] for r in records] == list(range(1, STEPS + 1))
    assert [r["drawn_ns"] for r in records[1:]] == [rows[s]["t1_ns"] for s in range(2, STEPS + 1)]

