"""`ridgescope ingest`: old logs from the corpus, back-filled through a real broker, worker and store."""
from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest
from support import REPO, cli

from ridgescope.parsers import Dispatcher

pytestmark = [pytest.mark.slow, pytest.mark.tansu]

CORPUS = REPO / "tests" / "data" / "corpus"
TITAN = CORPUS / "torchtitan_nemo_nanogpt_etc" / "torchtitan_qwen3-14b_8xgpu_rank0_slow-step10_ansi.log"
NANOGPT = CORPUS / "torchtitan_nemo_nanogpt_etc" / "modded-nanogpt_2025-10-24_NorMuon_8xH100.log"
CAPTURED = REPO / "tests" / "data" / "captured"
NODE_LOGS = [CAPTURED / f"torch-2.15_torchrun-tee3_node-rank-{node}-of-2_2x2rank.log" for node in (0, 1)]
TITAN_STEP_TS = {  # '[rank0]:[titan] 2026-05-22 18:27:36,466 ... step:  2' and so on, as UTC
    1: 1779474453939000000, 2: 1779474456466000000, 10: 1779474502905000000}


def ingest(stack, job: str, *args: str):
    return cli("ingest", *stack.flags, "--job", job, *args, timeout=120)


def test_ingest_a_log_that_prints_timestamps(tansu_stack):
    """torchtitan prints a timestamp on every line and no step time: the step times come from
    the timestamps, and the slow last step (31 s against ~2.2 s) is found.  The log is rank 0's
    of 8 (`Building device mesh with parallelism: ... dp_shard=8`): which rank held the step up
    is not in it."""
    job = f"ingest-titan-{uuid.uuid4().hex[:6]}"
    result = ingest(tansu_stack, job, str(TITAN), "--tag", "cluster=h200", "--tag", "team=llm")
    report = result.stderr
    assert "358 lines, 19 records, 0 garbage" in report and "framework torchtitan" in report
    assert "timestamps printed" in report and "NOT delivered" not in report

    steps = tansu_stack.wait_for_steps(job, 9)
    by_step = {s["step"]: s for s in steps}
    assert sorted(by_step) == list(range(2, 11))  # step 1 has no earlier line to time it by
    assert by_step[2]["duration_ms"] == pytest.approx(2527.0)
    slow = [s["step"] for s in steps if s["slow"]]
    assert slow == [10], slow
    assert by_step[10]["cause"] == "unknown" and by_step[10]["excess_ms"] > 25_000
    assert by_step[10]["culprit_rank"] == -1

    rows = tansu_stack.sql(f"SELECT step, rank, t1_ns, source FROM step_rank FINAL "
                           f"WHERE job = '{job}' AND step IN (2, 10) ORDER BY step")
    assert [(r["step"], r["rank"], int(r["t1_ns"]), r["source"]) for r in rows] == [
        (2, 0, TITAN_STEP_TS[2], "log"), (10, 0, TITAN_STEP_TS[10], "log")]

    jobs = tansu_stack.sql(f"SELECT world_size, started_ns, ended_ns, exit_code, tags, framework "
                           f"FROM jobs FINAL WHERE job = '{job}'")
    assert len(jobs) == 1
    assert jobs[0]["world_size"] == 8 and jobs[0]["exit_code"] == 0
    assert jobs[0]["framework"] == "torchtitan"
    assert int(jobs[0]["started_ns"]) <= TITAN_STEP_TS[1]
    assert int(jobs[0]["ended_ns"]) >= TITAN_STEP_TS[10]
    assert jobs[0]["tags"] == {"cluster": "h200", "team": "llm"}


