"""`srun --label`: a line longer than 1024 bytes, put back together.

srun passes a task's output on in pieces of at most 1024 bytes and, with `--label`, writes each
piece as a line of its own behind the task's label, with a newline it adds (Slurm 22.05: a
3,000-byte line comes as lines of 1024, 1024 and 952 bytes after the label, with `-u` or
without).  A progress bar in a pipe, one line for a whole epoch, NeMo's 1-2 KB lines and long
metric dicts all reach us cut so.

A labelled line of exactly 1024 bytes after its label is held for its label and goes in front
of the same label's next line.  A task's line that is a whole number of pieces long ends so
too: srun sends its newline as a piece of its own, an empty labelled line (captured: a
1024-byte line comes as `0: <1024 bytes>` and `0: `).
"""
from __future__ import annotations

import re

import numpy as np

PIECE = 1024
"""The most bytes srun writes behind a label as one line."""
LABEL = rb" {0,7}(?P<task>[0-9]{1,7}): "
"""srun's label, right-aligned to the widest task id (what `prefix._srun` reads)."""
_LABEL = re.compile(LABEL)
_LABEL_TEXT = re.compile(LABEL.decode())
_PIECE_LINE = re.compile(rb"\n" + LABEL + rb"[^\n]{%d}(?:\n|\Z)" % PIECE)
"""A labelled line after the first whose text is exactly one piece long.  Scanned for the
newline first, then each line once: linear, no time-out needed."""


def labelled(data: str | bytes) -> bool:
    """Does `data` begin with srun's label?"""
    return (_LABEL.match(data) if isinstance(data, bytes) else _LABEL_TEXT.match(data)) is not None


def cut_inside(data: bytes) -> bool:
    """Does `data` hold a labelled line of exactly one piece: the start of a longer line?
    Blocks with no line that long (most) are told apart first by one vectorised pass over
    their newlines (31 ns a line of chatter, where the regex alone took 78)."""
    if len(data) < PIECE + 3:
        return False
    bounds = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
    if bounds.size and int(np.diff(bounds, prepend=-1, append=len(data)).max()) <= PIECE + 3:
        return False
    m = _LABEL.match(data)
    if m is not None:
        nl = data.find(b"\n")
        if (len(data) if nl < 0 else nl) - m.end() == PIECE:
            return True
    return _PIECE_LINE.search(data) is not None


class SrunPieces:
    """The held pieces of the tasks' cut lines, for one stream."""

    def __init__(self) -> None:
        self.held: dict[bytes, bytes] = {}
        """label -> the text of its cut line so far"""

    def join(self, data: bytes) -> bytes:
        """`data` (whole lines; a last one without its newline counts as whole) with each cut
        line put back together behind its label; the first pieces of a line not ended yet are
        held, and are no line of the stream until it ends."""
        lines = data.split(b"\n")
        if not lines[-1]:
            lines.pop()
        out: list[bytes] = []
        held = self.held
        for line in lines:
            m = _LABEL.match(line)
            if m is None:
                out.append(line)
                continue
            label, piece = m.group(), line[m.end():]
            text = held.pop(label, b"") + piece
            if len(piece) == PIECE:
                held[label] = text
            else:
                out.append(label + text)
        if not out:
            return b""
        out.append(b"")
        return b"\n".join(out)

    def drain(self) -> list[bytes]:
        """The held pieces as lines of their own, for a stream that ended after them."""
        lines = [label + text for label, text in self.held.items()]
        self.held.clear()
        return lines


# `srun --label torchrun --tee 3 ...`: one torchrun per node, its workers' lines behind both the
# node's label and the worker's local rank (`1: [default0]:step ...`).
_NESTED = re.compile(rb"^" + LABEL + rb"\[default(?P<local>[0-9]{1,7})\]:", re.M)
_TEE = re.compile(rb"\[default([0-9]{1,7})\]:")


def nested(data: bytes) -> bool:
    """Does a line of `data` carry torchrun's `--tee` prefix behind srun's label?"""
    return b": [default" in data and _NESTED.search(data) is not None


def widest_node(data: bytes) -> int:
    """1 + the highest local rank behind a label in `data` (0 where there is none)."""
    return max((int(m.group("local")) + 1 for m in _NESTED.finditer(data)), default=0)


def flatten(data: bytes, nproc_per_node: int) -> bytes:
    """`data` with each labelled line of a worker, `L: [defaultM]:...`, as `[defaultR]:...`,
    R = L x nproc_per_node + M; likewise each `[defaultM]:` inside such a line, where torchrun
    passed on a part of another worker of the node (see tee.py).  The rest of the stream's
    parsing then reads one prefix, as it does torchrun's alone.

    R is torch's rank where torchrun's node rank is srun's task id (a static rendezvous with
    `--node-rank $SLURM_PROCID`, and what a c10d rendezvous on one node gave in the capture);
    a c10d rendezvous may number the nodes otherwise, and then R is still one rank per
    worker, not torch's number for it."""
    if not nested(data):
        return data
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        m = _NESTED.match(line)
        if m is not None:
            base = int(m.group("task")) * nproc_per_node
            lines[i] = _TEE.sub(lambda t: b"[default%d]:" % (base + int(t.group(1))),
                                line[m.end("task") + 2:])
    return b"\n".join(lines)

