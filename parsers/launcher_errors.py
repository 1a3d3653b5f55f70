"""What the launchers and the scheduler say when a job's processes die: often the only word of
which task, node or rank went first, where the process itself printed nothing.

- Slurm's srun, for each task that ended badly: `srun: error: gpu-node-12: task 3: Exited with
  exit code 1`, `srun: error: gpu-node-13: tasks 4-7: Killed` (the tasks of a node, as ranges).
  A task is srun's (`SLURM_PROCID`): the job's rank where srun starts the training processes
  itself, a node's launcher where srun starts torchrun, so it is told as `tasks`, not as a rank.
  srun tells the ends as it sees them: the events parser marks the stream's first `first`
  (`sql/queries/first_failure.sql` reads its task as the rank where no torchrun reported).
- srun, for a node that failed under the job (went down, or stopped answering): `srun: error:
  Node failure on gpu-node-12`, once for each of the node's tasks.
- Slurm's step daemon: `slurmstepd: error: *** STEP 12345.0 ON gpu-node-12 CANCELLED AT
  2026-01-10T10:00:01 DUE TO TIME LIMIT ***` (or `*** JOB 12345 ...`, a reason or none, or `DUE TO
  NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS`, where `slurmstepd-HOST:` may say which), and the
  cgroup's out-of-memory kills, `slurmstepd: error: Detected 1 oom_kill event in StepId=12345.0.
  Some of the step tasks have been OOM Killed.` (`oom-kill event(s) in step 12345.0 cgroup` in
  older releases): the host's memory, not the GPU's.
- Open MPI's mpirun: `mpirun noticed that process rank 5 with PID 4242 on node gpu-node-14 exited
  on signal 9 (Killed).`, an MPI rank, the job's; for an exit code, a report over several lines
  (`MpirunReport`): `mpirun detected that one or more processes exited with non-zero status, thus
  causing`, `the job to be terminated. The first process to do so was:`, ``, `  Process name:
  [[24292,1],1]` (the job's id, then the rank), `  Exit code:    3`.  Open MPI 5's (PRRTE's
  `prterun`) says the same in its own words: `Process name: [prterun-gpu-node-1-4242@1,1]` (its
  namespace, the job, the rank), and its notice of a signal wrapped before `signal 9 (Killed).`,
  which the line after gives.
- MPICH's and Intel MPI's mpiexec (Hydra), for a process that died, a box of `=` lines
  (`HydraReport`): `BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES`, then `RANK 6 PID
  2447372 RUNNING AT node0009` (MPICH 4.0 names no rank: `PID 15644 RUNNING AT vm`), then
  `KILLED BY SIGNAL: 9 (Killed)` or `EXIT CODE: 9`; one box a process, the first the first to die.
"""
from __future__ import annotations

import signal

from .base import Pattern

_STEP_ID = r"(\d++(?:\.(?:\d++|[a-z]{1,20}+))?+)"
"""A job's id, or its step's (`12345.0`, `12345.batch`)."""
SRUN_TASKS = Pattern(r"srun: error: ([\w.-]{1,200}+): tasks? ([\d,-]{1,400}+): (?:Exited with exit code (\d++)"
                     r"|([A-Z][a-z]{1,20}+(?: [a-z]{1,20}+)?+))")
STEP_CANCELLED = Pattern(r"\*\*\* (?:STEP|JOB) " + _STEP_ID + r" ON ([\w.-]{1,200}+) CANCELLED AT (\S{1,40}+)"
                         r"(?: DUE TO ([A-Z]{1,20}+(?: [A-Z]{1,20}+){0,4}+))?+"
                         r"(?:, SEE SLURMCTLD LOG FOR DETAILS)?+ \*\*\*")
NODE_FAILURE = Pattern(r"srun: error: Node failure on ([\w.-]{1,200}+)")
HOST_OOM = Pattern(r"Detected (\d++) oom[-_]kill event(?:s|\(s\))?+ (?:in StepId=|in step )" + _STEP_ID)
MPI_PROCESS = Pattern(r"Process name: \[(?:\[\d++,\d++\]|[\w.-]{1,255}+@\d++),(\d++)\]")
MPI_EXIT_CODE = Pattern(r"Exit code: *+(-?\d++)")
MPI_SIGNAL = Pattern(r"noticed that process rank (\d++) with PID (\d++) on node ([\w.-]{1,200}+) exited on"
                     r"(?: signal (\d++))?+")
SIGNAL_AFTER_WRAP = Pattern(r"\s*+signal (\d++)")
HYDRA_PROCESS = Pattern(r"(?:RANK (\d++) )?+PID (\d++) RUNNING AT ([\w.-]{1,200}+)")
HYDRA_END = Pattern(r"KILLED BY SIGNAL: (\d++)|EXIT CODE: (-?\d++)")

SIGNAL_WORDS = {"Killed": "SIGKILL", "Terminated": "SIGTERM", "Segmentation fault": "SIGSEGV",
                "Aborted": "SIGABRT", "Bus error": "SIGBUS", "Floating point exception": "SIGFPE",
                "Illegal instruction": "SIGILL"}
"""The C library's words for the signal that ended a process (srun's, the shell's, faulthandler's)."""


