"""`ridgescope run` reads the output its job sends to files (probes/output_files.py): torchrun's
`--redirects` files, each its worker's rank's, and a script's `> train.log`; not the files torchrun
also copies to the console, nor what a file held before the job appended to it."""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import textwrap
import time
from types import SimpleNamespace

import msgpack
import pytest

from ridgescope.probes.output_files import NamedFiles, TorchrunConsole, _std_spec, written_files
from ridgescope.probes.runner import run
from ridgescope.schemas import envelope

LOOP = textwrap.dedent("""
    import os, sys, time
    rank = int(os.environ.get("RANK", "0"))
    for step in range(1, 7):
        time.sleep(0.2)
        print(f"step {step}/6 loss {rank}.{step}", flush=True)
    print(f"rank {rank} done", file=sys.stderr, flush=True)
""")


def sent_progress(tmp_path) -> list[tuple[int, int, float, int]]:
    """(rank, step, loss, drawn_ns: when its line was read) of each progress record `run`
    spooled (no broker)."""
    with open(tmp_path / "spool" / f"{socket.gethostname()}.spool", "rb") as fh:
        msgs = [envelope.decode(value) for _, _, value in msgpack.Unpacker(fh, raw=False)]
    return [(m["rank"], m["p"]["record"]["step"], m["p"]["record"]["loss"],
             m["p"]["record"]["drawn_ns"])
            for m in msgs if m["kind"] == "progress" and m["p"]["record"]["kind"] == "progress"]


def test_a_script_that_sends_its_output_to_a_file_is_read_as_the_file_grows(tmp_path, capfd):
    loop, log = tmp_path / "loop.py", tmp_path / "train.log"
    loop.write_text(LOOP)
    result = run(["sh", "-c", f"{sys.executable} {loop} > {log} 2>&1"], "to-a-file", None,
                 tmp_path / "rs", hooks=False)
    assert result.exit_code == 0
    assert "step 1/6" not in capfd.readouterr().out      # the job chose a file: nothing echoed
    got = sent_progress(tmp_path / "rs")
    assert [(rank, step, loss) for rank, step, loss, _ in got] == [(0, s, float(f"0.{s}")) for s in range(1, 7)]
    # read as the lines were written, 0.2 s apart, not all at the job's end
    assert got[-1][3] - got[0][3] > 0.5e9
    assert any(str(log) in note for note in result.notes), result.notes
    assert result.log_lines == 7


def test_a_file_the_job_appends_to_is_read_from_where_the_job_began(tmp_path):
    loop, log = tmp_path / "loop.py", tmp_path / "train.log"
    loop.write_text(LOOP)
    log.write_text("step 99/99 loss 9.9\n" * 3)     # an earlier run's
    run(["sh", "-c", f"sleep 0.3; {sys.executable} {loop} >> {log}"], "appends", None, tmp_path / "rs",
        hooks=False)
    assert [step for _, step, _, _ in sent_progress(tmp_path / "rs")] == list(range(1, 7))


def test_a_file_written_anew_is_read_again_from_its_start(tmp_path):
    """The same file truncated by a second `>` (a log rotated in place): its new lines are read.
    (Lines written less than a poll before the cut are lost: here the second run waits.)"""
    loop, log = tmp_path / "loop.py", tmp_path / "train.log"
    loop.write_text(LOOP)
    run(["sh", "-c", f"{sys.executable} {loop} > {log}; sleep 0.3; {sys.executable} {loop} > {log}"], "anew", None,
        tmp_path / "rs", hooks=False)
    assert [step for _, step, _, _ in sent_progress(tmp_path / "rs")] == list(range(1, 7)) * 2


def test_steps_both_in_a_file_and_on_a_pipe_are_timed_from_one(tmp_path):
    """`python loop.py > train.log; cat train.log`: the file, read as it grew, times the steps;
    the same lines read again from the pipe at the end are stored, marked, and make no window."""
    loop, log = tmp_path / "loop.py", tmp_path / "train.log"
    loop.write_text(LOOP)
    # (the file's first records wait up to a second for a torchrun prefix: logprobe.HeldHead)
    run(["sh", "-c", f"{sys.executable} {loop} > {log}; sleep 1.5; cat {log}"], "twice", None, tmp_path / "rs",
        hooks=False)
    with open(tmp_path / "rs" / "spool" / f"{socket.gethostname()}.spool", "rb") as fh:
        msgs = [envelope.decode(value) for _, _, value in msgpack.Unpacker(fh, raw=False)]
    marks = sorted((m["p"]["stream"] == "stdout", m["p"]["record"]["step"], bool(m["p"].get("timed_elsewhere")))
                   for m in msgs if m["kind"] == "progress" and m["p"]["record"]["kind"] == "progress")
    assert marks == [(False, s, False) for s in range(1, 7)] + [(True, s, True) for s in range(1, 7)]


