"""Launcher line prefixes (torchrun, srun --label, mpirun) -> rank."""
from __future__ import annotations

from .base import Pattern

_PREFIX = Pattern(
    r"(?:\[(?:rank|default)(\d{1,7}+)\]:"          # torchrun --tee / local-ranks-filter
    r"|\[\d{1,7}+,(\d{1,7}+)\]<std(?:out|err)>:"    # mpirun --tag-output
    r"|[ ]{0,7}+(\d{1,7}+): )")                     # srun --label (right-aligned)
_STARTS = frozenset("[ 0123456789")


def split_rank_prefix(line: str) -> tuple[int | None, str]:
    """Strip the launcher's rank prefix; returns (rank, rest) or (None, line) when there is none.

    Nested prefixes of the same launcher (`[rank0]:[rank0]:...`, torch's own C++ logger
    re-prefixing) are stripped too.
    """
    if not line or line[0] not in _STARTS:
        return None, line
    rank, rest = _torchrun(line) if line[0] == "[" else _srun(line)
    if rank is None:
        # Anchored, and no part can take more than a few characters: no time-out needed.
        m = _PREFIX.match(line)
        if not m:
            return None, line
        rank = int(m.group(1) or m.group(2) or m.group(3))
        rest = line[m.end():]
    while rest.startswith(("[rank", "[default")):
        inner, after = _torchrun(rest)
        if inner is None:
            break
        rest = after
    return rank, rest


def _torchrun(line: str) -> tuple[int | None, str]:
    """`[rankN]:` or `[defaultN]:` without a regex (the common case)."""
    start = 5 if line.startswith("[rank") else 8 if line.startswith("[default") else 0
    if not start:
        return None, line
    end = line.find("]:", start, start + 9)
    digits = line[start:end]
    if end < 0 or not digits.isdigit() or not digits.isascii():
        return None, line
    return int(digits), line[end + 2:]


def _srun(line: str) -> tuple[int | None, str]:
    """`  3: ` (srun --label, right-aligned: up to 7 spaces, up to 7 digits) without a regex; the
    regex decides whatever this does not take (a non-ASCII digit, say)."""
    body = line.lstrip(" ")
    colon = body.find(": ", 1, 9)
    digits = body[:colon]
    if colon < 0 or len(line) - len(body) > 7 or not digits.isdigit() or not digits.isascii():
        return None, line
    return int(digits), body[colon + 2:]