def test_ingest_a_log_without_timestamps(tansu_stack, tmp_path):
    """modded-nanogpt prints step times but no timestamp: times are synthesised from the step
    times, marked unknown, and the straggler step 511 (870 ms against ~60 ms) is found."""
    # The training part of the log (its nvidia-smi header carries a date; without it the log has
    # no timestamp at all).
    lines = NANOGPT.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("step:0/"))
    log = tmp_path / "train.log"
    log.write_text("".join(lines[start:]))
    disp = Dispatcher("nanogpt")
    expected = sorted({r["step"] for line in lines[start:] for r in disp.feed(line)
                       if r["kind"] == "progress" and r.get("step_time_ms")})
    assert len(expected) > 2000 and 511 in expected

    job = f"ingest-nanogpt-{uuid.uuid4().hex[:6]}"
    before = time.time_ns()
    report = ingest(tansu_stack, job, str(log), "--log-format", "nanogpt").stderr
    assert f"{len(lines) - start} lines" in report and "timestamps unknown" in report
    assert "0 garbage" in report and "NOT delivered" not in report

    steps = tansu_stack.wait_for_steps(job, len(expected))
    by_step = {s["step"]: s for s in steps}
    assert sorted(by_step) == expected
    assert by_step[511]["slow"] and by_step[511]["cause"] == "unknown"
    assert by_step[511]["duration_ms"] == pytest.approx(870.0)
    assert by_step[510]["duration_ms"] == pytest.approx(60.0) and not by_step[510]["slow"]
    assert by_step[2315]["rank_count"] == 1

    # The records are in `progress`, with the printed values, times marked unknown, and the
    # synthesised times end at the file's modification time.
    progress = tansu_stack.sql(
        f"SELECT step, ts_ns, record FROM progress WHERE job = '{job}' AND kind = 'progress' "
        f"AND step IN (510, 511, 2315) ORDER BY step")
    assert [p["step"] for p in progress] == [510, 511, 2315]
    records = {p["step"]: json.loads(p["record"]) for p in progress}
    assert records[511]["step_time_ms"] == 870.0 and records[511]["train_time_ms"] == 31516.0
    assert records[511]["ts_unknown"] is True and records[511]["ts_source"] == "unknown"
    ts = {p["step"]: int(p["ts_ns"]) for p in progress}
    assert ts[511] - ts[510] == 870_000_000
    assert ts[2315] == os.stat(log).st_mtime_ns
    assert ts[2315] <= before

    evals = tansu_stack.sql(f"SELECT step, record FROM progress WHERE job = '{job}' "
                            f"AND kind = 'eval' AND step = 500")
    assert json.loads(evals[0]["record"])["loss"] == pytest.approx(3.8098)


def test_ingest_node_logs(tansu_stack, tmp_path):
    """Two nodes' torchrun `--tee` logs (static rendezvous, 2 workers each, rank 3 straggling at
    step 20), both printing `[default0]:` and `[default1]:`: with `--node-logs` each step has the
    job's four ranks, and the straggler's step is found slow."""
    logs = []
    for path in NODE_LOGS:  # no timestamps: each file's times end at its modification time
        logs.append(tmp_path / path.name)
        logs[-1].write_bytes(path.read_bytes())
        os.utime(logs[-1], ns=(time.time_ns(), os.stat(logs[0]).st_mtime_ns))
    job = f"ingest-nodes-{uuid.uuid4().hex[:6]}"
    report = ingest(tansu_stack, job, *map(str, logs), "--node-logs").stderr
    assert "node 1, ranks 2-3" in report and "NOT delivered" not in report

    steps = tansu_stack.wait_for_steps(job, 30)
    rows = tansu_stack.sql(f"SELECT step, groupArray(rank) AS ranks FROM step_rank FINAL "
                           f"WHERE job = '{job}' GROUP BY step ORDER BY step")
    assert [(r["step"], sorted(r["ranks"])) for r in rows] == [(s, [0, 1, 2, 3]) for s in range(1, 31)]
    assert [s["step"] for s in steps if s["slow"]] == [20]
    jobs = tansu_stack.sql(f"SELECT world_size FROM jobs FINAL WHERE job = '{job}'")
    assert jobs == [{"world_size": 4}]
    straggler = tansu_stack.sql(f"SELECT rank, record FROM progress WHERE job = '{job}' "
                                f"AND kind = 'progress' AND step = 20 AND rank = 3")
    assert json.loads(straggler[0]["record"])["step_time_ms"] == 742.5
    assert json.loads(straggler[0]["record"])["local_rank"] == 1


