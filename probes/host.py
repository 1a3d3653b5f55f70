"""Host probe: CPU time, I/O bytes and memory of the job's process tree, per rank, from /proc.

Each process belongs to the rank its environment names (`ranks.placement`: RANK, which DataLoader
workers inherit; the one `run` sets where srun or mpirun started it once per rank; an MPI
launcher's own); the launcher and helpers count as rank -1.  Returns [] on any error: the job comes first.
"""
from __future__ import annotations

import os
import threading
import time

import psutil

from ridgescope.probes import env
from ridgescope.probes.gpu import process_entry

if os.environ.get(env.PROCFS_ROOT):
    psutil.PROCFS_PATH = os.environ[env.PROCFS_ROOT]


def sample_tree(root_pid: int, proc_cache: dict[int, dict]) -> list[dict]:
    """One host_sample payload (plus ``rank``) per rank of the tree under ``root_pid``."""
    try:
        root = psutil.Process(root_pid)
        procs = [root] + root.children(recursive=True)
    except psutil.Error:
        return []
    per_rank: dict[int, dict] = {}
    for proc in procs:
        try:
            with proc.oneshot():
                cpu = proc.cpu_times()
                try:
                    io = proc.io_counters()
                    read_b, write_b = io.read_bytes, io.write_bytes
                except (psutil.Error, AttributeError):
                    read_b = write_b = 0
                rss = proc.memory_info().rss
        except psutil.Error:
            continue
        rank = process_entry(proc, proc_cache)["rank"]
        agg = per_rank.setdefault(rank, {"rank": rank, "pid": proc.pid, "cpu_s": 0.0,
                                         "read_bytes": 0, "write_bytes": 0, "rss_bytes": 0,
                                         "nprocs": 0})
        agg["cpu_s"] += cpu.user + cpu.system
        agg["read_bytes"] += read_b
        agg["write_bytes"] += write_b
        agg["rss_bytes"] += rss
        agg["nprocs"] += 1
    return list(per_rank.values())


class HostProbe:
    """Samples the tree every ``interval_s`` and hands each rank's sample to ``emit``."""

    def __init__(self, root_pid: int, emit, interval_s: float = 1.0):
        self.root_pid = root_pid
        self.emit = emit
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._cache: dict[int, dict] = {}
        self._thread = threading.Thread(target=self._run, name="ridgescope-host", daemon=True)

    def start(self) -> "HostProbe":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2.0)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            now = time.time_ns()
            for sample in sample_tree(self.root_pid, self._cache):
                self.emit(sample.pop("rank"), sample, now)
