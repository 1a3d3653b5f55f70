"""The job's output that goes to files instead of the pipes `ridgescope run` reads.

torchrun's `--redirects 3` sends each worker's stdout and stderr to files under its `--log-dir`
(a temporary directory where none is given), and a job script's `python train.py > train.log`
sends it to a file of its own: the pipes then carry nothing of the job's steps, and a run with the
hooks off saw nothing at all.  The files are found where Linux shows them, as fd 1 and 2 of the
job's processes in /proc, whatever their names, and each is read as it grows and parsed as a
pipe is (`logprobe.StreamPump`), its lines not echoed: the job chose not to show them.

What is not read twice: a file torchrun also copies to the console (`--tee`, save for the local
ranks `--local-ranks-filter` leaves out), whose lines the pipes already carry.  A file opened to
append to (`>> train.log`) is read from its size when it was found: what it held before belongs
to earlier runs.

A job's own log files, which its logger writes apart from its output (Detectron2's `log.txt.rankN`,
NeMo's `nemo_log_globalrank-N_localrank-M.txt`), are read where `ridgescope run --log-file GLOB`
names them (`NamedFiles`): often the only place where the ranks other than 0 say anything.  So
are the files that Open MPI's `mpirun --output-filename DIR` writes for each rank: mpirun writes
them itself, and they are no process's fd 1 or 2 (`mpirun_output_files`).
"""
from __future__ import annotations

import glob
import os
import re
import shlex
import stat
import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from ridgescope.probes.ranks import MPI_LAUNCHERS, flag_value, program, runs_torchrun

POLL_S = 0.05
"""How often a file that had nothing new is read again: a line is read at most this late."""
SCAN_S = 0.25
"""How often the job's processes are looked at for files that are new."""
OUTPUT_FDS = (1, 2)


@dataclass(frozen=True)
class Written:
    """One of a process's two output streams that goes to a regular file."""

    fd: int
    path: str
    ident: tuple[int, int]      # (device, inode): the same file under any name
    appends: bool
    size: int


def written_files(pid: int, proc_root: str = "/proc") -> list[Written]:
    """The regular files a process's stdout and stderr go to (none for pipes, terminals and
    /dev/null, nor for a process that is gone)."""
    out = []
    for fd in OUTPUT_FDS:
        link = f"{proc_root}/{pid}/fd/{fd}"
        try:
            st = os.stat(link)
            if not stat.S_ISREG(st.st_mode):
                continue
            path = os.readlink(link)
            with open(f"{proc_root}/{pid}/fdinfo/{fd}") as info:
                flags = next((int(line.split()[1], 8) for line in info if line.startswith("flags:")), 0)
        except (OSError, ValueError, IndexError):
            continue
        out.append(Written(fd, path, (st.st_dev, st.st_ino), bool(flags & os.O_APPEND), st.st_size))
    return out


def _std_spec(value: str | None, local_rank: int) -> int:
    """torchrun's `--tee`/`--redirects` value for one local rank: `3`, or `0:1,1:3` per rank
    (torch's `Std.from_str`); 0 where the value says nothing of it."""
    if not value:
        return 0
    if value.isdigit():
        return int(value)
    for item in value.split(","):
        rank, sep, std = item.partition(":")
        if sep and rank.strip() == str(local_rank) and std.strip().isdigit():
            return int(std)
    return 0


def _words(cmd: list[str]) -> list[str]:
    """The command line's words, a shell's `-c` string split too (`bash -c "torchrun --tee 3 ..."`)."""
    out: list[str] = []
    for arg in cmd:
        try:
            out += shlex.split(arg) if " " in arg else [arg]
        except ValueError:
            out.append(arg)
    return out


class TorchrunConsole:
    """Which of torchrun's worker files the console shows as well: with `--tee`, torchrun copies
    a worker's file to its own output, for the local ranks `--local-ranks-filter` names (all of
    them where it names none)."""

    def __init__(self, cmd: list[str], environ: dict[str, str]) -> None:
        cmd = _words(cmd)
        self.tee = (flag_value(cmd, "--tee", "-t") or environ.get("PET_TEE")) if runs_torchrun(cmd) else None
        shown = flag_value(cmd, "--local-ranks-filter", "--local_ranks_filter") or environ.get(
            "PET_LOCAL_RANKS_FILTER")
        self.shown = {int(r) for r in shown.split(",") if r.strip().isdigit()} if shown else None

    def shows(self, fd: int, local_rank: int | None) -> bool:
        if not self.tee or local_rank is None:
            return False
        if self.shown is not None and local_rank not in self.shown:
            return False
        return bool(_std_spec(self.tee, local_rank) & fd)


