"""The job's rank of what a node's log says.

torchrun's `--tee` prefix (`[default3]:`) names a worker's *local* rank: rank 3 of the job only
on the first node.  torchrun gives a node's workers consecutive ranks (group rank x local world
size + local rank), so one number per node, the job's rank of its local rank 0 (the node's
base), turns the one into the other.  The workers' own environment says it (RANK - LOCAL_RANK),
whatever the rendezvous; a static one's `--node-rank` says it too.
"""
from __future__ import annotations

import os
import re
import shutil
import threading
import time
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

from ridgescope.probes import env

if TYPE_CHECKING:
    from ridgescope.parsers.template import TeePrefix

TEE_PREFIX = re.compile(rb"(?m)^\[default[0-9]{1,7}+\]:")
"""torchrun's `--tee` prefix at the start of a line.  Behind another launcher's label
(`0: [default1]:`) it is not this stream's: that label names the rank (see parsers/prefix.py)."""


def tee_prefixed(block: bytes) -> bool:
    """Does a line of `block` begin with torchrun's `--tee` prefix?"""
    return b"[default" in block and TEE_PREFIX.search(block) is not None


def flag_value(cmd: list[str], *names: str) -> str | None:
    """The value of the first of `names` on a command line, as `--name V` or `--name=V`."""
    for i, arg in enumerate(cmd):
        name, eq, value = arg.partition("=")
        if name in names:
            if eq:
                return value
            return cmd[i + 1] if i + 1 < len(cmd) else None
    return None


