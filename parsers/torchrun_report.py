"""torchrun's report of the processes that failed, printed under the `ChildFailedError` its agent
raises: which rank failed first (`Root Cause (first observed failure)`), on which host, when and
how, and the ranks that failed after it (`Failures`, mostly of it: a peer's watchdog, the SIGTERM
the agent sends the rest).  Where a rank raised or died, the first is the one that started it;
in a hang, the first to end is the first whose wait timed out: a victim, its culprit the rank it
waited for (`watchdog.py` says how far each got).

    torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
    ============================================================
    train.py FAILED
    ------------------------------------------------------------
    Failures:
    [1]:
      time      : 2026-11-29_22:21:32
      host      : localhost
      rank      : 0 (local_rank: 0)
      exitcode  : -15 (pid: 14145)  (SIGTERM)
      error_file: <N/A>
      traceback : Signal 15 (SIGTERM) received by PID 14145
    ------------------------------------------------------------
    Root Cause (first observed failure):
    [0]:
      time      : 2026-11-29_22:21:32
      host      : localhost
      rank      : 1 (local_rank: 1)
      exitcode  : 1 (pid: 14146)
      error_file: <N/A>
      traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
    ============================================================

`Failures:` holds `<NO_OTHER_FAILURES>` where the first was the only one.  Where the script's
entry point has torch's `@record`, the root cause's own traceback follows `traceback :`, each of
its lines indented by two spaces, its exception last.
"""
from __future__ import annotations

from .base import Pattern
from .launcher_errors import signal_name
from .victims import victim

FIELD = Pattern(r"  (time|host|rank|exitcode|error_file|traceback) *+: ?+(.{0,2000}+)")
RANK = Pattern(r"(\d++) \(local_rank: (\d++)\)")
EXITCODE = Pattern(r"(-?\d++) \(pid: (\d++)\)(?: *+\((SIG[A-Z0-9]{1,10}+)\))?+")


class TorchrunReport:
    """Reads the report's lines after the `ChildFailedError` line (the events parser hands them
    here, whatever they hold, up to LINES of them): each failure's fields, at the report's end."""

    LINES = 600

    def __init__(self) -> None:
        self.begin()

    def begin(self) -> None:
        self.lines = 0
        self.in_root = False
        self.entry: dict | None = None
        self.entries: list[dict] = []

    def read(self, line: str) -> list[dict] | None:
        """The failures (`root` True for the first), once the report ends; None before."""
        self.lines += 1
        if line.startswith("Root Cause"):
            self.in_root = True
            return None
        m = FIELD.match(line)
        if m is not None:
            if m.group(1) == "time":        # each failure's first field
                self.entry = {"root": self.in_root}
                self.entries.append(self.entry)
            if self.entry is not None:
                _field(self.entry, m.group(1), m.group(2).strip())
        elif self.entry is not None and line.startswith("  ") and line.strip():
            self.entry["exception"] = line.strip()[:2000]    # its own traceback's lines: the last one
        elif self.in_root and line.startswith("=====") and not line.strip("="):
            return self.failures()
        return None

    def belongs(self, line: str) -> bool:
        """Is this one of the report's lines (its rules, title, entries and their tracebacks)?
        Another ends a report cut short."""
        return (self.lines < 2 or not line.strip() or line[0] in " =-[" or line.startswith("Failures:")
                or line.startswith("Root Cause"))

    def failures(self) -> list[dict]:
        return [e for e in self.entries if "rank" in e]


def _field(entry: dict, key: str, value: str) -> None:
    if key == "rank":
        m = RANK.match(value)
        if m is not None:
            entry.update(rank=int(m.group(1)), local_rank=int(m.group(2)))
    elif key == "exitcode":
        m = EXITCODE.match(value)
        if m is not None:
            code = int(m.group(1))
            entry.update(exitcode=code, pid=int(m.group(2)),
                         signal=m.group(3) or (signal_name(-code) if code < 0 else None))
    elif key in ("time", "host", "error_file") and value != "<N/A>":
        entry["at" if key == "time" else key] = value[:500]


def first_failure(entries: list[dict]) -> dict | None:
    """The error record's fields of the rank that failed first (its `rank` among them), with the
    ranks that failed; None where the report named none."""
    root = next((dict(e) for e in entries if e["root"]), None)
    if root is None:
        return None
    del root["root"]
    if victim(root.get("exception") or ""):
        root["victim"] = True
    how = f"signal {root['signal']}" if root.get("signal") else f"exit code {root.get('exitcode')}"
    failed = sorted({e["rank"] for e in entries})
    return {"error": "child_failed", "launcher": "torchrun", "first": True, **root, "failed_ranks": failed,
            "message": f"torchrun: rank {root['rank']} failed first ({how}) on {root.get('host')}; "
                       f"{len(failed)} rank(s) failed"}