def _verl_line(step: int, gen: float, save: float = 0.0) -> str:
    """A line as verl's driver prints it (the shape of tests/data/excerpts/verl_ppo-step-metrics.log)."""
    phases = {"gen": gen, "reward": 1.0, "old_log_prob": 2.0, "ref": 2.0, "adv": 0.1, "update_actor": 5.0}
    if save:
        phases["save_checkpoint"] = save
    timing = " - ".join(f"timing_s/{k}:{v:.3f}" for k, v in phases.items())
    return (f"(TaskRunner pid=4072644) step:{step} - actor/pg_loss:0.010 - actor/grad_norm:0.279 - "
            f"critic/score/mean:0.5 - {timing} - timing_s/step:{sum(phases.values()):.3f}\n")


def test_ingest_verl_steps_get_their_causes_from_verls_phases(tansu_stack, tmp_path):
    """verl prints each step's phases: a step slow in its rollout is a compute step, one that
    saved a checkpoint a checkpoint step, from stdout alone."""
    log = tmp_path / "verl.log"
    log.write_text("".join(_verl_line(step, gen=40.0 if step == 12 else 12.0, save=30.0 if step == 9 else 0.0)
                           for step in range(1, 15)))
    job = f"ingest-verl-{uuid.uuid4().hex[:6]}"
    report = ingest(tansu_stack, job, str(log)).stderr
    assert "framework verl" in report and "NOT delivered" not in report
    steps = tansu_stack.wait_for_steps(job, 14)
    by_step = {s["step"]: s for s in steps}
    assert [s["step"] for s in steps if s["slow"]] == [9, 12]
    assert by_step[9]["cause"] == "checkpoint" and by_step[9]["lanes_ms"]["checkpoint"] == pytest.approx(30_000.0)
    assert by_step[12]["cause"] == "compute" and by_step[12]["duration_ms"] == pytest.approx(50_100.0)


def test_ingest_rejects_missing_files_and_empty_logs(tmp_path):
    missing = cli("ingest", "--data-dir", str(tmp_path), "--broker", "127.0.0.1:1", "--job", "x",
                  str(tmp_path / "nope.log"), check=False)
    assert missing.returncode == 1 and "nope.log" in missing.stderr
    empty = tmp_path / "empty.log"
    empty.write_text("nothing to see here\n")
    nothing = cli("ingest", "--data-dir", str(tmp_path), "--broker", "127.0.0.1:1", "--job", "x",
                  str(empty), check=False)
    assert nothing.returncode == 1 and "no records" in nothing.stderr
    assert not Path(tmp_path / "spool").exists()


def test_ingest_an_olmo_core_run(tansu_stack):
    """A real OLMo-core run's log: its slow batch (step 13) is an input step; the save of a
    checkpoint is the checkpoint lane of the step that saved."""
    job = f"ingest-olmo-{uuid.uuid4().hex[:6]}"
    report = ingest(tansu_stack, job, str(CAPTURED / "olmo-core-3.0.0_trainer_1rank_plain_cpu.log")).stderr
    assert "framework olmo" in report and "timestamps printed" in report and "NOT delivered" not in report
    steps = tansu_stack.wait_for_steps(job, 19)
    by_step = {s["step"]: s for s in steps}
    assert sorted(by_step) == list(range(2, 21))    # step 1 prints no throughput
    # step 7 comes before the baseline's fifth step; 10 and 20 ran an evaluation
    assert [s["step"] for s in steps if s["slow"]] == [10, 13, 20]
    assert by_step[13]["cause"] == "input" and by_step[13]["lanes_ms"]["input"] == pytest.approx(500.6)
    assert by_step[10]["cause"] == by_step[20]["cause"] == "unknown"
    assert by_step[7]["duration_ms"] == pytest.approx(527.148)
    assert by_step[8]["lanes_ms"]["checkpoint"] == pytest.approx(83.0)


