"""Stdout only: the spine's real 4-rank job with the hook probe off still has its slow steps found.

The job prints `step N/60 loss X step_time_ms Y` on every rank and no timers, so each slow step is
found from the printed step times alone and its cause is `unknown`.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import uuid

import pytest
from support import (HEAVY_CKPT_AFTER, REPO, SLOW_INPUT_STEPS, SPINE_NPROC, SPINE_STEPS,
                     STRAGGLER_STEP, cli, printed_step_ms, run_spine_job, slow_by_the_jobs_clock)

pytestmark = [pytest.mark.torch, pytest.mark.slow]

STEPS, NPROC = SPINE_STEPS, SPINE_NPROC
INJECTED = {*SLOW_INPUT_STEPS, STRAGGLER_STEP, HEAVY_CKPT_AFTER + 1}


def run_demo_job_without_hooks(stack, job: str):
    return run_spine_job(stack, job, hooks=False)


def check_stdout_only(stack, job: str, result) -> None:
    steps = stack.wait_for_steps(job, STEPS)
    by_step = {s["step"]: s for s in steps}
    assert sorted(by_step) == list(range(1, STEPS + 1))

    # Every step of every rank reaches step_rank once, from the log.
    rows = stack.sql(f"SELECT step, count() AS n, uniqExact(rank) AS ranks, "
                     f"groupUniqArray(source) AS sources FROM step_rank FINAL "
                     f"WHERE job = '{job}' GROUP BY step ORDER BY step")
    assert [(r["step"], r["n"], r["ranks"], r["sources"]) for r in rows] == [
        (s, NPROC, NPROC, ["log"]) for s in range(1, STEPS + 1)], missing_rows(stack, job, result)
    for s in steps:
        assert s["rank_count"] == NPROC

    # The injected slow steps are found from stdout alone, and cannot be split.
    slow = {s["step"] for s in steps if s["slow"]}
    assert slow & set(SLOW_INPUT_STEPS), f"no slow-input step found: slow = {sorted(slow)}"
    assert STRAGGLER_STEP in slow, sorted(slow)
    assert HEAVY_CKPT_AFTER + 1 in slow, sorted(slow)
    for s in steps:
        if s["slow"]:
            assert s["cause"] == "unknown", s
            assert s["confidence"] <= 0.5, s
            assert s["excess_ms"] > 0, s

    # No false alarms on the steps we did not touch (the step after a slow one may catch up):
    # a step flagged outside the injected ones is one the job's own clock timed slow, over a
    # baseline that is its normal step.
    touched = INJECTED | {step + 1 for step in INJECTED}
    normal = [s for s in steps if s["phase"] == "normal" and s["step"] not in touched]
    printed = printed_step_ms(result.stdout)
    usual = statistics.median(printed[s["step"]] for s in normal)
    for s in normal:
        if s["baseline_ms"] > 0:
            assert abs(s["baseline_ms"] - usual) < 0.2 * usual, (s, usual)
    flagged = [s for s in normal if s["slow"] and not slow_by_the_jobs_clock(s, printed)]
    assert not flagged, "false alarms: " + "; ".join(
        f"step {s['step']} {s['duration_ms']} ms over {s['baseline_ms']} ms, printed "
        f"{printed[s['step']]} ms" for s in flagged)

    # The progress records themselves are in the store, with the job's printed values.
    progress = stack.sql(f"SELECT rank, step, record FROM progress WHERE job = '{job}' "
                         f"AND kind = 'progress' AND step = {STEPS} ORDER BY rank")
    assert [(p["rank"], p["step"]) for p in progress] == [(r, STEPS) for r in range(NPROC)]


def missing_rows(stack, job: str, result) -> str:
    """Which step rows are missing, what the job printed for them, and whether the log probe's
    record of each reached the store: that tells a line the launcher mangled or the probe lost
    from a row the pipeline lost or judged without."""
    have = {(r["step"], r["rank"]) for r in stack.sql(
        f"SELECT step, rank FROM step_rank FINAL WHERE job = '{job}'")}
    lines = []
    for step, rank in sorted({(s, r) for s in range(1, STEPS + 1) for r in range(NPROC)} - have):
        records = stack.sql(f"SELECT ts_ns FROM progress WHERE job = '{job}' AND rank = {rank} "
                            f"AND step = {step} AND kind = 'progress'")
        verdict = stack.sql(f"SELECT rank_count, ts_ns FROM steps FINAL WHERE job = '{job}' "
                            f"AND step = {step}")
        lines.append(f"step {step} rank {rank}: progress records {records}, verdict {verdict}, "
                     f"printed {[ln for ln in result.stdout.splitlines() if f'step {step}/' in ln]}")
    report = [ln for ln in result.stderr.splitlines() if ln.startswith("[ridgescope]")]
    return "\n".join(lines + report)


@pytest.mark.tansu
def test_stdout_only_on_tansu(tansu_stack):
    job = f"stdout-tansu-{uuid.uuid4().hex[:6]}"
    result = run_demo_job_without_hooks(tansu_stack, job)
    assert "[default3]:step 60/60" in result.stdout
    assert "NOT delivered" not in result.stderr
    check_stdout_only(tansu_stack, job, result)


@pytest.mark.kafka
def test_stdout_only_on_apache_kafka(kafka_stack):
    job = f"stdout-kafka-{uuid.uuid4().hex[:6]}"
    result = run_demo_job_without_hooks(kafka_stack, job)
    check_stdout_only(kafka_stack, job, result)


@pytest.mark.tansu
def test_every_ranks_unlabelled_steps_are_kept_live(tansu_stack):
    """torchrun with no `--tee` under `ridgescope run --no-hooks`: both ranks print `step N/16
    ...` and no line says whose.  Rank 1's step 10 slept 0.5 s and rank 0 ran on: each print of
    a step is a rank of its own (print_order.py), so the slow step is found; the order of the
    prints names no rank, so no culprit (before, both were one rank's, and step 10 was rank 0's
    50 ms).  Step 1's first print, held until the second came, is rank 0's too: before, it
    went out as the job's unplaced rank -1's, and step 1 was judged apart from rank 0."""
    job = f"stdout-unlabelled-{uuid.uuid4().hex[:6]}"
    result = cli("run", *tansu_stack.flags, "--job", job, "--no-hooks", "--", sys.executable, "-m",
                 "torch.distributed.run", "--nproc-per-node", "2", "--master-port", "29763",
                 str(REPO / "tests" / "data" / "captured" / "log_dir_steps.py"),
                 env={"SLOW_RANK": "1"}, timeout=300)
    assert result.stdout.count("step 10/16 ") == 2 and "NOT delivered" not in result.stderr
    steps = tansu_stack.wait_for_steps(job, 16)
    assert [(s["step"], s["rank_count"]) for s in steps if s["rank_count"] != 2] == []
    assert tansu_stack.sql(f"SELECT count() AS n FROM step_rank FINAL WHERE job = '{job}' "
                           f"AND rank NOT IN (0, 1)") == [{"n": 0}]
    # a live job's other steps may run long on a busy machine: step 10 is slow, and no step
    # names a culprit
    assert next(s for s in steps if s["step"] == 10)["slow"]
    assert {s["culprit_rank"] for s in steps if s["slow"]} == {-1}


@pytest.mark.tansu
def test_a_job_whose_rank_0_alone_prints_unlabelled_has_its_last_step_judged(tansu_stack):
    """torchrun with no `--tee`, rank 0 alone printing its steps (as most frameworks do): the
    lines say no rank, so the probe of a 2-rank job stores them as its unplaced rank -1.  That
    rank's windows close with an end of their own, so step 16, the last, is judged too (it was
    never: no `job_end` came for rank -1).  Rank 0's step 10 slept 0.5 s; rank 1 printed
    nothing, so no culprit."""
    job = f"stdout-rank0-{uuid.uuid4().hex[:6]}"
    cli("run", *tansu_stack.flags, "--job", job, "--no-hooks", "--", sys.executable, "-m",
        "torch.distributed.run", "--nproc-per-node", "2", "--master-port", "29764",
        str(REPO / "tests" / "data" / "captured" / "log_dir_steps.py"),
        env={"SLOW_RANK": "0", "PRINTING_RANK": "0"}, timeout=300)
    steps = tansu_stack.wait_for_steps(job, 16)
    assert sorted(s["step"] for s in steps) == list(range(1, 17))
    # a live job's other steps may run long on a busy machine: step 10 is slow, and no step
    # names a culprit
    assert next(s for s in steps if s["step"] == 10)["slow"]
    assert {s["culprit_rank"] for s in steps if s["slow"]} == {-1}


@pytest.mark.tansu
def test_each_task_that_srun_started_is_its_own_rank(tansu_stack):
    """`srun -n 2 ridgescope run --no-hooks -- python log_dir_steps.py` (a JAX job's way, with
    no torchrun): one run process per task, each started with what srun gives a task
    (SLURM_PROCID, SLURM_NTASKS), its lines unlabelled.  Each task's lines are its own rank's:
    every step has both ranks, and rank 1's 500 ms step 10 is slow with rank 1 the culprit.
    Before, both tasks' lines were rank 0's and step 10 was stored at rank 0's 50 ms."""
    job = f"stdout-srun-tasks-{uuid.uuid4().hex[:6]}"
    tasks = [subprocess.Popen(
        [sys.executable, "-m", "ridgescope.cli.main", "run", *tansu_stack.flags, "--job", job, "--no-hooks",
         "--", sys.executable, str(REPO / "tests" / "data" / "captured" / "log_dir_steps.py")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "SLOW_RANK": "1", "SLURM_PROCID": str(task), "SLURM_NTASKS": "2"})
        for task in range(2)]
    outs = [task.communicate(timeout=300) for task in tasks]
    assert [task.returncode for task in tasks] == [0, 0], outs
    steps = tansu_stack.wait_for_steps(job, 16)
    assert [(s["step"], s["rank_count"]) for s in steps] == [(step, 2) for step in range(1, 17)]
    ten = next(s for s in steps if s["step"] == 10)
    assert ten["slow"] and ten["culprit_rank"] == 1 and ten["duration_ms"] > 400, ten
