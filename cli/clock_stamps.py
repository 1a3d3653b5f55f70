"""Stamps that print the time of day and no date: a logger's `datefmt="%H:%M:%S"` (prime-rl's
`02:40:52 SUCCESS Step 0 | ...`, `[12:34:56] ...`), PyTorch/XLA's `Time=20:52:27` at the end
of its training updates.

`ingest` places such a log in the days up to the first date it prints (a log whose logger
was set up after its first lines: a launcher's `%H:%M:%S` lines, then the trainer's dated
ones), or where it prints none, up to when its file was last written: the clock runs on from
line to line, a day later wherever it goes back by more than an hour (midnight passed), and
the clock-only stamps are then moved by whole days until the last falls on or before that
time.  The times between its lines are the log's own; with no date printed, its date is a
guess, as a yearless stamp's year is (`cmd_ingest.line_timestamp`).
"""
from __future__ import annotations

import re

CLOCK_ONLY = "its lines print the time of day and no date: dated back from when the file was last written"
CLOCK_BEFORE_DATE = "its first lines print the time of day and no date: dated back from the first date it prints"
DAY_NS = 86_400 * 1_000_000_000
_HOUR_NS = 3_600 * 1_000_000_000
# at a line's start, maybe in brackets; then a space, a `|` or the line's end
_AT_START = re.compile(r"\[?([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:[.,](\d{1,9}))?\]?(?=[ |]|$)")
_XLA = re.compile(r" Time=([01]\d|2[0-3]):([0-5]\d):([0-5]\d)\s*$")


def time_of_day(head: str) -> tuple[int, bool] | None:
    """(ns since midnight, sub-second precision) of a clock-only stamp at the line's start, or
    PyTorch/XLA's `Time=` at its end; None for any other line."""
    m = _AT_START.match(head)
    if m is None:
        m = _XLA.search(head) if "Time=" in head else None
        if m is None:
            return None
    hh, mi, ss = int(m.group(1)), int(m.group(2)), int(m.group(3))
    frac = m.group(4) if m.re is _AT_START else None
    ns = ((hh * 60 + mi) * 60 + ss) * 1_000_000_000 + (int(frac.ljust(9, "0")[:9]) if frac else 0)
    return ns, bool(frac)


class ClockDays:
    """The days of one file's clock-only stamps (see the module's doc)."""

    def __init__(self, written_ns: int) -> None:
        self.written_ns = written_ns
        self.midnight = written_ns // DAY_NS * DAY_NS   # of the day the file was written (UTC)
        self.days = 0
        self.last: int | None = None

    def place(self, of_day_ns: int) -> int:
        """The stamp's time, counted on from the file's clock-only stamps before it."""
        if self.last is not None and of_day_ns < self.last - _HOUR_NS:
            self.days += 1
        self.last = of_day_ns
        return self.midnight + self.days * DAY_NS + of_day_ns

    def shift_ns(self, until_ns: int | None = None) -> int:
        """What to add to every placed stamp so that the last falls on or before `until_ns` (the
        file's time by default), and less than a day before it: whole days, back or on."""
        if self.last is None:
            return 0
        until = self.written_ns if until_ns is None else until_ns
        over = self.midnight + self.days * DAY_NS + self.last - until
        return (-over // DAY_NS) * DAY_NS
