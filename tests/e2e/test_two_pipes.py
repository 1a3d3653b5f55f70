"""Stdout only, jobs that draw their bar on stderr and print or log on stdout.

An Ignite job with its ProgressBar and the MNIST example's handlers (replay_ignite.py) prints
every 10th step on stdout.  The bar's count lags the iterations by one: its steps are timed by
the redraw that ended each, so the slow iteration is found as itself, not the one before.  The
prints' records are stored, but the rank's steps are timed from the bar's pipe alone
(probes/step_streams.py).

A SpeechBrain job (replay_speechbrain.py) logs each epoch's validation summary and save on
stdout; read from two pipes, they can come before the bar's last redraws of the epoch.

A Hugging Face Trainer (hf_trainer_job.py, the real one) draws its bar on stderr and prints
its log dicts on stdout."""
from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest
from support import cli

JOB = Path(__file__).with_name("replay_ignite.py")
SPEECHBRAIN_JOB = Path(__file__).with_name("replay_speechbrain.py")
HF_TRAINER_JOB = Path(__file__).with_name("hf_trainer_job.py")
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


@pytest.mark.tansu
def test_an_evaluation_logged_before_the_bars_last_step_is_the_next_steps_work(tansu_stack):
    """Each epoch's validation and save (0.6 s) ran between its step 10, 20 or 30 and the next
    epoch's first step.  Epochs 2 and 3 logged them before the bar's last redraws came (as the
    capture's order has it): step 21's window, not step 20's, holds them (before, step 20 was
    the checkpoint step and step 21 a normal one).  Steps 11 and 21 are slow checkpoint steps,
    their cause unknown (an evaluation ran there too, untimed); the slow batch, step 15, is a
    normal step found slow."""
    job = f"speechbrain-{uuid.uuid4().hex[:6]}"
    result = cli("run", *tansu_stack.flags, "--job", job, "--no-hooks", "--", sys.executable,
                 str(SPEECHBRAIN_JOB), timeout=300)
    assert "NOT delivered" not in result.stderr
    steps = {s["step"]: s for s in tansu_stack.wait_for_steps(job, 29)}
    assert sorted(steps) == list(range(2, 31))
    assert [(s, steps[s]["phase"], steps[s]["cause"]) for s in steps if steps[s]["slow"]] == [
        (11, "checkpoint", "unknown"), (15, "normal", "unknown"), (21, "checkpoint", "unknown")], steps
    assert steps[21]["duration_ms"] > 500 > steps[20]["duration_ms"]
    assert [steps[s]["phase"] for s in (20, 30)] == ["normal", "normal"]


@pytest.mark.tansu
@pytest.mark.parametrize("hooks", [False, True], ids=["stdout-only", "hooks"])
def test_hf_trainers_evaluations_are_the_steps_they_ran_in(tansu_stack, hooks):
    """Stdout only: the bar on stderr shows no framework, and the pipe is read as the Trainer's,
    which stdout's dicts showed.  An evaluation after steps 8, 16 and 24 (1.6 s each) prints a
    dict that names no step, read before step 8's record, which the bar gives once it moves on:
    the evaluation goes with the step that ended after it was read, 9 (17, 25), an evaluation
    step, kept out of the normal baseline: 9 and 17 are slow against the normal steps, their
    cause unknown (stdout does not time it); 25 is judged against the two evaluations before
    it, and is not slow.  With the hook probe, the evaluation's loader, drained with no
    backward between its batches, marks the same steps; their time is in the lanes (here the
    evaluation's batches' wait)."""
    job = f"hf-trainer-{uuid.uuid4().hex[:6]}"
    result = cli("run", *tansu_stack.flags, "--job", job, *([] if hooks else ["--no-hooks"]), "--",
                 sys.executable, str(HF_TRAINER_JOB), timeout=300)
    assert "NOT delivered" not in result.stderr and "'eval_loss'" in result.stdout
    # from stdout, step 2 on (step 1 has no step drawn before it); step 26, the last, may be
    # drawn in the read of the one before, and have no time of its own
    steps = {s["step"]: s for s in tansu_stack.wait_for_steps(job, 24)}
    assert set(range(2, 26)) <= set(steps), sorted(steps)
    assert [s for s in sorted(steps) if steps[s]["phase"] == "eval"] == [9, 17, 25], steps
    for step in (9, 17):
        assert steps[step]["slow"] and steps[step]["cause"] == ("input" if hooks else "unknown"), steps[step]
    for step in (9, 17, 25):
        assert steps[step]["duration_ms"] > 1500 > steps[step - 1]["duration_ms"], steps
    assert not steps[25]["slow"] and steps[25]["baseline_ms"] > 1500, steps[25]
    flagged = [s for s in steps if steps[s]["slow"] and s not in (9, 10, 17, 18, 26)]
    assert len(flagged) <= 1, f"false alarms at steps {flagged}"
    text = cli("explain", *tansu_stack.flags, "--job", job, "--step", "17", timeout=60).stdout
    said = ("an evaluation loop ran in this step" if hooks else
            "the log shows an evaluation ran in this step, which it did not time")
    assert said in text, text


@pytest.mark.tansu
def test_hf_trainers_steps_before_its_first_log_dict(tansu_stack):
    """Stdout only, the Trainer's default logging (`logging_steps=500`): in a 26-step run its
    only dict is the summary at the end, and the unlabelled bar on stderr is no framework's
    until then.  Its steps so far become the Trainer's when the dict names it: every step is
    judged, and the slow batch found.  Step 12's batch loads in 1.2 s, during step 11:
    Accelerate's loader, under the Trainer, fetches one batch ahead."""
    job = f"hf-default-logging-{uuid.uuid4().hex[:6]}"
    result = cli("run", *tansu_stack.flags, "--job", job, "--no-hooks", "--", sys.executable,
                 str(HF_TRAINER_JOB), "500", "0", "12", timeout=300)
    assert "NOT delivered" not in result.stderr and "'train_runtime'" in result.stdout
    assert "'loss'" not in result.stdout
    steps = {s["step"]: s for s in tansu_stack.wait_for_steps(job, 24)}
    assert set(range(2, 26)) <= set(steps), sorted(steps)
    assert steps[11]["slow"] and steps[11]["cause"] == "unknown", steps[11]
    assert steps[11]["duration_ms"] > 1000 > 2 * steps[12]["duration_ms"], steps
    flagged = [s for s in steps if steps[s]["slow"] and s not in (11, 12, 26)]
    assert len(flagged) <= 1, f"false alarms at steps {flagged}"