def test_unread_when_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("RIDGESCOPE_READ_FILES", "0")
    loop = tmp_path / "loop.py"
    loop.write_text(LOOP)
    result = run(["sh", "-c", f"{sys.executable} {loop} > {tmp_path / 'train.log'} 2>&1"], "unread", None,
                 tmp_path / "rs", hooks=False)
    assert result.exit_code == 0 and result.log_lines == 0


LOGGER = textwrap.dedent("""
    import logging, os, sys, time
    rank = int(os.environ["RANK"])
    log = logging.getLogger("train")
    log.addHandler(logging.FileHandler(sys.argv[1]))
    log.setLevel(logging.INFO)
    for step in range(1, 5):
        time.sleep(0.1)
        log.info(f"step {step}/4 loss {rank}.{step}")
""")


def test_the_log_files_named_are_read_each_as_the_rank_in_its_path(tmp_path, monkeypatch):
    """Two ranks whose logger writes to `logs/train_rank{R}.log` and prints nothing: read with
    `--log-file 'logs/*.log' --rank-in-path 'rank(\\d+)'`, each file as its rank's; what rank
    0's file held from an earlier run is not read.  Named files are read also where the output
    files are not (RIDGESCOPE_READ_FILES=0)."""
    monkeypatch.setenv("RIDGESCOPE_READ_FILES", "0")
    logger, logs = tmp_path / "logger.py", tmp_path / "logs"
    logger.write_text(LOGGER)
    logs.mkdir()
    (logs / "train_rank0.log").write_text("step 9/9 loss 9.9\n")
    named = NamedFiles([str(logs / "*.log")], [re.compile(r"rank(\d+)")])
    script = " & ".join(f"RANK={r} {sys.executable} {logger} {logs}/train_rank{r}.log" for r in (0, 1))
    result = run(["sh", "-c", f"{script}; wait"], "named", None, tmp_path / "rs",
                 hooks=False, log_files=named)
    assert result.exit_code == 0
    got = sorted((rank, step, loss) for rank, step, loss, _ in sent_progress(tmp_path / "rs"))
    assert got == [(r, s, float(f"{r}.{s}")) for r in (0, 1) for s in range(1, 5)]


