"""Which of a job's two pipes times each rank's steps.

A job may print its steps on both: a bar on stderr and its loop's prints on stdout (Ignite's
examples, a loop with tqdm and a `print` every N steps).  The log probe reads each pipe in a
thread of its own, so their records reach the pipeline in no fixed order: a print of step 70
read just before the bar's step 68 opens 70's window first, and 68's is then closed unseen.
The first pipe that gives a rank a step times that rank's steps; the other pipe's step records
are still stored, marked `timed_elsewhere`, and make no window.  A pipe whose records carry the
framework's own step time takes a rank over from one whose steps are timed only by when their
lines were read.  A record that says another pipe's bar times its step (`timed_by_bar`: HF's log
dicts on stdout, numbered from their epochs, its bar on stderr) never times the rank.
"""
from __future__ import annotations

import threading


def carries_step_time(record: dict) -> bool:
    """Does the record carry a step time of its own (not only the time its line was read)?"""
    ms = record.get("step_time_ms")
    return isinstance(ms, (int, float)) and not isinstance(ms, bool) and ms > 0


class StepStreams:
    """Shared by the pumps of one process's stdout and stderr (each calls `mark` from its thread)."""

    def __init__(self) -> None:
        self._owner: dict = {}
        """rank -> (the stream that times its steps, whether its records carry a step time)"""
        self._lock = threading.Lock()

    def mark(self, rank, payload: dict) -> dict:
        """The payload as published: marked `timed_elsewhere` where another stream times the
        rank's steps."""
        record = payload.get("record") or {}
        if record.get("kind") not in ("progress", "timing") or not isinstance(record.get("step"), int):
            return payload
        if record.get("timed_by_bar") is True:
            return dict(payload, timed_elsewhere=True)
        stream, timed = payload.get("stream", ""), carries_step_time(record)
        with self._lock:
            owner = self._owner.get(rank)
            if owner is None or owner[0] == stream:
                self._owner[rank] = (stream, timed or (owner is not None and owner[1]))
                return payload
            if timed and not owner[1]:
                self._owner[rank] = (stream, True)
                return payload
        return dict(payload, timed_elsewhere=True)