def test_ingest_a_jax_run(tansu_stack):
    """A real Flax loop's CLU lines: no step time, but absl's timestamp on each line times the
    steps: its slow step (17, a 0.5 s sleep) is found, and step 11, which follows the
    evaluation at step 10."""
    job = f"ingest-clu-{uuid.uuid4().hex[:6]}"
    report = ingest(tansu_stack, job, str(CAPTURED / "clu-0.0.12_flax-0.12.8_logging-writer_cpu.log")).stderr
    assert "timestamps printed" in report and "NOT delivered" not in report
    steps = tansu_stack.wait_for_steps(job, 29)
    by_step = {s["step"]: s for s in steps}
    assert sorted(by_step) == list(range(2, 31))     # step 1 has no line before it to time it by
    assert [s["step"] for s in steps if s["slow"]] == [11, 17]
    assert by_step[17]["duration_ms"] == pytest.approx(501.195) and by_step[17]["cause"] == "unknown"


def test_ingest_a_timm_run(tansu_stack):
    """timm's train.py prints no timestamp, but each update's own time and data wait: the
    update whose batch waited 2 s for an image (step 12) is slow, and its cause is input."""
    job = f"ingest-timm-{uuid.uuid4().hex[:6]}"
    report = ingest(tansu_stack, job, str(CAPTURED / "timm-1.0.31_train-py_cpu.log")).stderr
    assert "framework timm" in report and "timestamps unknown" in report and "NOT delivered" not in report
    steps = tansu_stack.wait_for_steps(job, 16)
    by_step = {s["step"]: s for s in steps}
    assert [s["step"] for s in steps if s["slow"]] == [12]
    assert by_step[12]["cause"] == "input" and by_step[12]["lanes_ms"]["input"] == pytest.approx(2003.0)


def test_ingest_an_espnet_ddp_run_whose_slow_steps_wait_for_a_rank_that_logs_nothing(tansu_stack):
    """ESPnet2 with DDP on 2 ranks: rank 0 alone logs, and rank 1's data loader held steps 6
    and 20 up (0.5 s for one utterance; the log's records are a step each 2 batches).  Rank 0's own data wait is normal; its time went to
    the all-reduce that waited for rank 1: the cause is communication, and the culprit is not
    rank 0 (a rank that printed nothing held it up)."""
    job = f"ingest-espnet-ddp-{uuid.uuid4().hex[:6]}"
    log = "espnet-202511_torch-2.11_asr-train-tiny_ddp-gloo_torchrun-tee3_slow-load-on-rank1_2rank.log"
    report = ingest(tansu_stack, job, str(CAPTURED / log)).stderr
    assert "of 1 rank(s) of 2;" in report and "NOT delivered" not in report
    steps = tansu_stack.wait_for_steps(job, 12)
    assert [s["step"] for s in steps] == list(range(2, 25, 2))
    slow = [(s["step"], s["cause"], s["culprit_rank"]) for s in steps if s["slow"]]
    assert slow == [(20, "communication", -1)]      # (step 6 is before the baseline has its steps)


def test_ingest_an_ms_swift_run(tansu_stack):
    """ms-swift prints only the run's mean step time: the steps' own times come from it.  The
    sleep in step 5 is 513 ms (before the baseline has its steps).  The steps after the
    checkpoint at 8 and the evaluation at 10 are slow: step 9's wall time held the save and
    nothing else the log names, so the save is its cause; step 11's held the evaluation."""
    job = f"ingest-swift-{uuid.uuid4().hex[:6]}"
    report = ingest(tansu_stack, job, str(CAPTURED / "ms-swift-4.6.0_sft_tiny-qwen2_disable-tqdm_cpu.log")).stderr
    assert "framework hf_trainer" in report and "NOT delivered" not in report
    steps = tansu_stack.wait_for_steps(job, 19)
    by_step = {s["step"]: s for s in steps}
    assert sorted(by_step) == list(range(2, 21))     # step 1 has no mean before it
    assert by_step[5]["duration_ms"] == pytest.approx(512.966)
    assert [s["step"] for s in steps if s["slow"]] == [9, 11]
    assert by_step[9]["cause"] == "checkpoint" and by_step[9]["phase"] == "checkpoint"
    assert by_step[11]["cause"] == "unknown"