class FileCopy:
    """Copies what an open file gains into a pipe, from `start` on, until `stop` and the file's
    end; then closes both, which ends the pump that reads the pipe.  A file cut shorter than what
    was read (rotated, or written anew) is read again from its start (what was written less than
    POLL_S before the cut is lost)."""

    def __init__(self, fh, start: int, write_fd: int) -> None:
        self.fh, self.start_at, self.write_fd = fh, start, write_fd
        self.stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ridgescope-file", daemon=True)

    def start(self) -> "FileCopy":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()

    def join(self, timeout_s: float | None = None) -> None:
        self._thread.join(timeout_s)

    def _run(self) -> None:
        try:
            with self.fh as fh:
                fh.seek(self.start_at)
                while True:
                    stopping = self.stopping.is_set()   # read to the end once more after it is set
                    data = fh.read(65536)
                    if data:
                        view = memoryview(data)
                        while view:
                            view = view[os.write(self.write_fd, view):]
                    elif os.fstat(fh.fileno()).st_size < fh.tell():
                        fh.seek(0)
                    elif stopping:
                        break
                    else:
                        self.stopping.wait(POLL_S)
        except OSError:
            pass        # the file went away, or the pump did: what was read stays read
        finally:
            os.close(self.write_fd)


class Discard:
    """Where a file's bytes go instead of the console (a pump's `out`)."""

    def write(self, data) -> None:
        pass

    def flush(self) -> None:
        pass


class NamedFiles:
    """The files that globs name, now or once the job creates them, each with the rank that the
    first of `rank_in_paths` (regexes whose first group is the rank) to match reads in its path.
    A file that was there before the job started is read from the size it had then."""

    def __init__(self, patterns: list[str], rank_in_paths: Sequence[re.Pattern] = ()) -> None:
        self.patterns, self.rank_in_paths = patterns, rank_in_paths
        self.sizes_before = {}
        for path in self.paths():
            try:
                st = os.stat(path)
            except OSError:
                continue
            self.sizes_before[(st.st_dev, st.st_ino)] = st.st_size

    def paths(self) -> list[str]:
        return sorted({path for pattern in self.patterns for path in glob.glob(pattern, recursive=True)
                       if os.path.isfile(path)})

    def rank(self, path: str) -> int:
        for rank_in_path in self.rank_in_paths:
            m = rank_in_path.search(path)
            if m is not None:
                return int(m.group(1)) if m.group(1).isdigit() else -1
        return -1


MPIRUN_RANK_FILE = re.compile(r"(?:^|/)rank\.([0-9]+)/std(?:out|err)$")


MPIRUN_OUTPUT_OPTIONS = frozenset(("nocopy", "nojobid"))
"""What may follow `--output-filename DIR:`, comma-separated: no console copy; no job level."""


def mpirun_output_files(cmd: list[str]) -> list[str]:
    """The globs of the files Open MPI's `mpirun --output-filename DIR` writes each rank's output
    to, `DIR/<job>/rank.N/stdout` and `stderr` (`DIR/rank.N/...` with `DIR:nojobid`;
    MPIRUN_RANK_FILE reads N): mpirun writes them itself, so they are no rank's fd 1 or 2.  Its
    console copy (none with `DIR:nocopy`) has no rank where `--tag-output` is not given; these
    files do."""
    words = _words(cmd)
    if not any(program(word) in MPI_LAUNCHERS for word in words):
        return []
    where = flag_value(words, "--output-filename", "-output-filename")
    if not where:
        return []
    path, colon, suffix = where.rpartition(":")
    options = set(suffix.split(","))
    if not (colon and path and options <= MPIRUN_OUTPUT_OPTIONS):
        path, options = where, set()    # no options (a colon may be the path's own)
    levels = [] if "nojobid" in options else ["*"]
    return [os.path.join(glob.escape(path), *levels, "rank.*", name) for name in ("stdout", "stderr")]


