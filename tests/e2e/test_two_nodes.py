"""Stdout only, the spine's job on two "nodes": two torchruns of 2 workers each, each under its
own `ridgescope run`, as a Slurm job runs one per node.  `--tee` prefixes each line with the
worker's local rank (`[default0]:` on both nodes), and the c10d rendezvous gives the nodes their
places as they join: only the workers' environment tells a node's ranks.  The second node's
probe gives its lines the job's ranks, so that each step has four ranks, not two ranks each
printed twice."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import uuid

import pytest
from support import REPO, SPINE_FAULTS, SPINE_STEPS, STRAGGLER_STEP

from ridgescope.pipeline import tansu

pytestmark = [pytest.mark.torch, pytest.mark.slow]

NODES, NPROC = 2, 2


@pytest.mark.tansu
@pytest.mark.parametrize("role, wrapped", [("default", False), ("trainer", False), ("trainer", True)])
def test_the_second_nodes_local_ranks_become_the_jobs(tansu_stack, role, wrapped):
    """`--role trainer` prefixes `[trainer0]:`, which the run process reads off torchrun's
    command line, or, where a shell script starts torchrun, guesses from the first lines."""
    job = f"two-nodes-{role}-{uuid.uuid4().hex[:6]}"
    port = str(tansu.free_port())
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--nnodes", str(NODES),
                "--nproc-per-node", str(NPROC), "--role", role, "--rdzv-backend", "c10d", "--rdzv-endpoint",
                f"127.0.0.1:{port}", "--rdzv-id", job, "--tee", "3", "-m", "ridgescope.cli.demo_job"]
    command = ["bash", "-c", shlex.join(torchrun)] if wrapped else torchrun
    nodes = [subprocess.Popen(
        [sys.executable, "-m", "ridgescope.cli.main", "run", *tansu_stack.flags, "--job", job,
         "--no-hooks", "--", *command],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **SPINE_FAULTS, "RIDGESCOPE_DEBUG": "1"}) for _ in range(NODES)]
    outs = [node.communicate(timeout=600) for node in nodes]
    assert [node.returncode for node in nodes] == [0, 0], outs
    for stdout, stderr in outs:     # each node's workers print their local ranks
        assert f"[{role}{NPROC - 1}]:step {SPINE_STEPS}/{SPINE_STEPS}" in stdout
        assert "NOT delivered" not in stderr
        assert ("read as --prefix-template '[${role_name}${local_rank}]:'" in stderr) == wrapped

    world = NODES * NPROC
    steps = tansu_stack.wait_for_steps(job, SPINE_STEPS)
    rows = tansu_stack.sql(f"SELECT step, groupArray(rank) AS ranks FROM step_rank FINAL "
                           f"WHERE job = '{job}' GROUP BY step ORDER BY step")
    assert [(r["step"], sorted(r["ranks"])) for r in rows] == [
        (s, list(range(world))) for s in range(1, SPINE_STEPS + 1)]
    assert all(s["rank_count"] == world for s in steps)
    # A step's ranks finish together (they all wait for the straggler's all-reduce): stdout
    # alone finds the step slow, and cannot say which rank made it so.
    assert next(s for s in steps if s["step"] == STRAGGLER_STEP)["slow"]

    # The records keep the local rank the line was printed under.
    progress = tansu_stack.sql(f"SELECT rank, record FROM progress WHERE job = '{job}' "
                               f"AND kind = 'progress' AND step = {SPINE_STEPS} ORDER BY rank")
    assert [(p["rank"], json.loads(p["record"])["local_rank"]) for p in progress] == [
        (rank, rank % NPROC) for rank in range(world)]


@pytest.mark.tansu
def test_two_nodes_unlabelled_prints_are_each_nodes_own_ranks(tansu_stack):
    """torchrun with no `--tee` on each of two nodes, every worker printing `step N/16 ...` and
    no line saying whose: each node's Kth print of a step is its local rank K's, the job's rank
    base + K from the workers' environment, so each step has the job's four ranks (before, both
    nodes' prints were ranks 0 and 1).  Rank 3 slept 0.5 s in step 10: slow, and by the order of
    the prints no culprit.  Each node's first print of step 1, held until its second came, is
    its local rank 0's too (it went out as the unplaced rank -1's)."""
    job = f"two-nodes-unlabelled-{uuid.uuid4().hex[:6]}"
    port = str(tansu.free_port())
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--nnodes", str(NODES), "--nproc-per-node",
                str(NPROC), "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", job,
                str(REPO / "tests" / "data" / "captured" / "log_dir_steps.py")]
    nodes = [subprocess.Popen(
        [sys.executable, "-m", "ridgescope.cli.main", "run", *tansu_stack.flags, "--job", job, "--no-hooks",
         "--", *torchrun], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "SLOW_RANK": "3"}) for _ in range(NODES)]
    outs = [node.communicate(timeout=600) for node in nodes]
    assert [node.returncode for node in nodes] == [0, 0], outs
    assert all(stdout.count("step 10/16 ") == NPROC for stdout, _ in outs)
    steps = tansu_stack.wait_for_steps(job, 16)
    # a row that came after its step was judged is stored after the verdict (a late row)
    query = (f"SELECT step, groupArray(rank) AS ranks FROM step_rank FINAL "
             f"WHERE job = '{job}' GROUP BY step ORDER BY step")
    deadline, rows = time.monotonic() + 60, tansu_stack.sql(query)
    while sum(len(r["ranks"]) for r in rows) < 16 * NODES * NPROC and time.monotonic() < deadline:
        time.sleep(1)
        rows = tansu_stack.sql(query)
    assert [(r["step"], sorted(r["ranks"])) for r in rows] == [(s, list(range(NODES * NPROC))) for s in range(1, 17)]
    # a live job's other steps may run long on a busy machine: step 10 is slow, and no step
    # names a culprit
    assert next(s for s in steps if s["step"] == 10)["slow"]
    assert {s["culprit_rank"] for s in steps if s["slow"]} == {-1}
