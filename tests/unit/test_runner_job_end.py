"""`ridgescope run` sends each rank's `job_end` behind the records its windows come from: on the
log's topic and key where no hook sent spans, so that the pipeline reads it after the rank's last
progress record (on the hook's topic it could be read first, and the rank's last step judged
without it)."""
from __future__ import annotations

import socket
import sys

import msgpack

from ridgescope.probes.runner import run
from ridgescope.schemas import envelope


def test_job_end_follows_the_log_records_without_hooks(tmp_path):
    job = "ends-behind-log"
    script = ("for i in (1, 2): "
              "print(f'[default{i - 1}]:step {i}/2 loss 1.0 step_time_ms 5.0', flush=True)")
    result = run([sys.executable, "-c", script], job, None, tmp_path, hooks=False)
    assert result.exit_code == 0
    spool = tmp_path / "spool" / f"{socket.gethostname()}.spool"
    with open(spool, "rb") as fh:
        sent = [(topic, key, envelope.decode(value))
                for topic, key, value in msgpack.Unpacker(fh, raw=False)]
    for rank in (0, 1):
        mine = [(topic, msg["kind"]) for topic, key, msg in sent if key == f"{job}/{rank}".encode()
                and msg["kind"] in ("progress", "job_end")]
        assert mine == [("rs.raw.log", "progress"), ("rs.raw.log", "job_end")], mine


def test_run_turns_rays_log_folding_off_unless_asked(tmp_path, monkeypatch):
    """Ray folds its workers' lines that differ only in numbers: the job `run` starts prints
    each of them, unless its user chose otherwise."""
    from ridgescope.probes.runner import child_env
    monkeypatch.delenv("RAY_DEDUP_LOGS", raising=False)
    assert child_env("j", tmp_path / "s", True)["RAY_DEDUP_LOGS"] == "0"
    monkeypatch.setenv("RAY_DEDUP_LOGS", "1")
    assert child_env("j", tmp_path / "s", True)["RAY_DEDUP_LOGS"] == "1"


def test_a_run_srun_started_once_per_rank_sends_as_its_task(tmp_path, monkeypatch, capfd):
    """`srun -n 2 ridgescope run -- python train.py`, task 1: its lines, its end and its host
    samples are rank 1's in a job of 2 (each task's were rank 0's), its spool is its own (the
    node's tasks shared one file), and the job's processes are told the rank no RANK gives."""
    monkeypatch.setenv("SLURM_PROCID", "1")
    monkeypatch.setenv("SLURM_NTASKS", "2")
    job = "srun-task"
    script = ("import os, time; print('task', os.environ['RIDGESCOPE_TASK_RANK'], 'of', os.environ['RIDGESCOPE_TASK_WORLD'], flush=True); "
              "[print(f'step {i}/2 loss 1.0 step_time_ms 5.0', flush=True) or time.sleep(0.3) for i in (1, 2)]")
    result = run([sys.executable, "-c", script], job, None, tmp_path, hooks=False, host_interval_s=0.1)
    assert result.exit_code == 0 and result.ranks == {1}
    assert "task 1 of 2" in capfd.readouterr().out     # what the hook probe reads, where no RANK
    assert not (tmp_path / "spool" / f"{socket.gethostname()}.spool").exists()
    with open(tmp_path / "spool" / f"{socket.gethostname()}-task1.spool", "rb") as fh:
        sent = [(key.decode(), envelope.decode(value)) for _, key, value in msgpack.Unpacker(fh, raw=False)]
    kinds = {(key, msg["kind"]) for key, msg in sent}
    assert {(f"{job}/1", "progress"), (f"{job}/1", "job_end"), (f"{job}/1", "host_sample")} <= kinds
    assert {key for key, _ in sent} == {f"{job}/-1", f"{job}/1"}     # the job's start, and rank 1
    progress = [msg["p"] for key, msg in sent if msg["kind"] == "progress" and msg["p"]["record"]["kind"] == "progress"]
    assert [(p["record"]["step"], p["world_size"]) for p in progress] == [(1, 2), (2, 2)]
