"""Interval arithmetic behind the lane model: pure functions over (start, end) pairs.

A step window is partitioned so that each instant is charged to exactly one lane, in the
priority order of ``PRIORITY``; whatever no lane covers is ``idle``.  The charges therefore sum
to the window, and work that overlaps other work is charged once.
"""
from __future__ import annotations

from typing import Iterable, Mapping

Interval = tuple[int, int]

PRIORITY = ("compute", "transfer", "communication", "checkpoint", "input")


def clip_and_merge(intervals: Iterable[Interval], lo: int, hi: int) -> list[Interval]:
    """Union of the intervals clipped to [lo, hi], as sorted disjoint pairs."""
    clipped = sorted((max(s, lo), min(e, hi)) for s, e in intervals if min(e, hi) > max(s, lo))
    merged: list[Interval] = []
    for start, end in clipped:
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def total(merged: Iterable[Interval]) -> int:
    """Length covered by disjoint intervals."""
    return sum(e - s for s, e in merged)


def subtract(merged: list[Interval], cut: list[Interval]) -> list[Interval]:
    """Parts of ``merged`` not covered by ``cut`` (both sorted and disjoint)."""
    out: list[Interval] = []
    j = 0
    for start, end in merged:
        cursor = start
        while j < len(cut) and cut[j][1] <= cursor:
            j += 1
        k = j
        while k < len(cut) and cut[k][0] < end:
            if cut[k][0] > cursor:
                out.append((cursor, cut[k][0]))
            cursor = max(cursor, cut[k][1])
            k += 1
        if cursor < end:
            out.append((cursor, end))
    return out


def partition(window: Interval, lanes: Mapping[str, Iterable[Interval]]) -> dict[str, int]:
    """Charge each instant of ``window`` to the highest-priority lane active then.

    Returns nanoseconds per lane of ``PRIORITY`` plus ``idle``; the values sum to the window.
    Lanes not in ``PRIORITY`` are rejected so that no time is silently lost.
    """
    unknown = set(lanes) - set(PRIORITY)
    if unknown:
        raise ValueError(f"unknown lanes: {sorted(unknown)}")
    lo, hi = window
    if hi < lo:
        raise ValueError(f"window ends before it starts: {window}")
    covered: list[Interval] = []
    charges: dict[str, int] = {}
    for lane in PRIORITY:
        mine = clip_and_merge(lanes.get(lane, ()), lo, hi)
        charges[lane] = total(subtract(mine, covered))
        covered = clip_and_merge(covered + mine, lo, hi)
    charges["idle"] = (hi - lo) - total(covered)
    return charges


def split_wait(exposed_comm_ns: int, arrival_ns: int, last_arrival_ns: int) -> tuple[int, int]:
    """Split a rank's exposed communication into (running, waiting for the last rank).

    A rank that arrived ``last_arrival_ns - arrival_ns`` before the last rank spent at most
    that long waiting; the rest of its exposed communication was the collective running.
    """
    wait = min(max(exposed_comm_ns, 0), max(last_arrival_ns - arrival_ns, 0))
    return exposed_comm_ns - wait, wait