@dataclass
class TailedFile:
    path: str
    copy: FileCopy
    pump: object


class OutputFiles:
    """Finds the files the job's processes write their output to (`processes()`: the job's
    processes, `{"pid", "rank", "local_rank"}` each) and reads each with a pump of its own, made
    by `make_pump(read_fd, stream, writer)`, where `writer` is the process's entry (a file of
    one worker is that worker's rank's) and `stream` the file's path: a rank's steps that
    also show on a pipe are timed from one of the two (`step_streams.py`), not from both."""

    def __init__(self, processes: Callable[[], list[dict]], make_pump: Callable[[int, str, dict], object],
                 console: TorchrunConsole, named: NamedFiles | None = None, proc_root: str = "/proc") -> None:
        self.processes, self.make_pump, self.console = processes, make_pump, console
        self.named, self.proc_root = named, proc_root
        self.files: dict[tuple[int, int], TailedFile | None] = {}
        """Every file seen, by identity: None where another stream shows its lines."""
        self.errors = 0
        """Files found that could not be opened, or given a pump."""
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ridgescope-files", daemon=True)

    def start(self) -> "OutputFiles":
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stopping.is_set():
            self.scan()
            self._stopping.wait(SCAN_S)

    def scan(self) -> None:
        """Start reading the files the job writes to that are new since the last scan."""
        try:
            procs = self.processes()
        except Exception:  # noqa: BLE001 - a scan that fails finds nothing; the job goes on
            self.errors += 1
            procs = []
        for proc in procs:
            if not proc.get("settled", True):
                continue    # forked, maybe not exec'd: its rank is not known yet (gpu.job_processes)
            for written in written_files(proc["pid"], self.proc_root):
                if written.ident in self.files:
                    continue
                if self.console.shows(written.fd, proc.get("local_rank")):
                    self.files[written.ident] = None
                    continue
                fh = self._open(proc["pid"], written)
                if fh is not None:
                    self.files[written.ident] = self._tail(
                        fh, written.size if written.appends else 0, written.path, proc)
        if self.named is not None:
            self._scan_named(self.named)

    def _scan_named(self, named: NamedFiles) -> None:
        for path in named.paths():
            try:
                fh = open(path, "rb", buffering=0)
            except OSError:
                continue
            st = os.fstat(fh.fileno())
            ident = (st.st_dev, st.st_ino)
            if ident in self.files:
                fh.close()
                continue
            self.files[ident] = self._tail(fh, named.sizes_before.get(ident, 0), path,
                                           {"rank": named.rank(path)})

    def _tail(self, fh, start: int, path: str, writer: dict) -> TailedFile | None:
        read_fd, write_fd = os.pipe()
        try:
            pump = self.make_pump(read_fd, path, writer)
        except Exception:  # noqa: BLE001
            for fd in (read_fd, write_fd):
                os.close(fd)
            fh.close()
            self.errors += 1
            return None
        return TailedFile(path, FileCopy(fh, start, write_fd).start(), pump)

    def _open(self, pid: int, written: Written):
        """The file, opened through the process's own descriptor (the same file, though it was
        renamed or removed since), or else by its name."""
        for source in (f"{self.proc_root}/{pid}/fd/{written.fd}", written.path):
            try:
                fh = open(source, "rb", buffering=0)
            except OSError:
                continue
            st = os.fstat(fh.fileno())
            if (st.st_dev, st.st_ino) == written.ident:
                return fh
            fh.close()
        self.errors += 1
        return None

    @property
    def tailed(self) -> list[TailedFile]:
        return [f for f in self.files.values() if f is not None]

    def stop(self, timeout_s: float = 10.0) -> None:
        """After the job ended: every file read to its end, and its pump's last records sent.
        (A process that lived less than SCAN_S may have written a file that was never found.)"""
        self._stopping.set()
        self._thread.join(timeout_s)
        deadline = time.monotonic() + timeout_s
        for tailed in self.tailed:
            tailed.copy.stop()
        for tailed in self.tailed:
            tailed.copy.join(max(0.0, deadline - time.monotonic()))
            tailed.pump.join(max(0.0, deadline - time.monotonic()))