def test_ingest_a_torchtitan_run_with_a_printed_checkpoint_time(tansu_stack):
    """torchtitan 0.3.0's own run: its timestamps time the steps; the batch that slept (step 13)
    is slow; the save it timed after step 10 (460 ms) is step 11's checkpoint lane, but step 11
    also held the validation at step 10, which the log does not time, so its cause is not
    named."""
    job = f"ingest-tt03-{uuid.uuid4().hex[:6]}"
    report = ingest(tansu_stack, job, str(CAPTURED / "torchtitan-0.3.0_llama3-debugmodel_1rank_cpu.log")).stderr
    assert "framework torchtitan" in report and "timestamps printed" in report and "NOT delivered" not in report
    steps = tansu_stack.wait_for_steps(job, 19)
    by_step = {s["step"]: s for s in steps}
    assert by_step[13]["slow"] and by_step[13]["duration_ms"] == pytest.approx(1319.0)
    assert by_step[11]["slow"] and by_step[11]["lanes_ms"]["checkpoint"] == pytest.approx(460.0)
    assert by_step[11]["cause"] == "unknown"
    assert all(s["lanes_ms"]["checkpoint"] == 0 for s in steps if s["step"] != 11)


def test_ingest_a_megatron_run_whose_timers_name_the_cause(tansu_stack):
    """Megatron-LM 0.17's own run, from stdout alone: its printed timers are the lanes, so the
    iteration whose batch waited 0.5 s (13) is slow, and its cause is input."""
    job = f"ingest-mg017-{uuid.uuid4().hex[:6]}"
    report = ingest(tansu_stack, job, str(CAPTURED / "megatron-core-0.17.1_pretrain-gpt_1rank_cpu.log")).stderr
    assert "framework megatron" in report and "NOT delivered" not in report
    steps = tansu_stack.wait_for_steps(job, 24)
    by_step = {s["step"]: s for s in steps}
    assert sorted(by_step) == list(range(1, 25))
    assert [s["step"] for s in steps if s["slow"]] == [13]
    assert by_step[13]["duration_ms"] == pytest.approx(509.4) and by_step[13]["cause"] == "input"
    assert by_step[13]["lanes_ms"]["input"] == pytest.approx(501.19)


@pytest.mark.parametrize("run, culprit", [("2rank-dp_log-straggler_rank1-slow", 1),
                                          ("2rank-pp2_tee3_log-straggler_rank0-slow", 0),
                                          ("2rank-dp_timing-log-option-all_slow-batch-r1", 1)])
def test_ingest_names_the_rank_megatrons_straggler_detector_names(tansu_stack, run, culprit):
    """Two ranks, one printing the steps, and Megatron's straggler report (`--log-straggler`),
    printed by rank 0: the stored verdict names the rank whose batch of iteration 13 waited
    0.5 s, from stdout alone.  Data parallel: rank 1.  Two pipeline stages under `--tee 3`:
    the last stage (rank 1) prints the steps, and its step 13 waited 504 ms to receive from
    the first, whose batch fetch took 501 ms; the report, printed ahead of rank 1's lines,
    names rank 0, not the stage that waited.  Data parallel with `--timing-log-option all` in
    place of the report: the timers of every rank name rank 1."""
    job = f"ingest-mgstrag-{uuid.uuid4().hex[:6]}"
    log = CAPTURED / f"megatron-core-0.17.1_pretrain-gpt_{run}_cpu.log"
    report = ingest(tansu_stack, job, str(log)).stderr
    assert "framework megatron" in report and "NOT delivered" not in report
    steps = tansu_stack.wait_for_steps(job, 16)
    assert sorted(s["step"] for s in steps) == list(range(1, 17))
    assert [(s["step"], s["cause"], s["culprit_rank"]) for s in steps if s["slow"]] == [(13, "input", culprit)]