def signal_name(number: int) -> str | None:
    """`SIGSEGV` for 11 (a signal's number, or a negative exit code's)."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return None


MAX_TASKS = 4096


def _tasks(ranges: str) -> list[int]:
    """`4-7` or `0,2-3` -> the task ids, at most MAX_TASKS of them."""
    out: list[int] = []
    for part in ranges.split(","):
        first, _, last = part.partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            continue
        out.extend(range(int(first), min(int(last or first), int(first) + MAX_TASKS) + 1))
        if len(out) >= MAX_TASKS:
            break
    return out[:MAX_TASKS]


def read(line: str) -> dict | None:
    """The error record's fields of a launcher's or the scheduler's line about processes that
    died; None for another line.  `rank`, where there is one, is whose it is (None: the job's,
    whatever stream the line came on); without it, the line's own rank stands."""
    if "srun: error: " in line:
        m = SRUN_TASKS.search(line)
        if m:
            code = m.group(3)
            return {"error": "child_failed", "launcher": "srun", "host": m.group(1), "tasks": _tasks(m.group(2)),
                    "exitcode": int(code) if code else None, "signal": None if code else SIGNAL_WORDS.get(m.group(4))}
        m = NODE_FAILURE.search(line)
        if m:
            return {"error": "node_failure", "rank": None, "launcher": "srun", "host": m.group(1)}
    if "CANCELLED AT" in line:
        m = STEP_CANCELLED.search(line)
        if m:
            return {"error": "cancelled", "rank": None, "launcher": "slurm", "slurm_step": m.group(1),
                    "host": m.group(2), "at": m.group(3), "reason": m.group(4).lower() if m.group(4) else None}
    if "oom" in line:
        m = HOST_OOM.search(line)
        if m:
            return {"error": "host_oom", "rank": None, "launcher": "slurm", "kills": int(m.group(1)),
                    "slurm_step": m.group(2)}
    if "noticed that process rank" in line:
        m = MPI_SIGNAL.search(line)
        if m:
            fields = {"error": "child_failed", "rank": int(m.group(1)), "launcher": "mpirun", "pid": int(m.group(2)),
                      "host": m.group(3), "signal": _signal(m.group(4))}
            if m.group(4) is None:
                fields["wrapped"] = True    # its signal on the next line (`MpirunReport.begin`)
            return fields
    return None


def _signal(number: str | None) -> str | None:
    return None if number is None else signal_name(int(number)) or f"signal {number}"


class MpirunReport:
    """mpirun's report of the first process that exited with an error, read over its lines,
    which hold none of the words the pre-check looks for: the events parser hands this the
    lines after the report's first (`REPORT`), up to REPORT_LINES of them; or the line after
    a notice of a signal that Open MPI 5 wrapped (`wrapped`: the notice's fields)."""

    REPORT = "exited with non-zero status"
    REPORT_LINES = 8

    def __init__(self) -> None:
        self.rank: int | None = None
        self.lines = 0
        self.wrapped: dict | None = None
        self.passed = False
        """Was the last line read no part of the report (to be read as any other)?"""

    def begin(self, wrapped: dict | None = None) -> None:
        self.rank, self.lines, self.wrapped = None, 0, wrapped

    def read(self, line: str) -> dict | None:
        """The record's fields (`read`'s) once the report's exit code is read; None before."""
        self.lines += 1
        self.passed = False
        if self.wrapped is not None:
            fields, self.wrapped = self.wrapped, None
            m = SIGNAL_AFTER_WRAP.match(line)
            if m is not None:
                fields.update(signal=_signal(m.group(1)), message=f"{fields['message']} {line.strip()}"[:500])
            else:
                self.passed = True      # another line: the notice ends without its signal
            return fields
        if "Process name: [" in line:
            m = MPI_PROCESS.search(line)
            self.rank = int(m.group(1)) if m else None
            return None
        m = MPI_EXIT_CODE.search(line) if "Exit code:" in line else None
        if m is None:
            return None
        return {"error": "child_failed", "rank": self.rank, "launcher": "mpirun", "exitcode": int(m.group(1)),
                "first": True, "message": f"mpirun: the first process to exit with an error: rank {self.rank}, "
                                          f"exit code {m.group(1)}"}


class HydraReport:
    """MPICH's and Intel MPI's mpiexec on a process that died (see the module's doc), read over
    its lines, which hold none of the words the pre-check looks for after the first (`REPORT`):
    the events parser hands this the next ones, up to REPORT_LINES of them."""

    REPORT = "BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES"
    REPORT_LINES = 4

    def __init__(self) -> None:
        self.fields: dict = {}
        self.lines = 0
        self.told_first = False
        self.passed = False
        """Was the last line read no line of the box (which ends it, and is read as any other)?"""

    def begin(self) -> None:
        self.fields, self.lines = {}, 0

    def read(self, line: str) -> dict | None:
        """The record's fields once the box says how the process ended; None before."""
        self.lines += 1
        self.passed = not line.startswith("=")
        if self.passed:
            return None
        if "RUNNING AT" in line:
            m = HYDRA_PROCESS.search(line)
            if m is not None:
                self.fields = {"rank": int(m.group(1)) if m.group(1) else None, "pid": int(m.group(2)),
                               "host": m.group(3)}
            return None
        m = HYDRA_END.search(line) if "SIGNAL" in line or "EXIT CODE" in line else None
        if m is None or not self.fields:
            return None
        fields = dict(self.fields, error="child_failed", launcher="mpiexec")
        how = f"killed by signal {m.group(1)}" if m.group(1) else f"exit code {m.group(2)}"
        if m.group(1):
            fields["signal"] = _signal(m.group(1))
        else:
            fields["exitcode"] = int(m.group(2))
        if not self.told_first:
            fields["first"] = self.told_first = True
        rank = fields["rank"]
        fields["message"] = (f"mpiexec: {'rank %d' % rank if rank is not None else 'a process'} "
                             f"(pid {fields['pid']} on {fields['host']}) ended, {how}")
        return fields
