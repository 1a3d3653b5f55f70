"""Errors that tell of another process's failure: how a rank learns that a peer died, hung or
lost its link.  When one rank of a job fails, every other rank fails after it with one of
these, and each node's torchrun reports its own first failure; the one error that is not a
victim's is the culprit's (`sql/queries/first_failure.sql`).

- gloo: `Connection closed by peer [10.0.0.2]:41654`, `Connection reset by peer`, a wait for a
  peer that timed out (`Timed out waiting 1800000ms for recv operation to complete`);
- NCCL: `remote process exited or there was a network error`, `ncclRemoteError`, the watchdog's
  `Watchdog caught collective operation timeout`, a communicator `was aborted`;
- the rendezvous store, whose host went away: `DistNetworkError`, `Broken pipe`, `Connection refused`.
"""
from __future__ import annotations

from .base import Pattern

MARKS = ("peer", "remote", "Timed out waiting", "Watchdog caught", "aborted", "DistNetworkError",
         "Broken pipe", "Connection refused")
"""Substrings one of which every victim's error holds (the cheap test before the pattern)."""
VICTIM = Pattern(
    r"Connection (?:closed|reset) by (?:remote )?peer|remote process exited|ncclRemoteError"
    r"|Timed out waiting \d++ms for (?:send|recv)|Watchdog caught collective operation timeout"
    r"|NCCL communicator was aborted|communicators? (?:was|were|has been) aborted"
    r"|DistNetworkError|Broken pipe|Connection refused")


def victim(text: str) -> bool:
    """Does the error say that another process failed first (this rank only saw it)?"""
    return any(mark in text for mark in MARKS) and VICTIM.search(text) is not None
