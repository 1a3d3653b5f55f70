"""torchrun's `--tee` prefix names a worker's local rank: on a node past the first, the log
probe gives the job's rank instead (ranks.py)."""
from __future__ import annotations

import io
import os
import queue
from pathlib import Path

from ridgescope.probes.logprobe import StreamPump
from ridgescope.probes.ranks import (Learnt, LocalRanks, base_from_cmd, base_from_workers, flag_value,
                                     labelling_option, mpich_prefix, nnodes, nproc_per_node, placement, program,
                                     task_of_launcher, tasks_from_cmd, tee_prefix_from_cmd, tee_prefixed,
                                     world_from_workers)
from ridgescope.probes.runner import world_size_from_cmd

CAPTURED = Path(__file__).resolve().parents[1] / "data" / "captured"

TORCHRUN = ["torchrun", "--nnodes", "2", "--node-rank=1", "--nproc-per-node", "4", "train.py",
            "--node-rank", "7"]


def test_the_command_line_gives_the_node_base_of_a_static_rendezvous():
    assert flag_value(TORCHRUN, "--node-rank") == "1"       # torchrun's, not the script's
    assert base_from_cmd(TORCHRUN) == 4
    assert base_from_cmd(["torchrun", "--node_rank", "2", "--nproc_per_node=8", "x.py"]) == 16
    assert base_from_cmd(["torchrun", "--nproc-per-node", "8", "x.py"]) is None
    assert base_from_cmd(["torchrun", "--node-rank", "1", "--nproc-per-node", "gpu"]) is None
    assert world_size_from_cmd(TORCHRUN) == 8
    assert world_size_from_cmd(["torchrun", "--nnodes=1:4", "--nproc-per-node=2"]) == 2


def test_torchx_dist_ddp_gives_its_nodes_and_workers():
    """`torchx run ... dist.ddp -j NxM`: N nodes (replicas) of M workers, as torchrun's flags
    would say; no `-j` is torchx's default, one node of two."""
    ddp = ["torchx", "run", "-s", "local_cwd", "dist.ddp", "-j", "2x4", "--script", "train.py"]
    assert (nnodes(ddp), nproc_per_node(ddp), world_size_from_cmd(ddp, {})) == (2, 4, 8)
    assert world_size_from_cmd(["torchx", "run", "dist.ddp", "-j=8", "--script", "t.py"], {}) == 8
    assert world_size_from_cmd(["torchx", "run", "dist.ddp", "--script", "t.py"], {}) == 2
    elastic = ["torchx", "run", "dist.ddp", "--j", "1:4x8", "--script", "t.py"]
    assert (nnodes(elastic), nproc_per_node(elastic)) == (None, 8)
    assert nproc_per_node(["make", "-j", "4"]) is None
    assert world_size_from_cmd(["torchx", "run", "utils.python", "--script", "t.py"], {}) == 0


def test_the_workers_environment_gives_the_node_base():
    workers = [{"pid": 1, "rank": -1, "local_rank": None},      # torchrun itself
               {"pid": 2, "rank": 6, "local_rank": 2}, {"pid": 3, "rank": 4, "local_rank": 0}]
    assert base_from_workers(workers) == 4
    assert base_from_workers(workers[:1]) is None
    assert base_from_workers(workers + [{"pid": 4, "rank": 1, "local_rank": 0}]) is None


def test_the_workers_environment_gives_the_world_size():
    workers = [{"pid": 1, "rank": -1, "local_rank": None, "world_size": None},     # torchrun itself
               {"pid": 2, "rank": 6, "local_rank": 2, "world_size": 8}, {"pid": 3, "rank": 4, "local_rank": 0,
                                                                         "world_size": 8}]
    assert world_from_workers(workers) == 8
    assert world_from_workers(workers[:1]) is None
    assert world_from_workers(workers + [{"pid": 4, "world_size": 4}]) is None


def test_an_unknown_base_is_asked_again_and_never_guessed_on_several_nodes(monkeypatch):
    monkeypatch.setattr(Learnt, "RETRY_S", 0.0)
    answers = [None, 8]
    ranks = LocalRanks(lambda: answers.pop(0), multi_node=True)
    assert ranks.job_rank(3) == -1          # not rank 3 of the first node
    assert ranks.unplaced == 1              # the run process says so at the end
    assert ranks.job_rank(3) == 11
    assert ranks.job_rank(0) == 8 and not answers           # asked no more once known
    assert LocalRanks(lambda: None, fallback=4, multi_node=True).job_rank(1) == 5
    assert LocalRanks(lambda: None).job_rank(1) == 1         # one node: local is the job's rank


