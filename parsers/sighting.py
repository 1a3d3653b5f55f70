"""Has a stream shown a launcher's mark?  Looked for so that a block of a stream that has none
costs no pass over its bytes.

A launcher marks every line it passes on (srun's label, torchrun's `--tee` prefix, mpirun's
tag, SkyPilot's, kubectl's or pdsh's prefix).  Looking for a mark in a whole block costs a pass
over its bytes, ~40 us a 64 KiB block on a 2 GHz core, where all of a block of chatter costs
~0.5 ms: a stream's blocks are looked at whole only while the stream is young (its first
YOUNG bytes: what a job prints before its launcher starts), and after that in their first and
last EDGE bytes, where a launcher's lines that begin or end inside a block show.  Once a
stream has shown a mark, its blocks are taken to hold it, and are read as they were before
this check: each reader then looks at the whole block itself."""
from __future__ import annotations

import re

EDGE = 4096
YOUNG = 1 << 20


class Sighting:
    """Whether one stream has shown `mark` (see the module's doc)."""

    def __init__(self, mark: str) -> None:
        self.text = mark
        self.bytes = mark.encode()
        self.shown = False

    def look(self, data: str | bytes, young: bool) -> bool:
        """Has the stream shown the mark, in `data` or before?"""
        if not self.shown:
            self.shown = self.glimpse(data, young)
        return self.shown

    def glimpse(self, data: str | bytes, young: bool) -> bool:
        """Does `data` show the mark, where a block is looked at?  Kept nowhere: for a mark that
        a stream need not show again once read (pdsh's hosts), or that says what to look for
        (torchx's first worker)."""
        return _shows(data, self.text if isinstance(data, str) else self.bytes, young)


def _shows(data, mark, young: bool) -> bool:
    if young or len(data) <= 2 * EDGE:
        return mark in data
    return data.find(mark, 0, EDGE) >= 0 or data.find(mark, len(data) - EDGE) >= 0


class PatternSighting:
    """Whether one stream has shown a mark that a pattern finds at a line's start (srun's label,
    `N: `), in a block of bytes.  A young stream's blocks are taken to show it, unlooked (a
    pattern's search over a whole block costs more than what it would save there)."""

    def __init__(self, pattern: bytes) -> None:
        self.pattern = re.compile(pattern, re.M)
        self.shown = False

    def look(self, data: bytes, young: bool) -> bool:
        if not self.shown and not young:
            search = self.pattern.search
            self.shown = search(data, 0, EDGE) is not None or search(data, max(0, len(data) - EDGE)) is not None
        return self.shown or young


class StreamAge:
    """How much of a stream its blocks have brought."""

    def __init__(self) -> None:
        self.read = 0

    def young(self, data: str | bytes) -> bool:
        """Is the stream young before `data` (counted now)?"""
        young = self.read < YOUNG
        self.read += len(data)
        return young