def _count(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


def nproc_per_node(cmd: list[str]) -> int | None:
    """torchrun's `--nproc-per-node`, or the workers a node of torchx's `dist.ddp -j NxM`."""
    return _count(flag_value(cmd, "--nproc-per-node", "--nproc_per_node")) or _torchx_job(cmd)[1]


def nnodes(cmd: list[str]) -> int | None:
    """torchrun's `--nnodes`, or the nodes of torchx's `dist.ddp -j NxM`, when it is one number
    (not an elastic `MIN:MAX`)."""
    return _count(flag_value(cmd, "--nnodes")) or _torchx_job(cmd)[0]


def _torchx_job(cmd: list[str]) -> tuple[int | None, int | None]:
    """(nodes, workers a node) of torchx's `dist.ddp` component, `-j NxM` (`-j M`: one node;
    no `-j`: torchx 0.7's default, `1x2`)."""
    if "dist.ddp" not in cmd:
        return None, None
    nodes, x, workers = (flag_value(cmd, "-j", "--j") or "1x2").rpartition("x")
    return (_count(nodes) if x else 1), _count(workers)


MPI_VARS = (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", ("OMPI_COMM_WORLD_LOCAL_RANK",)),
            ("PMI_RANK", "PMI_SIZE", ("MPI_LOCALRANKID", "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID")),
            ("PALS_RANKID", "PMI_SIZE", ("PALS_LOCAL_RANKID",)))
"""(rank, number of ranks, local rank's candidates) as Open MPI's mpirun, MPICH's or Intel MPI's
mpiexec (and srun's PMI-2) and HPE Cray's PALS mpiexec (ALCF's Polaris and Aurora) name each
process they start."""
TASK_VARS = tuple((rank, size) for rank, size, _ in MPI_VARS) + (("SLURM_PROCID", "SLURM_NTASKS"),)
"""(rank, number of tasks) as the MPI launchers and srun name the process they start.  The MPI
launchers' first: inside a Slurm allocation they start their daemons with srun, one task a node,
and every process of a node inherits its daemon's SLURM_PROCID."""
MPI_LAUNCHERS = frozenset(("mpirun", "mpiexec", "orterun"))
TORCHRUN_MODULES = ("torch.distributed.run", "torch.distributed.launch")
LAUNCHERS = frozenset(("torchrun", "deepspeed", "accelerate", "mpirun", "mpiexec", "srun",
                       "horovodrun", *TORCHRUN_MODULES))
"""Programs (or `python -m` modules) that start a job's ranks themselves."""


def program(word: str) -> str:
    """A command word's program: its base name, without the suffix by which a machine with several
    MPI libraries names each one's launcher (`mpiexec.hydra`, `mpirun.openmpi`)."""
    name = os.path.basename(word)
    head = name.partition(".")[0]
    return head if head in MPI_LAUNCHERS else name


def starts_ranks(cmd: list[str]) -> bool:
    """Does the command start ranks of its own (torchrun, `python -m torch.distributed.run`,
    deepspeed, mpirun, ...), rather than run as one?"""
    if not cmd:
        return False
    if program(cmd[0]) in LAUNCHERS:
        return True
    module = flag_value(cmd[:4], "-m")
    return os.path.basename(cmd[0]).startswith("python") and module in LAUNCHERS


def is_launcher(cmd: list[str]) -> bool:
    """Is the process a launcher: its program, the script its Python runs (`python
    .../bin/torchrun`, as a console script's process shows) or its `python -m` module?"""
    return starts_ranks(cmd) or (len(cmd) > 1 and os.path.basename(cmd[0]).startswith("python")
                                 and os.path.basename(cmd[1]) in LAUNCHERS)


def labelling_option(cmd: list[str]) -> str:
    """The option of the command's launcher that puts each rank's label on its lines: what to
    suggest where the prints of several ranks ran together into one line."""
    programs = {program(word) for word in cmd}
    if programs & MPI_LAUNCHERS:
        return "mpirun --tag-output"
    if "srun" in programs:
        return "srun --label"
    return "torchrun --tee 3"


def task_of_launcher(cmd: list[str], environ: dict[str, str]) -> tuple[int, int] | None:
    """(rank, world size) of a `ridgescope run` that srun or mpirun started once per rank
    (`srun -n 8 ridgescope run --job J -- python train.py`, a JAX job, say): the launcher's
    environment names the task, and so the rank of every line of its one process.  None where
    no launcher started several, or where the command starts the ranks itself (the README's
    `srun --ntasks-per-node 1 ridgescope run -- torchrun ...`: there a task is a node)."""
    if starts_ranks(cmd):
        return None
    for rank_var, size_var in TASK_VARS:
        rank, size = _count(environ.get(rank_var)), _count(environ.get(size_var))
        if rank is not None and size is not None and size > 1 and rank < size:
            return rank, size
    return None


def placement(environ: Mapping[str, str], cmdline: Callable[[], list[str]]) -> tuple[int, int | None, int | None]:
    """(rank, world size, local rank) of a job's process, from its environment: torch's RANK,
    WORLD_SIZE and LOCAL_RANK; else the rank `run` gives a task that srun or mpirun started
    once per rank; else an MPI launcher's own variables (a job that `mpirun -np 8 python
    train.py` starts sets RANK itself, if at all, after it started: /proc shows the environment
    its exec was given).  The rank is -1 where none names it, and for a launcher that an MPI
    launcher started once a node (`mpirun -npernode 1 torchrun ...`): its workers are the
    ranks.  ``cmdline`` is asked only then."""
    world, local = _count(environ.get("WORLD_SIZE")), _count(environ.get("LOCAL_RANK"))
    rank = _count(environ.get("RANK"))
    if rank is None:
        rank = _count(environ.get(env.TASK_RANK))
    if rank is not None:
        return rank, world if world is not None else _count(environ.get(env.TASK_WORLD)), local
    for rank_var, size_var, local_vars in MPI_VARS:
        if rank_var in environ:
            rank = _count(environ[rank_var])
            if rank is None or is_launcher(cmdline()):
                break
            local = next((_count(environ[var]) for var in local_vars if var in environ), None)
            return rank, _count(environ.get(size_var)), local
    return -1, world, local


SRUN_VALUED = frozenset("-" + c for c in "ABbCcDdeGiJLMmNnopqrSTtWwx")
"""srun's short options that take a value (`-p gpu`): the value is not the program."""
MPIRUN_VALUED = frozenset(("-n", "-np", "--np", "-c", "-N", "-H", "-host", "--host", "-hostfile",
                           "--hostfile", "-machinefile", "-x", "-wdir", "-ppn", "-f", "-hosts",
                           "-npernode", "--npernode", "--map-by", "--bind-to", "--rank-by"))
MPIRUN_TWO_VALUED = frozenset(("-mca", "--mca", "-gmca", "--gmca", "-genv", "-env"))
"""mpirun's and mpiexec's options (Open MPI's, MPICH's, Intel MPI's) that take one value or two
(`--mca btl_tcp_if_include eth0`)."""


def _program_at(cmd: list[str], valued: frozenset, two_valued: frozenset = frozenset()) -> int:
    """Index of the program a launcher (`cmd[0]`) runs: the first word that is no option nor an
    option's value.  A long option without `=` that no set names is taken as a flag unless the
    next word is neither an option nor a program (not on PATH, no `.py`): `srun --label -n 2
    python x.py`, `srun --partition gpu python x.py`."""
    i = 1
    while i < len(cmd):
        word = cmd[i]
        if word == "--":
            return i + 1
        if not word.startswith("-") or word == "-":
            return i
        if "=" in word:
            i += 1
        elif word in two_valued:
            i += 3
        elif word in valued:
            i += 2
        elif word.startswith("--") and i + 1 < len(cmd) and not cmd[i + 1].startswith("-") \
                and not _is_program(cmd[i + 1]):
            i += 2
        else:
            i += 1
    return len(cmd)


def _is_program(word: str) -> bool:
    return word.endswith(".py") or shutil.which(word) is not None


def tasks_from_cmd(cmd: list[str], environ: dict[str, str]) -> int | None:
    """How many tasks srun or mpirun (mpiexec) starts (`ridgescope run -- srun -n 8 python
    train.py`): `-n`/`--ntasks`, or nodes x `--ntasks-per-node`, or, for srun inside an
    allocation given none, its SLURM_NTASKS; mpirun's `-n`/`-np`.  None where the command is no
    such launcher, where its program starts ranks itself (torchrun: its flags say the job's
    size), or where its options do not say."""
    if not cmd:
        return None
    name = program(cmd[0])
    if name == "srun":
        options = cmd[1:_program_at(cmd, SRUN_VALUED)]
        attached = next((w[2:] for w in options if w.startswith("-n") and w[2:].isdigit()), None)
        tasks = _count(flag_value(options, "-n", "--ntasks") or attached)
        per_node, nodes = (_count(flag_value(options, "--ntasks-per-node")),
                           _count(flag_value(options, "-N", "--nodes")))
        if tasks is None and per_node is not None:
            tasks = per_node * (nodes or 1)
        if tasks is None:
            tasks = _count(environ.get("SLURM_NTASKS"))
    elif name in MPI_LAUNCHERS:
        options = cmd[1:_program_at(cmd, MPIRUN_VALUED, MPIRUN_TWO_VALUED)]
        tasks = _count(flag_value(options, "-n", "-np", "--np", "--n"))
    else:
        return None
    return None if starts_ranks(cmd[1 + len(options):]) else tasks


def base_from_cmd(cmd: list[str]) -> int | None:
    """Node rank x workers per node, where torchrun's command line gives both."""
    node, nproc = _count(flag_value(cmd, "--node-rank", "--node_rank")), nproc_per_node(cmd)
    return node * nproc if node is not None and nproc is not None else None


def tee_prefix_from_cmd(cmd: list[str], env: dict[str, str], hostname: str | None) -> TeePrefix | None:
    """The prefix torchrun's command line gives its workers' lines where it is not the default
    `[defaultN]:` (`--role`, `--log-line-prefix-template`, or their PET_ environment variables);
    None where it is."""
    template = flag_value(cmd, "--log-line-prefix-template", "--log_line_prefix_template") or env.get(
        "PET_LOG_LINE_PREFIX_TEMPLATE")
    role = flag_value(cmd, "--role") or env.get("PET_ROLE")
    if not template and (not role or role == "default"):
        return mpich_prefix(cmd)
    from ridgescope.parsers.template import TeePrefix
    if cmd and program(cmd[0]) in ("srun", *MPI_LAUNCHERS):
        hostname = None     # torchruns on other nodes too: their names are learnt from the lines
    return TeePrefix(template or "[${role_name}${local_rank}]:", role or "default", hostname)


MPICH_PREFIX_OPTIONS = ("-l", "-prepend-rank", "--prepend-rank")


def mpich_prefix(cmd: list[str]) -> TeePrefix | None:
    """The prefix MPICH's and Intel MPI's mpiexec (Hydra) put before each rank's output where
    told to (`-l`, `-prepend-rank`): `[3] `, the job's rank."""
    if not cmd or program(cmd[0]) not in MPI_LAUNCHERS:
        return None
    if not any(word in MPICH_PREFIX_OPTIONS for word in cmd[1:_program_at(cmd, MPIRUN_VALUED, MPIRUN_TWO_VALUED)]):
        return None
    from ridgescope.parsers.template import MPICH, TeePrefix
    return TeePrefix(MPICH)


TORCHRUN_TAIL_MS = 100
"""torchrun's `--tee` passes each worker's output on from a file that it reads to its end and
then again 0.1 s later (torch.distributed.elastic's `TailLog`): a line reaches the pipe up to
that long after it was written."""


def runs_torchrun(cmd: list[str]) -> bool:
    """Is torchrun anywhere on the command line (under srun too)?"""
    return any(os.path.basename(arg) == "torchrun" or arg in TORCHRUN_MODULES for arg in cmd)


def read_late_ms(cmd: list[str], env: dict[str, str]) -> int:
    """How late a worker's line can reach the command's pipes, after it was written: torchrun's
    poll where it tees (`--tee`, or PET_TEE), anywhere on the command line (under srun too);
    0 where the lines come as written."""
    tee = flag_value(cmd, "--tee") or env.get("PET_TEE")
    return TORCHRUN_TAIL_MS if runs_torchrun(cmd) and tee not in (None, "", "0") else 0


def base_from_workers(procs: Iterable[dict]) -> int | None:
    """RANK - LOCAL_RANK of the node's workers (``{"rank", "local_rank"}`` read from their
    environment, rank -1 and local_rank None where unknown), when they agree on one."""
    bases = {p["rank"] - p["local_rank"] for p in procs
             if p.get("rank", -1) >= 0 and p.get("local_rank") is not None}
    return bases.pop() if len(bases) == 1 else None


def world_from_workers(procs: Iterable[dict]) -> int | None:
    """WORLD_SIZE of the node's workers (``{"world_size"}`` read from their environment), when
    they agree on one."""
    sizes = {p["world_size"] for p in procs if p.get("world_size")}
    return sizes.pop() if len(sizes) == 1 else None


class Learnt:
    """A value read from the job's processes: `find` is asked (at most once every RETRY_S,
    until it answers) when the value is needed; a worker that printed a line has started, so
    its environment can be read.  Until then, `fallback`."""

    RETRY_S = 1.0

    def __init__(self, find: Callable[[], int | None], fallback: int | None = None) -> None:
        self._find, self.fallback = find, fallback
        self.value: int | None = None
        self._asked = float("-inf")
        self._lock = threading.Lock()

    def get(self) -> int | None:
        if self.value is None:
            with self._lock:
                now = time.monotonic()
                if self.value is None and now - self._asked >= self.RETRY_S:
                    self._asked = now
                    try:
                        self.value = self._find()
                    except Exception:  # noqa: BLE001 - a process gone or unreadable: ask later
                        self.value = None
        return self.value if self.value is not None else self.fallback


class LocalRanks:
    """The job's rank of a local rank on this node; shared by the node's stdout and stderr.

    The node's base (RANK - LOCAL_RANK) is learnt from its workers (`Learnt`); until then, the
    command line's, if it gives one; and on a job of several nodes where neither tells, the
    rank is unknown (-1) rather than another node's rank."""

    def __init__(self, find_base: Callable[[], int | None], fallback: int | None = None,
                 multi_node: bool = False) -> None:
        self._base = Learnt(find_base, fallback)
        self._multi_node = multi_node
        self.unplaced = 0
        """Records given rank -1: their node's base was never known."""

    def job_rank(self, local_rank: int) -> int:
        base = self._base.get()
        if base is None:
            if not self._multi_node:
                return local_rank
            self.unplaced += 1
            return -1
        return base + local_rank