def _pump(data: bytes, local_ranks: LocalRanks, nproc_per_node: int | None = None,
          tee_prefix=None) -> list:
    read_fd, write_fd = os.pipe()
    got: queue.Queue = queue.Queue()
    pump = StreamPump(read_fd, io.BytesIO(), "stdout", lambda rank, p, ts: got.put((rank, p["record"])),
                      -1, local_ranks, nproc_per_node, tee_prefix).start()
    os.write(write_fd, data)
    os.close(write_fd)
    pump.join(20)
    return [got.get_nowait() for _ in range(got.qsize())]


def test_tee_prefixed_lines_of_the_second_node_carry_the_jobs_ranks():
    lines = b"".join(b"[default%d]:step %d/2 loss 2.0 step_time_ms 100\n" % (r, s)
                     for s in (1, 2) for r in (0, 1))
    assert tee_prefixed(lines) and not tee_prefixed(b"0: [default1]:step 1/2\n")
    got = _pump(lines, LocalRanks(lambda: 2, multi_node=True))
    assert sorted((rank, r["rank"], r["local_rank"], r["step"]) for rank, r in got) == [
        (2, 2, 0, 1), (2, 2, 0, 2), (3, 3, 1, 1), (3, 3, 1, 2)]


def test_the_rank_torchruns_report_names_on_the_second_node_stays_the_jobs():
    """Node 1 of two (`--tee 3`, a captured crash): its torchrun's report names rank 3 (local
    rank 1) as the first failure, the job's rank; its agent's `failed ... local_rank: 1` names no
    rank, and is the node's local rank 1.  Before, both were taken for local ranks (rank 5)."""
    node1 = (CAPTURED / "torch-2.15_torchrun-tee3_2node_rank3-raises_node1.log").read_bytes()
    got = _pump(node1, LocalRanks(lambda: 2, multi_node=True))
    failed = [(rank, r["local_rank"], bool(r.get("first"))) for rank, r in got if r.get("error") == "child_failed"]
    assert failed == [(3, 1, False), (3, 1, True)]
    (culprit,) = [(rank, r["local_rank"]) for rank, r in got if "shape mismatch" in (r.get("message") or "")]
    assert culprit == (3, 1)


def test_other_launchers_ranks_are_the_jobs_already():
    """srun's label, mpirun's tag and torch's own `[rankN]:` name the job's rank."""
    lines = (b"1: step 1/2 loss 2.0 step_time_ms 100\n"
             b"[1,3]<stdout>:step 1/2 loss 2.0 step_time_ms 100\n")
    got = _pump(lines, LocalRanks(lambda: 40, multi_node=True))
    assert sorted((rank, r["rank"], "local_rank" in r) for rank, r in got) == [(1, 1, False), (3, 3, False)]


def test_srun_label_around_tee_takes_the_workers_per_node_from_torchrun():
    """`ridgescope run -- srun --label torchrun --nproc-per-node 4 --tee 3 ...`: one stream
    for all nodes, each line behind the node's label and the local rank."""
    lines = (b"1: [default0]:step 1/2 loss 2.0 step_time_ms 100\n"
             b"0: [default1]:step 1/2 loss 2.0 step_time_ms 100\n")
    got = _pump(lines, LocalRanks(lambda: None, multi_node=True), nproc_per_node=4)
    assert sorted(rank for rank, _ in got) == [1, 4]


def test_torchruns_role_and_template_from_its_command_line():
    assert tee_prefix_from_cmd(["torchrun", "--nproc-per-node", "2", "x.py"], {}, "vm") is None
    assert tee_prefix_from_cmd(["torchrun", "--role", "default", "x.py"], {}, "vm") is None
    role = tee_prefix_from_cmd(["torchrun", "--role=trainer", "x.py"], {}, "vm")
    assert role.local and role.as_default(b"[trainer3]:x\n") == b"[default3]:x\n"
    host = tee_prefix_from_cmd(["torchrun", "x.py"], {"PET_LOG_LINE_PREFIX_TEMPLATE": "${hostname}:${rank}: "},
                               "r12i0n8")
    assert not host.local               # ${rank} is the job's rank already
    assert host.as_default(b"r12i0n8:11: a 1.0r12i0n8:9: b\n") == b"[default11]:a 1.0[default9]:b\n"
    srun = tee_prefix_from_cmd(["srun", "--label", "torchrun", "--log-line-prefix-template=${hostname}:${rank}: ",
                                "x.py"], {}, "login1")     # the other nodes' names, from their lines
    assert srun.as_default(b"0: n7:4: a 1.0n7:5: b\n") == b"0: [default4]:a 1.0[default5]:b\n"


