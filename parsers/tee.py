"""torchrun `--tee`: a rank's line that reached the launcher in two writes, put back together.

The launcher's tail thread reads each rank's log file a line at a time and writes what it read
behind the rank's `[defaultN]:`; at the end of the file it writes a line's first part alone,
and the rest later, behind the prefix again.  `print` under PYTHONUNBUFFERED=1 writes a line's
text and its newline in two system calls, so a busy machine shows, now and then:

    [default0]:step 2/4 loss 2.300 step_time_ms 300.0[default1]:step 2/4 loss 2.301 ...
    [default0]:

The tail reads in text mode, which turns a progress bar's every `\r` into a newline: each
redraw is a line, whose text is passed on when it is drawn and whose newline comes with the
rank's next redraw.  Bars of several ranks at once interleave so on every step.

A part before another prefix is held for its rank, and given back in front of the rank's next
part.  Parts without a prefix (the launcher's own messages) are held as rank None.
"""
from __future__ import annotations

import re

from .base import MAX_LINE

_PREFIX = re.compile(rb"\[default([0-9]{1,7})\]:")


def split_inside(data: bytes) -> bool:
    """Does a `[defaultN]:` begin anywhere but at the start of a line?  Two counts, each one
    scan at C speed: the check costs little on a block with no such prefix."""
    found = data.count(b"[default")
    return found > 0 and found > data.count(b"\n[default") + data.startswith(b"[default")


class TeeParts:
    """The held first parts of the ranks' unfinished lines, for one stream."""

    def __init__(self) -> None:
        self.held: dict[int | None, bytes] = {}
        """rank (None: no prefix) -> the text of its unfinished line"""

    def join(self, data: bytes) -> tuple[bytes, int]:
        """`data` (whole lines; a last one without its newline counts as whole) as whole lines
        of one rank each, each behind its rank's prefix; the parts that end before another
        prefix are held.  A held part longer than MAX_LINE is given as a line of its own, up
        to its last `\r`: the count of those comes second, lines that the stream did not
        end."""
        lines = data.split(b"\n")
        if not lines[-1]:
            lines.pop()
        out: list[bytes] = []
        extra = 0
        held = self.held
        for line in lines:
            parts = _parts(line)
            for rank, text in parts[:-1]:
                text = held.pop(rank, b"") + text
                if len(text) > MAX_LINE:
                    # a bar behind a prefix on every redraw, `\r` kept, draws a whole epoch on
                    # one line: its whole redraws go on as a line, the last may not be whole yet
                    cut = text.rfind(b"\r")
                    cut = cut if cut > 0 else len(text)
                    out.append(_prefixed(rank, text[:cut]))
                    extra += 1
                    text = text[cut:]
                if text:
                    held[rank] = text
            rank, text = parts[-1]
            out.append(_prefixed(rank, held.pop(rank, b"") + text))
        if not out:
            return b"", extra
        out.append(b"")
        return b"\n".join(out), extra

    def drain(self) -> list[bytes]:
        """The held parts as lines of their own, for a stream that ended in the middle of them."""
        lines = [_prefixed(rank, text) for rank, text in self.held.items()]
        self.held.clear()
        return lines


def _parts(line: bytes) -> list[tuple[int | None, bytes]]:
    """(rank, text) of each prefixed part of one physical line, in order; the text before the
    first prefix, if any, as rank None."""
    parts: list[tuple[int | None, bytes]] = []
    start = 0
    rank: int | None = None
    for m in _PREFIX.finditer(line):
        if m.start() > 0 or rank is not None:
            parts.append((rank, line[start:m.start()]))
        start, rank = m.end(), int(m.group(1))
    parts.append((rank, line[start:]))
    return parts


def _prefixed(rank: int | None, text: bytes) -> bytes:
    return text if rank is None else b"[default%d]:%b" % (rank, text)
