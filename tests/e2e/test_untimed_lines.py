"""Stdout only, a loop whose lines carry its step and no time: each step is timed by when the
log probe read its line (the step's end), and the slow one is found.  See untimed_loop.py."""
from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from support import cli

JOB = Path(__file__).with_name("untimed_loop.py")
COMPILED_JOB = JOB.with_suffix(".c")
STEPS, SLOW_STEP = 24, 12

pytestmark = [pytest.mark.slow]


def loop_command(prints: str, tmp_path: Path) -> list[str]:
    if prints != "compiled":
        return [sys.executable, str(JOB), *(["--no-flush"] if prints == "plain" else [])]
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler on this machine to build the compiled loop")
    binary = tmp_path / "untimed_loop"
    subprocess.run([compiler, "-O2", "-o", str(binary), str(COMPILED_JOB)], check=True, timeout=120)
    return [str(binary)]


@pytest.mark.tansu
@pytest.mark.parametrize("prints", ["flushed", "plain", "compiled"])
def test_a_loop_that_prints_no_time_has_its_slow_step_found(tansu_stack, prints, tmp_path):
    """`plain`: `print` without flush, and PYTHONUNBUFFERED off; `compiled`: the loop in C,
    `printf` without fflush.  A pipe's buffer would hold every line until the loop exits;
    `ridgescope run` makes the job's stdout line-buffered, Python's and C stdio's."""
    job = f"untimed-{uuid.uuid4().hex[:6]}"
    result = cli("run", *tansu_stack.flags, "--job", job, "--no-hooks", "--",
                 *loop_command(prints, tmp_path), timeout=120,
                 env={"PYTHONUNBUFFERED": ""} if prints == "plain" else None)
    assert "NOT delivered" not in result.stderr and f"step {STEPS}/{STEPS}" in result.stdout

    # Step 1 has no step read before it; every later one is timed by the lines' read times.
    steps = tansu_stack.wait_for_steps(job, STEPS - 1)
    assert [s["step"] for s in steps] == list(range(2, STEPS + 1))
    by_step = {s["step"]: s for s in steps}
    assert by_step[SLOW_STEP]["slow"] and by_step[SLOW_STEP]["cause"] == "unknown"
    assert 800 < by_step[SLOW_STEP]["duration_ms"] < 1500, by_step[SLOW_STEP]
    flagged = [s["step"] for s in steps if s["slow"] and s["step"] not in (SLOW_STEP, SLOW_STEP + 1)]
    assert len(flagged) <= 1, f"false alarms at steps {flagged}"
    rows = tansu_stack.sql(f"SELECT step, source FROM step_rank FINAL WHERE job = '{job}' ORDER BY step")
    assert {r["source"] for r in rows} == {"log"} and len(rows) == STEPS - 1


@pytest.mark.tansu
def test_a_loop_that_prints_every_fourth_step_has_its_stalled_interval_found(tansu_stack):
    """A line every 4 steps, no time: each line's step is timed by the mean step since the line
    before, and the interval whose step 30 stalled 2 s (steps 29-32) is the slow one."""
    job = f"untimed-every-{uuid.uuid4().hex[:6]}"
    result = cli("run", *tansu_stack.flags, "--job", job, "--no-hooks", "--", sys.executable,
                 str(JOB), "--every", "4", timeout=120)
    assert "NOT delivered" not in result.stderr and "step 48/48" in result.stdout

    steps = tansu_stack.wait_for_steps(job, 11)
    assert [s["step"] for s in steps] == list(range(8, 49, 4))    # step 4's line has none before it
    by_step = {s["step"]: s for s in steps}
    assert by_step[32]["slow"] and 500 < by_step[32]["duration_ms"] < 900, by_step[32]  # (3 x 0.2 + 2) / 4
    assert by_step[28]["duration_ms"] < 400, by_step[28]     # the stall is in no other interval
    flagged = [s["step"] for s in steps if s["slow"] and s["step"] not in (32, 36)]
    assert len(flagged) <= 1, f"false alarms at steps {flagged}"


@pytest.mark.tansu
def test_a_save_the_loop_names_without_a_time_is_the_cause_of_the_step_it_ran_in(tansu_stack):
    """`Saving checkpoint to ...` after step 12, no time printed, and a 1.5 s save: step 13's
    window holds it and nothing else the log names, so the save is its cause."""
    job = f"untimed-save-{uuid.uuid4().hex[:6]}"
    result = cli("run", *tansu_stack.flags, "--job", job, "--no-hooks", "--", sys.executable,
                 str(JOB), "--save-after", "12", timeout=120)
    assert "NOT delivered" not in result.stderr and "Saving checkpoint" in result.stdout

    steps = tansu_stack.wait_for_steps(job, STEPS - 1)
    by_step = {s["step"]: s for s in steps}
    assert by_step[13]["slow"] and by_step[13]["cause"] == "checkpoint", by_step[13]
    assert by_step[13]["phase"] == "checkpoint" and 1500 < by_step[13]["duration_ms"] < 2500
    flagged = [s["step"] for s in steps if s["slow"] and s["step"] not in (13, 14)]
    assert len(flagged) <= 1, f"false alarms at steps {flagged}"