@pytest.mark.parametrize("log, last_step", [
    ("megatron-core-0.17.1_pretrain-gpt_2rank-pp2_rank0-slow_cpu.log", 16),
    ("megatron-bridge-0.3.1_megatron-core-0.16.1_tiny-llama_2rank-dp_cpu.log", 24)])
def test_ingest_takes_the_jobs_size_from_what_the_log_printed(tansu_stack, log, last_step):
    """Two ranks as torchrun prints them by default: no line says its rank, and one rank prints
    the steps.  The job is the 2 ranks the log printed, not the 1 the lines show: Megatron-LM's
    two pipeline stages say `using world size: 2`; Megatron-Bridge prints no world size, and its
    data-parallel pair is the layout it printed (global batch 4 over micro batch 2 and 1
    microbatch, tensor and pipeline parallel 1).  The slow iteration 13 (a batch that slept
    0.5 s) is still judged when the file ends, its cause input.  Its culprit is not known: the
    timers are the slowest rank's, and the rank that prints them may not be it."""
    job = f"ingest-mgws-{uuid.uuid4().hex[:6]}"
    report = ingest(tansu_stack, job, str(CAPTURED / log)).stderr
    assert "of 1 rank(s) of 2;" in report and "NOT delivered" not in report
    steps = tansu_stack.wait_for_steps(job, last_step)
    assert sorted(s["step"] for s in steps) == list(range(1, last_step + 1))
    assert [(s["step"], s["cause"], s["rank_count"], s["culprit_rank"]) for s in steps if s["slow"]] == [
        (13, "input", 1, -1)]
    jobs = tansu_stack.sql(f"SELECT world_size FROM jobs FINAL WHERE job = '{job}'")
    assert jobs == [{"world_size": 2}]


def test_ingest_torchruns_per_rank_log_files(tansu_stack):
    """torchrun's `--log-dir` with `--redirects 3`: one `stdout.log` per worker, in a directory
    named by its rank, no line labelled.  Each file is its rank's: the job has 2 ranks, and rank
    1's slow step 10 (0.5 s, printed by its loop) names rank 1."""
    job = f"ingest-logdir-{uuid.uuid4().hex[:6]}"
    files = sorted(str(f) for f in (CAPTURED / "torch-2.15_torchrun-log-dir-redirects3_2rank").glob(
        "*/attempt_0/*/stdout.log"))
    report = ingest(tansu_stack, job, *files).stderr
    assert "of 2 rank(s) of 2;" in report and "NOT delivered" not in report
    steps = tansu_stack.wait_for_steps(job, 16)
    assert sorted(s["step"] for s in steps) == list(range(1, 17))
    assert all(s["rank_count"] == 2 for s in steps)
    assert [(s["step"], s["culprit_rank"]) for s in steps if s["slow"]] == [(10, 1)]


def test_ingest_torchruns_log_dirs_of_two_nodes(tansu_stack):
    """Two nodes' torchrun sharing one `--log-dir`: each node's run directory holds local ranks
    0 and 1.  Given node 0's directory first, the job has 4 ranks, and node 1's local rank 1,
    whose step 10 slept 0.5 s, is named as rank 3 (before, both nodes' files were ranks 0 and 1,
    and their steps fell on each other)."""
    job = f"ingest-logdirs-{uuid.uuid4().hex[:6]}"
    root = CAPTURED / "torch-2.15_torchrun-log-dir-redirects3_2x2rank"
    files = [str(f) for node in ("none_hffhuq45", "none_eukln6m2")
             for f in sorted((root / node).glob("attempt_0/*/stdout.log"))]
    report = ingest(tansu_stack, job, *files).stderr
    assert "none_eukln6m2: node 1, ranks 2-3" in report
    assert "of 4 rank(s) of 4;" in report and "NOT delivered" not in report
    steps = tansu_stack.wait_for_steps(job, 16)
    assert sorted(s["step"] for s in steps) == list(range(1, 17))
    assert all(s["rank_count"] == 4 for s in steps)
    assert [(s["step"], s["culprit_rank"]) for s in steps if s["slow"]] == [(10, 3)]


