"""Launcher line prefixes (torchrun, srun --label, mpirun) -> rank."""
from __future__ import annotations

from collections import deque

from .base import Pattern

_PREFIX = Pattern(
    r"(?:\[rank(\d{1,7}+)\]: ?+"                   # torch's logger; its excepthook adds a space
    r"|\[default(\d{1,7}+)\]:"                      # torchrun --tee / local-ranks-filter
    r"|\[(\d{1,7}+)\]:"                             # torchrun --log-line-prefix-template '[${rank}]:'
    r"|\[\d{1,7}+,(\d{1,7}+)\]<std(?:out|err)>:"    # mpirun --tag-output
    r"|[ ]{0,7}+(\d{1,7}+): )")                     # srun --label (right-aligned)
_STARTS = frozenset("[ 0123456789")


def split_rank_prefix(line: str) -> tuple[int | None, str]:
    """Strip the launcher's rank prefix; returns (rank, rest) or (None, line) when there is none.

    Nested prefixes (`[rank0]:[rank0]:...`, torch's own C++ logger re-prefixing) are stripped
    too.  Torch's `[rankN]:` inside srun's label names the rank: N is the job's rank, where the
    label (srun's, or SkyPilot's or pdsh's read as one) around one torchrun a node is the node's
    (`1: [rank11]:`).  Inside torchrun's `[defaultM]:` the local rank M stays, as on the node's
    other lines: the node's place numbers them all alike (`srun.flatten`, `--node-logs`).
    """
    if not line or line[0] not in _STARTS:
        return None, line
    rank, rest = _torchrun(line) if line[0] == "[" else _srun(line)
    if rank is None:
        # Anchored, and no part can take more than a few characters: no time-out needed.
        m = _PREFIX.match(line)
        if not m:
            return None, line
        rank = int(next(g for g in m.groups() if g is not None))
        rest = line[m.end():]
    while rest.startswith(("[rank", "[default")):
        inner, after = _torchrun(rest)
        if inner is None:
            break
        if rest[1] == "r" and line[0] != "[":
            rank = inner
        rest = after
    return rank, rest


def _torchrun(line: str) -> tuple[int | None, str]:
    """`[rankN]:`, `[defaultN]:` or `[N]:` without a regex (the common case).  torch.distributed's
    excepthook writes each line of an uncaught exception as `[rankN]: ` + the line, with a
    space that is not the line's: without it, `Traceback (most recent call last):` would not
    start its line."""
    start = 5 if line.startswith("[rank") else 8 if line.startswith("[default") else (
        1 if line[:1] == "[" and line[1:2].isdigit() else 0)
    if not start:
        return None, line
    end = line.find("]:", start, start + 9)
    digits = line[start:end]
    if end < 0 or not digits.isdigit() or not digits.isascii():
        return None, line
    if start == 5 and line[end + 2:end + 3] == " ":
        return int(digits), line[end + 3:]
    return int(digits), line[end + 2:]


def _srun(line: str) -> tuple[int | None, str]:
    """`  3: ` (srun --label, right-aligned: up to 7 spaces, up to 7 digits) without a regex; the
    regex decides whatever this declines."""
    body = line.lstrip(" ")
    colon = body.find(": ", 1, 9)
    digits = body[:colon]
    if colon < 0 or len(line) - len(body) > 7 or not digits.isdigit() or not digits.isascii():
        return None, line
    return int(digits), body[colon + 2:]


# Ray forwards each worker's output behind `(RayTrainWorker pid=75298)`, with `, ip=10.0.0.2` for
# workers on other nodes than the driver, and folds repeats into `... [repeated 7x across cluster]`.
# Which rank a worker is comes from Ray Train's own lines: the trainer lists its workers
# (`(TorchTrainer pid=71127) - (ip=10.216.70.82, pid=75298) world_rank=0, local_rank=0, ...`) and
# rank 0 says `Setting up process group for: env:// [rank=0, world_size=2]`.
RAY = Pattern(r"\(([\w.-]{1,100}+) pid=(\d{1,10}+)(?:, ip=([0-9a-fA-F.:]{1,64}+))?\) ")
RAY_WORKER = Pattern(r"- \((?:node_id=\w{1,128}+, )?ip=([0-9a-fA-F.:]{1,64}+), pid=(\d{1,10}+)\) world_rank=(\d{1,7}+)")
RAY_GROUP = Pattern(r"Setting up process group for: \S{1,200}+ \[rank=(\d{1,7}+), world_size=\d{1,7}+\]")
_RAY_REPEATED = Pattern(r" \[repeated \d{1,9}+x across cluster\]$")


class RayWorkers:
    """The ranks of a Ray job's workers, learnt from its output (one per stream).

    Ray Train 2.x (its "V2", the default since 2.51) sends what a worker prints to the worker's
    stdout and stderr files, and Ray forwards both: each line comes twice, a few lines apart.
    A worker's line that repeats one of its last REPEATS lines is such a copy, and is dropped."""

    REPEATS = 16

    def __init__(self) -> None:
        self.by_pid: dict[str, dict[str | None, int]] = {}   # pid -> {ip: rank}
        self.recent: dict[tuple[str, str | None], deque] = {}   # (pid, ip) -> its last lines

    def split(self, line: str) -> tuple[int | None, str] | None:
        """(rank, rest) of a line behind a Ray prefix (rank None while unknown); None for a line
        without one."""
        m = RAY.match(line)
        if m is None:
            return None
        rest = line[m.end():]
        if rest.endswith("across cluster]"):
            rest = _RAY_REPEATED.sub("", rest)
        pid, ip = m.group(2), m.group(3)
        recent = self.recent.get((pid, ip))
        if recent is None:
            if len(self.recent) >= 65536:
                self.recent.clear()
            recent = self.recent[(pid, ip)] = deque(maxlen=self.REPEATS)
        elif rest in recent:
            return self._rank(pid, ip), ""
        recent.append(rest)
        if "world_rank=" in rest:
            w = RAY_WORKER.search(rest)
            if w:
                self._learn(w.group(2), w.group(1), int(w.group(3)))
        elif "Setting up process group" in rest:
            g = RAY_GROUP.search(rest)
            if g:
                self._learn(pid, ip, int(g.group(1)))
        return self._rank(pid, ip), rest

    def _learn(self, pid: str, ip: str | None, rank: int) -> None:
        if len(self.by_pid) < 65536:
            self.by_pid.setdefault(pid, {})[ip] = rank

    def _rank(self, pid: str, ip: str | None) -> int | None:
        known = self.by_pid.get(pid)
        if not known:
            return None
        if ip in known:
            return known[ip]
        # the worker's prefix names no ip on the driver's node, the trainer's list always does
        return next(iter(known.values())) if ip is None and len(known) == 1 else None