def test_a_rank_in_path_without_a_group_is_refused(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ridgescope.cli.main", "run", "--data-dir", str(tmp_path),
                           "--log-file", "x.log", "--rank-in-path", "rank[0-9]+", "--", "true"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "no group for the rank" in proc.stderr


def torchrun(tmp_path, *flags: str) -> list[str]:
    pytest.importorskip("torch")
    loop = tmp_path / "loop.py"
    loop.write_text(LOOP)
    return [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
            "--log-dir", str(tmp_path / "logs"), *flags, str(loop)]


@pytest.mark.slow
def test_torchruns_redirected_workers_are_read_each_as_its_rank(tmp_path, capfd):
    result = run(torchrun(tmp_path, "--redirects", "3"), "redirects", None, tmp_path / "rs", hooks=False)
    assert result.exit_code == 0
    assert "step 1/6" not in capfd.readouterr().out
    got = sorted((rank, step, loss) for rank, step, loss, _ in sent_progress(tmp_path / "rs"))
    assert got == [(r, s, float(f"{r}.{s}")) for r in (0, 1) for s in range(1, 7)]


@pytest.mark.slow
@pytest.mark.parametrize("flags, from_files", [(("--tee", "3"), 0), (("--tee", "3", "--local-ranks-filter", "0"), 1)])
def test_the_files_torchrun_copies_to_the_console_are_not_read_twice(tmp_path, capfd, flags, from_files):
    """`--tee`: the console has every worker's lines (each step once per rank, not twice); with
    `--local-ranks-filter 0` only rank 0's, and rank 1's come from its files."""
    result = run(torchrun(tmp_path, *flags), "tee", None, tmp_path / "rs", hooks=False)
    assert result.exit_code == 0
    console = capfd.readouterr().out
    assert ("[default1]:step 1/6" in console) == (not from_files)
    got = sorted((rank, step, loss) for rank, step, loss, _ in sent_progress(tmp_path / "rs"))
    assert got == [(r, s, float(f"{r}.{s}")) for r in (0, 1) for s in range(1, 7)]
    assert sum("file(s) the job sent its output to" in n for n in result.notes) == from_files


@pytest.mark.slow
def test_deepspeeds_launcher_writing_each_ranks_log_is_read_each_as_its_rank(tmp_path, capfd):
    """`deepspeed --enable_each_rank_log DIR`: each rank's output goes to `DIR/<time>_rankN.log`."""
    pytest.importorskip("deepspeed")
    loop = tmp_path / "loop.py"
    loop.write_text(LOOP)
    cmd = [sys.executable, "-m", "deepspeed.launcher.runner", "--num_gpus", "2", "--enable_each_rank_log",
           str(tmp_path / "ranks"), str(loop)]
    result = run(cmd, "deepspeed-ranks", None, tmp_path / "rs", hooks=False)
    assert result.exit_code == 0 and "step 1/6" not in capfd.readouterr().out
    got = sorted((rank, step, loss) for rank, step, loss, _ in sent_progress(tmp_path / "rs"))
    assert got == [(r, s, float(f"{r}.{s}")) for r in (0, 1) for s in range(1, 7)]


LAUNCHER = textwrap.dedent("""
    # a launcher's way (torchrun's, Popen's): fork, point the child's stdout at its file, exec
    # the worker with its RANK; here the child waits 0.6 s between the two
    import os, sys, time
    loop, log = sys.argv[1], sys.argv[2]
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
        time.sleep(0.6)
        os.execve(sys.executable, [sys.executable, loop], dict(os.environ, RANK="3"))
    os.waitpid(pid, 0)
""")


def test_a_worker_seen_between_its_fork_and_its_exec_gets_its_own_rank(tmp_path):
    """Seen before its exec, the worker shows its launcher's environment (no RANK): its file
    was rank -1's for good (local rank 3 of a 4-rank torchrun job, at random)."""
    launcher, loop = tmp_path / "launcher.py", tmp_path / "loop.py"
    launcher.write_text(LAUNCHER)
    loop.write_text(LOOP)
    run([sys.executable, str(launcher), str(loop), str(tmp_path / "rank3.log")], "forked", None,
        tmp_path / "rs", hooks=False)
    assert sorted({rank for rank, _, _, _ in sent_progress(tmp_path / "rs")}) == [3]


def test_job_processes_reads_a_forked_process_again_once_it_has_exec_d(tmp_path):
    from ridgescope.probes.gpu import job_processes
    launcher, loop = tmp_path / "launcher.py", tmp_path / "loop.py"
    launcher.write_text(LAUNCHER)
    loop.write_text(LOOP)
    proc = subprocess.Popen([sys.executable, str(launcher), str(loop), str(tmp_path / "rank3.log")])
    cache: dict = {}
    try:
        time.sleep(0.3)
        child = [p for p in job_processes(proc.pid, cache) if p["pid"] != proc.pid]
        assert [(p["rank"], p["settled"]) for p in child] == [(-1, False)]
        time.sleep(0.8)
        child = [p for p in job_processes(proc.pid, cache) if p["pid"] != proc.pid]
        assert [(p["rank"], p["settled"]) for p in child] == [(3, True)]
    finally:
        proc.wait(10)


class _ExecsAsItsEnvironmentIsRead:
    """A worker that torchrun forked, which execs the moment after its environment is read: the
    read gives its parent's environment, every later one its own (RANK 3)."""

    pid = 4242
    TORCHRUN = ["python", "-m", "torch.distributed.run", "--tee", "3", "train.py"]

    def __init__(self) -> None:
        self.exec_d = False

    def environ(self) -> dict:
        environ = {"RANK": "3", "LOCAL_RANK": "3"} if self.exec_d else {}
        self.exec_d = True
        return environ

    def cmdline(self) -> list:
        return ["python", "train.py"] if self.exec_d else self.TORCHRUN

    def parent(self):
        return SimpleNamespace(cmdline=lambda: self.TORCHRUN)


def test_a_process_that_execs_while_it_is_read_is_read_again():
    """Its environment read before its exec, its command line after: it was kept as settled with
    its parent's environment, rank -1, and under `--tee 3` its local rank's file, which the
    console already shows, was read too, as rank -1's (a CI run of the spine's test flagged
    steps 22, 40 and 51 `unknown` so)."""
    from ridgescope.probes.gpu import process_entry
    proc, cache = _ExecsAsItsEnvironmentIsRead(), {}
    first = process_entry(proc, cache)
    assert not first["settled"], first
    again = process_entry(proc, cache)
    assert (again["rank"], again["local_rank"], again["settled"]) == (3, 3, True)


def test_written_files_are_a_processes_regular_output_files_only(tmp_path):
    out = tmp_path / "out.log"
    with open(out, "wb") as fh:
        proc = subprocess.Popen(["sleep", "5"], stdout=fh, stderr=subprocess.DEVNULL)
    try:
        (written,) = written_files(proc.pid)
        assert (written.fd, written.path, written.appends) == (1, str(out), False)
        assert written.ident == (os.stat(out).st_dev, os.stat(out).st_ino)
    finally:
        proc.kill()
        proc.wait()
    assert written_files(proc.pid) == []        # gone


def test_which_torchrun_files_the_console_shows():
    assert _std_spec("3", 5) == 3 and _std_spec("0:1,1:2", 1) == 2 and _std_spec("0:1", 1) == 0
    tee = TorchrunConsole(["torchrun", "--tee", "1", "train.py"], {})
    assert tee.shows(1, 0) and not tee.shows(2, 0) and not tee.shows(1, None)
    filtered = TorchrunConsole(["torchrun", "--tee=3", "--local-ranks-filter", "0,2", "x.py"], {})
    assert filtered.shows(2, 2) and not filtered.shows(1, 1)
    assert TorchrunConsole(["torchrun", "x.py"], {"PET_TEE": "3"}).shows(1, 0)
    assert TorchrunConsole(["bash", "-c", "python -m torch.distributed.run --tee 3 x.py"], {}).shows(1, 0)
    assert not TorchrunConsole(["python", "x.py", "--tee", "3"], {}).shows(1, 0)


def test_the_files_mpirun_writes_for_each_rank_are_named_from_its_command_line():
    """Open MPI's `--output-filename DIR` (`DIR:nocopy`: no console copy; `DIR:nojobid`: no job
    level, as Open MPI 4.1.4 writes them here): DIR/<job>/rank.N/stdout and stderr, rank N's
    (Open MPI 5 pads N with zeros); anywhere on the command line (under `bash -c` too, whose
    words `run` reads), and only for an MPI launcher."""
    from ridgescope.probes.output_files import MPIRUN_RANK_FILE, mpirun_output_files
    for cmd in (["mpirun", "-np", "4", "--output-filename", "out", "python", "train.py"],
                ["/usr/bin/mpiexec", "-output-filename", "out:nocopy", "python", "train.py"],
                ["mpirun", "--output-filename=out", "python", "train.py"],
                ["bash", "-c", "mpirun -np 2 --output-filename out python train.py"]):
        assert mpirun_output_files(cmd) == ["out/*/rank.*/stdout", "out/*/rank.*/stderr"], cmd
    for where in ("out:nojobid", "out:nocopy,nojobid", "out:nojobid,nocopy"):
        assert mpirun_output_files(["mpirun", "--output-filename", where, "x"]) == [
            "out/rank.*/stdout", "out/rank.*/stderr"], where
    assert mpirun_output_files(["mpirun", "--output-filename", "a:b", "x"])[0] == "a:b/*/rank.*/stdout"
    assert mpirun_output_files(["python", "train.py", "--output-filename", "x"]) == []
    assert mpirun_output_files(["mpirun", "-np", "2", "python", "train.py"]) == []
    assert mpirun_output_files(["mpirun", "--output-filename", "a[1]", "x"])[0] == "a[[]1]/*/rank.*/stdout"
    named = NamedFiles([], [re.compile(r"node(\d+)"), MPIRUN_RANK_FILE])
    assert named.rank("out/1/rank.12/stdout") == 12 and named.rank("out/rank.03/stderr") == 3
    assert named.rank("logs/node3/rank.12/stderr") == 3      # the user's own --rank-in-path first
    assert named.rank("out/1/rank.12/stdout.old") == -1