def test_ingest_every_ranks_steps_from_one_unlabelled_log(tansu_stack):
    """torchrun with no `--tee`: both ranks print `step N/16 ...` and no line says whose it is.
    Rank 1's step 10 slept 0.5 s; rank 0 ran on.  Each print of a step is kept as a rank of its
    own, so the slow step is found (before, both prints were rank 0's and step 10 was stored at
    rank 0's 50.2 ms, not slow); the order of the prints names no rank, so no culprit."""
    job = f"ingest-unlabelled-{uuid.uuid4().hex[:6]}"
    report = ingest(tansu_stack, job, str(CAPTURED / "torch-2.15_torchrun-unlabelled_every-rank-prints_2rank.log")).stderr
    assert "32 records from 36 lines" in report and "of 2 rank(s) of 2;" in report
    steps = tansu_stack.wait_for_steps(job, 16)
    assert all(s["rank_count"] == 2 for s in steps)
    slow = [(s["step"], s["duration_ms"], s["culprit_rank"]) for s in steps if s["slow"]]
    assert slow == [(10, 500.2, -1)]
    explained = cli("explain", *tansu_stack.flags, "--job", job, "--step", "10", timeout=60).stdout
    assert "its lines do not say whose they are" in explained


def test_ingest_two_nodes_unlabelled_logs_where_every_worker_prints(tansu_stack):
    """Two nodes' torchrun with no `--tee`, a log each, every worker printing `step N/16 ...`;
    node 1's second worker (rank 3) slept 0.5 s in step 10.  With `--node-logs --nproc-per-node
    2` each node's prints of a step are its two ranks, so the job has 4 ranks a step and the
    slow step is found; by the order of the prints, no culprit is named."""
    job = f"ingest-unlabelled-nodes-{uuid.uuid4().hex[:6]}"
    logs = [CAPTURED / f"torch-2.15_torchrun-unlabelled_node-rank-{k}-of-2_2x2rank.log" for k in (0, 1)]
    report = ingest(tansu_stack, job, *map(str, logs), "--node-logs", "--nproc-per-node", "2").stderr
    assert "of 4 rank(s) of 4;" in report and "NOT delivered" not in report
    steps = tansu_stack.wait_for_steps(job, 16)
    assert all(s["rank_count"] == 4 for s in steps)
    assert [(s["step"], s["duration_ms"], s["culprit_rank"]) for s in steps if s["slow"]] == [(10, 500.1, -1)]


def test_ingest_srun_output_files_of_each_task_by_the_rank_their_paths_name(tansu_stack):
    """`srun -n 2 -o train-%t.log python log_dir_steps.py`: a file per task, named by its task
    id, the rank, and no line says whose.  Given as they are, both are rank 0's and the report
    warns that they hold the same steps; with `--rank-in-path 'train-(\\d+)\\.log'` each is its
    rank's, and rank 1's 500 ms step 10 is slow with rank 1 the culprit."""
    files = [str(CAPTURED / "slurm-22.05.8_srun-output-per-task_2rank" / f"train-{t}.log") for t in (0, 1)]
    unplaced = ingest(tansu_stack, f"ingest-srun-files-{uuid.uuid4().hex[:6]}", *files).stderr
    assert f"warning: {files[0]} and {files[1]} both hold steps 1-16 of rank(s) 0:" in unplaced
    job = f"ingest-srun-tasks-{uuid.uuid4().hex[:6]}"
    report = ingest(tansu_stack, job, *files, "--rank-in-path", r"train-(\d+)\.log").stderr
    assert "of 2 rank(s) of 2;" in report and "warning" not in report
    steps = tansu_stack.wait_for_steps(job, 16)
    assert [(s["step"], s["rank_count"]) for s in steps] == [(step, 2) for step in range(1, 17)]
    slow = [(s["step"], s["duration_ms"], s["culprit_rank"]) for s in steps if s["slow"]]
    assert slow == [(10, 500.2, 1)]
    missed = cli("ingest", *tansu_stack.flags, "--job", job, *files, "--rank-in-path", r"task(\d+)", check=False)
    assert missed.returncode == 2 and "finds no rank in its path" in missed.stderr


