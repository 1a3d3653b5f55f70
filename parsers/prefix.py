"""Launcher line prefixes (torchrun, srun --label, mpirun) -> rank."""
from __future__ import annotations

import regex

_PREFIX = regex.compile(
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
    m = _PREFIX.match(line, timeout=0.02)
    if not m:
        return None, line
    rank = int(m.group(1) or m.group(2) or m.group(3))
    rest = line[m.end():]
    while rest.startswith("[rank") or rest.startswith("[default"):
        m2 = _PREFIX.match(rest, timeout=0.02)
        if not m2 or not m2.group(1):
            break
        rest = rest[m2.end():]
    return rank, rest