def test_a_trainer_roles_lines_on_the_second_node():
    """`torchrun --role trainer --tee 3` on the second node of two, 2 workers each."""
    lines = (b"[trainer1]:step 1/2 loss 2.0 step_time_ms 100\n"
             b"[trainer0]:step 1/2 loss 2.0 step_time_ms 100\n")
    prefix = tee_prefix_from_cmd(["torchrun", "--role", "trainer"], {}, "vm")
    got = _pump(lines, LocalRanks(lambda: 2, multi_node=True), tee_prefix=prefix)
    assert sorted((rank, r["local_rank"]) for rank, r in got) == [(2, 0), (3, 1)]



def test_a_run_that_srun_or_mpirun_started_once_per_rank_is_its_tasks_rank():
    """`srun -n 8 ridgescope run -- python train.py` (mpirun, mpiexec alike): the launcher's
    environment names the task, the rank of every line of its one process."""
    train = ["python", "train.py"]
    assert task_of_launcher(train, {"SLURM_PROCID": "3", "SLURM_NTASKS": "8"}) == (3, 8)
    assert task_of_launcher(train, {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2"}) == (1, 2)
    assert task_of_launcher(["bash", "train.sh"], {"PMI_RANK": "5", "PMI_SIZE": "6"}) == (5, 6)
    # mpirun inside a Slurm allocation: its daemon's task (the node) is every process's
    # SLURM_PROCID; Open MPI's own variables name the rank
    assert task_of_launcher(train, {"SLURM_PROCID": "0", "SLURM_NTASKS": "2",
                                    "OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "8"}) == (3, 8)


def test_no_task_rank_where_the_command_starts_the_ranks_or_one_task_runs():
    """One task, no launcher, or a command that starts its ranks itself (the README's
    `srun --ntasks-per-node 1 ridgescope run -- torchrun ...`: there the task is a node)."""
    slurm = {"SLURM_PROCID": "1", "SLURM_NTASKS": "2"}
    assert task_of_launcher(["python", "train.py"], {}) is None
    assert task_of_launcher(["python", "train.py"], {"SLURM_PROCID": "0", "SLURM_NTASKS": "1"}) is None
    assert task_of_launcher(["python", "train.py"], {"SLURM_PROCID": "x", "SLURM_NTASKS": "2"}) is None
    for cmd in (TORCHRUN, ["/usr/bin/python3", "-m", "torch.distributed.run", "train.py"],
                ["deepspeed", "train.py"], ["accelerate", "launch", "train.py"], ["mpirun", "-n", "2", "x"]):
        assert task_of_launcher(cmd, slurm) is None, cmd


def test_a_process_that_an_mpi_launcher_started_is_the_rank_its_variables_name():
    """`mpirun -np 4 python train.py`: its processes have no RANK when they start (the job sets it
    later, if at all), so their /proc environment names them only by the launcher's variables:
    Open MPI's, MPICH's and Intel MPI's.  Before, each was rank -1 (the host and GPU probes) or 0
    (the hook probe)."""
    train = ["python", "train.py"]
    ompi = {"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "1",
            "PMIX_RANK": "3", "SLURM_PROCID": "1"}
    assert placement(ompi, lambda: train) == (3, 8, 1)
    assert placement({"PMI_RANK": "5", "PMI_SIZE": "6", "MPI_LOCALRANKID": "2"}, lambda: train) == (5, 6, 2)
    pals = {"PALS_RANKID": "13", "PALS_LOCAL_RANKID": "1", "PMI_SIZE": "24"}     # `mpiexec --ppn 12` on Aurora
    assert placement(pals, lambda: train) == (13, 24, 1)
    assert placement({**pals, "PMI_RANK": "13"}, lambda: train) == (13, 24, 1)
    # torch's own variables, where the launcher set them, and the rank `run` gives a task come first
    assert placement({**ompi, "RANK": "7", "WORLD_SIZE": "16", "LOCAL_RANK": "0"}, lambda: train) == (7, 16, 0)
    assert placement({**ompi, "RIDGESCOPE_TASK_RANK": "2", "RIDGESCOPE_TASK_WORLD": "4"}, lambda: train) == (2, 4, None)
    assert placement({}, lambda: train) == (-1, None, None)


def test_a_launcher_that_an_mpi_launcher_started_once_a_node_is_no_rank():
    """`mpirun -npernode 1 torchrun ...`: the launcher carries the node's MPI rank, its workers
    the job's ranks; it is none of them (its cpu is not a rank's)."""
    node = {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2"}
    for cmd in (["/venv/bin/python", "/venv/bin/torchrun", "--nproc-per-node", "4", "train.py"],
                ["python3", "-m", "torch.distributed.run", "train.py"], ["deepspeed", "train.py"]):
        assert placement(node, lambda: cmd)[0] == -1, cmd
    assert placement({**node, "RANK": "5"}, lambda: ["python", "train.py"])[0] == 5
    asked: list = []
    placement({"RANK": "0"}, lambda: asked.append(1) or [])
    assert not asked      # the command line is read only where an MPI variable alone names the rank


def test_srun_and_mpirun_options_give_the_jobs_size():
    """`ridgescope run -- srun -n 4 python train.py`: one run process reads every task's lines,
    so the launcher's own options say how many ranks a step waits for, not the program's."""
    assert world_size_from_cmd(["srun", "-n", "4", "python", "train.py", "-n", "9"], {}) == 4
    assert world_size_from_cmd(["srun", "-n4", "--label", "python", "train.py"], {}) == 4
    assert world_size_from_cmd(["srun", "-O", "-u", "--label", "-n", "2", "python", "train.py"], {}) == 2
    assert world_size_from_cmd(["srun", "--ntasks=6", "python", "train.py"], {}) == 6
    assert world_size_from_cmd(["srun", "-p", "gpu", "-N", "2", "--ntasks-per-node", "8",
                                "python", "train.py"], {}) == 16
    assert world_size_from_cmd(["srun", "--partition", "gpu", "python", "train.py", "--ntasks", "3"],
                               {"SLURM_NTASKS": "2"}) == 2      # the allocation's
    assert world_size_from_cmd(["srun", "python", "train.py"], {}) == 0
    assert world_size_from_cmd(["mpirun", "--mca", "btl", "self,tcp", "-np", "8", "--", "python",
                                "train.py"], {}) == 8
    assert world_size_from_cmd(["mpiexec", "-n", "2", "./train", "-n", "5"], {}) == 2
    assert world_size_from_cmd(["python", "train.py", "-n", "4"], {"SLURM_NTASKS": "4"}) == 0
    # srun starting a torchrun a node: torchrun's flags say the job's size
    assert world_size_from_cmd(["srun", "-N", "2", "--ntasks-per-node", "1", "torchrun", "--nnodes", "2",
                                "--nproc-per-node", "4", "train.py"], {}) == 8
    assert world_size_from_cmd(["srun", "-N", "2", "--ntasks-per-node", "1", "torchrun", "--nnodes", "2",
                                "train.py"], {}) == 0


def test_the_option_that_labels_each_ranks_lines_is_the_launchers_own():
    """What the run's report suggests where prints of several ranks ran together."""
    assert labelling_option(["mpirun", "-np", "4", "python", "train.py"]) == "mpirun --tag-output"
    assert labelling_option(["/opt/bin/mpiexec", "-n", "4", "python", "train.py"]) == "mpirun --tag-output"
    assert labelling_option(["srun", "-n", "4", "python", "train.py"]) == "srun --label"
    assert labelling_option(["torchrun", "--nproc-per-node", "4", "train.py"]) == "torchrun --tee 3"


def test_mpichs_launcher_under_its_suffixed_names_and_its_rank_prefix():
    """A machine with several MPI libraries names each one's launcher with a suffix
    (`mpiexec.hydra`, Debian's `mpirun.openmpi`): the same launcher.  MPICH's and Intel MPI's
    `-l`/`-prepend-rank` before the program gives the `[3] ` prefix; after it, it is the
    program's own option."""
    assert [program(w) for w in ("/usr/bin/mpiexec.hydra", "mpirun.openmpi", "python3.11", "srun")] == [
        "mpiexec", "mpirun", "python3.11", "srun"]
    assert tasks_from_cmd(["mpiexec.hydra", "-n", "4", "python", "x.py"], {}) == 4
    for cmd in (["mpiexec", "-n", "4", "-prepend-rank", "python", "x.py"],
                ["/opt/mpich/bin/mpiexec.hydra", "-l", "-n", "4", "python", "x.py"]):
        prefix = mpich_prefix(cmd)
        assert prefix is not None and prefix.as_default(b"[2] step 1\n") == b"[default2]:step 1\n", cmd
        assert tee_prefix_from_cmd(cmd, {}, None) is not None
    assert mpich_prefix(["mpiexec", "-n", "2", "ls", "-l"]) is None
    assert mpich_prefix(["mpiexec", "-n", "2", "python", "x.py"]) is None
    assert mpich_prefix(["python", "-l"]) is None