def test_ingest_a_workers_stdout_and_stderr_as_one_process(tansu_stack):
    """torchrun's `--log-dir` with `--redirects 3` of an HF Trainer run on two ranks: rank 0's
    stderr.log holds the training banner and the bar, its stdout.log the log dicts, none of
    which names its step.  Given together, each worker's two files are read as its two pipes:
    the store holds each dict's loss at its step, on rank 0, beside the bar's steps."""
    job = f"ingest-pipes-{uuid.uuid4().hex[:6]}"
    files = sorted(str(f) for f in (CAPTURED / "transformers-4.57.3_trainer_tqdm-info_log-dir-redirects3_2rank").glob(
        "*/attempt_0/*/*.log"))
    report = ingest(tansu_stack, job, *files).stderr
    assert report.count("one process's stdout and stderr, read together") == 2
    assert "warning" not in report and "NOT delivered" not in report
    query = (f"SELECT stream, step, rank, JSONExtractFloat(record, 'loss') AS loss FROM progress "
             f"WHERE job = '{job}' AND kind = 'progress' AND step >= 0 ORDER BY stream, step")
    rows = tansu_stack.wait_for_rows(query, 9)
    assert [(r["stream"], r["step"], r["rank"], r["loss"]) for r in rows] == [
        ("ingest:stderr.log", step, 0, 0) for step in (2, 4, 5, 6, 8)] + [
        ("ingest:stdout.log", 2, 0, 1.4024), ("ingest:stdout.log", 4, 0, 1.924),
        ("ingest:stdout.log", 6, 0, 1.4404), ("ingest:stdout.log", 8, 0, 1.885)]


def test_ingest_numbers_the_dicts_of_a_run_that_logged_no_banner(tansu_stack):
    """A Trainer run at its default log level, its stdout and stderr saved as Slurm's `.out` and
    `.err`: no banner, the dicts name their epoch to 2 decimals.  The bar's 18 steps and the
    summary's epoch number them: the store holds each loss at its step."""
    job = f"ingest-nobanner-{uuid.uuid4().hex[:6]}"
    run = CAPTURED / "transformers-4.57.3_trainer_tqdm_66-examples_slurm-out-err"
    report = ingest(tansu_stack, job, str(run / "train-4242.out"), str(run / "train-4242.err")).stderr
    assert "read together" in report and "NOT delivered" not in report
    query = (f"SELECT step, JSONExtractFloat(record, 'loss') AS loss FROM progress WHERE job = '{job}' "
             f"AND kind = 'progress' AND stream = 'ingest:train-4242.out' AND step >= 0 ORDER BY step")
    rows = tansu_stack.wait_for_rows(query, 9)
    assert [(r["step"], r["loss"]) for r in rows] == [
        (2, 1.5653), (4, 1.4184), (6, 1.1363), (8, 2.363), (10, 0.7239), (12, 1.5957), (14, 1.156),
        (16, 1.8814), (18, 1.8989)]


def test_ingest_times_a_trainers_steps_by_its_bars_elapsed_time(tansu_stack):
    """ezpz's HF Trainer run prints no step time: its bar draws the time elapsed (whole seconds)
    and a smoothed rate.  Before, its steps reached the store and none was judged; now the runs
    of steps 20 s long or more are timed by their mean step (`step_time_from_elapsed`)."""
    job = f"ingest-elapsed-{uuid.uuid4().hex[:6]}"
    log = CORPUS / "hf_trainer" / "ezpz_hf-trainer_llama3.2-1b_aurora-xpu_24rank_fsdp.log"
    assert "NOT delivered" not in ingest(tansu_stack, job, str(log)).stderr
    steps = tansu_stack.wait_for_steps(job, 3)
    assert [(s["step"], s["duration_ms"]) for s in steps] == [
        (7, pytest.approx(3666.7, abs=0.1)), (96, pytest.approx(3662.9, abs=0.1)), (100, 12_500.0)]
