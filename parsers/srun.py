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

With `-u`, srun passes each read on as it comes, and `print("step", n, "loss", x)` under
PYTHONUNBUFFERED=1 writes each argument and separator in a system call of its own: a read can
end after any of them (captured: `0: step` then `0:  6/16 loss 0.167 step_time_ms 50.2`, or
every write a line, `0: step`, `0:  `, `0: 1/16`, ..., and the newline alone, `0: `).  A
labelled line of one word (a print's first argument: `step`, `Epoch:`, `iter`, maybe with the
separator after it) is held; the label's next lines run on behind it while one of them begins
with a separator, or what is held ends with one (a print's writes alternate: argument,
separator, argument, ...), and an empty one ends it (the newline came alone).  Held so, a line
goes on when the label's next line does not continue it: a line cut after its first word
reaches the parsers one line of its task late.  A read that ends after a first argument with a
number in it (`print(f"step {n}", ...)`) is not told from a whole line: that line is lost.
"""
from __future__ import annotations

import re
from typing import Mapping

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
FIRST_WORD = re.compile(rb"[A-Za-z][A-Za-z_]{0,23}+[:=]?[ \t]?")
"""A print's first argument that a read may end after (see above): one word, no number, and
maybe the separator after it."""
_WORD_LINE = re.compile(rb"\n" + LABEL + FIRST_WORD.pattern + rb"(?:\n|\Z)")
"""A labelled line after the first of such a word alone (a pattern that begins with a newline
is searched for at C speed from newline to newline)."""
_FIRST_WORD_LINE = re.compile(LABEL + FIRST_WORD.pattern + rb"(?:\n|\Z)")
WRITES_MAX = 4096
"""The most bytes held as one task's line of writes; past it, what is held goes on as it is."""


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


def cut_after_word(data: bytes) -> bool:
    """Does a labelled line of `data`, a block that begins with srun's label, hold one word
    and nothing else: maybe a print's first argument, the start of a line that `srun -u` cut
    (see above)?  Blocks without the label cost one anchored match."""
    return labelled(data) and (_FIRST_WORD_LINE.match(data) is not None
                               or _WORD_LINE.search(data) is not None)


class SrunPieces:
    """The held pieces of the tasks' cut lines, for one stream."""

    def __init__(self) -> None:
        self.held: dict[bytes, bytes] = {}
        """label -> the text of its cut line so far"""
        self.writes: dict[bytes, bytes] = {}
        """label -> the writes of its line so far, where `srun -u` may have cut it (see above)"""

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
                self._write(label, text, out)
        if not out:
            return b""
        out.append(b"")
        return b"\n".join(out)

    def _write(self, label: bytes, text: bytes, out: list[bytes]) -> None:
        """One whole labelled line, where `srun -u` may have cut a line between two writes."""
        writes = self.writes
        line = writes.pop(label, None)
        if line is not None:
            if not text:                    # the newline, alone: the line of writes ends
                out.append(label + line)
                return
            if (text[:1] in b" \t" or line[-1:] in b" \t") and len(line) + len(text) <= WRITES_MAX:
                writes[label] = line + text
                return
            out.append(label + line)        # the line it held ended before this one
        if FIRST_WORD.fullmatch(text):
            writes[label] = text
        else:
            out.append(label + text)

    def drain(self) -> list[bytes]:
        """The held pieces and writes as lines of their own, for a stream that ended after them."""
        lines = [label + text for label, text in self.held.items()]
        lines += [label + text for label, text in self.writes.items()]
        self.held.clear()
        self.writes.clear()
        return lines


# `srun --label torchrun --tee 3 ...`: one torchrun per node, its workers' lines behind both the
# node's label and the worker's local rank (`1: [default0]:step ...`).
_NESTED = re.compile(rb"^" + LABEL + rb"\[default(?P<local>[0-9]{1,7})\]:", re.M)
_TEE = re.compile(rb"(?:(?<![0-9])([0-9]{1,7}): )?\[default([0-9]{1,7})\]:")
"""torchrun's prefix inside a labelled line; with a label of its own where another node's part
came behind the line's (torchx passes each replica's parts on as they come: `torchx.py`)."""
AGENT_MARK = b") local_rank: "
_AGENT_CHILD = re.compile(LABEL + rb"(?=[^\n]*?failed \(exitcode: -?[0-9]{1,4}\) local_rank: ([0-9]{1,7}) \(pid: )")
"""A node's torchrun agent telling of a worker that failed (the line `events.CHILD` reads), behind
the node's label: the line names the worker's local rank, not the job's."""


def nested(data: bytes) -> bool:
    """Does a line of `data` carry torchrun's `--tee` prefix behind srun's label?"""
    return b": [default" in data and _NESTED.search(data) is not None


def widest_node(data: bytes) -> int:
    """1 + the highest local rank behind a label in `data` (0 where there is none)."""
    return max((int(m.group("local")) + 1 for m in _NESTED.finditer(data)), default=0)


def flatten(data: bytes, nproc_per_node: int, nodes: Mapping[int, list[int]] | None = None) -> bytes:
    """`data` with each labelled line of a worker, `L: [defaultM]:...`, as `[defaultR]:...`,
    R = L x nproc_per_node + M; likewise each `[defaultM]:` inside such a line, where torchrun
    passed on a part of another worker of the node (see tee.py), and each `K: [defaultM]:`
    there, another node's (torchx's, read as srun's labels).  The rest of the stream's
    parsing then reads one prefix, as it does torchrun's alone.

    R is torch's rank where torchrun's node rank is srun's task id (a static rendezvous with
    `--node-rank $SLURM_PROCID`).  A c10d rendezvous numbers the nodes otherwise; where a node's
    agent logged the ranks it gave (`rendezvous.py`), `nodes` has them (task -> the job's rank
    of each local rank) and R is torch's number; where not, R is still one rank per worker.

    A node's agent's `L: ... failed (exitcode: 1) local_rank: M (pid: ...)` is read as worker
    R's line too, where the workers a node are known (`nproc_per_node` > 0): the label names
    the node, not the rank that failed."""
    agents = nproc_per_node > 0 and AGENT_MARK in data
    if not agents and not nested(data):
        return data
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        m = _NESTED.match(line)
        if m is not None:
            task = int(m.group("task"))
            lines[i] = _TEE.sub(lambda t: b"[default%d]:" % _job_rank(
                int(t.group(1) or task), int(t.group(2)), nproc_per_node, nodes), line[m.end("task") + 2:])
        elif agents and AGENT_MARK in line:
            a = _AGENT_CHILD.match(line)
            if a is not None:
                lines[i] = b"[default%d]:" % _job_rank(int(a.group("task")), int(a.group(2)), nproc_per_node, nodes) \
                    + line[a.end():]
    return b"\n".join(lines)


def _job_rank(task: int, local: int, nproc_per_node: int, nodes: Mapping[int, list[int]] | None) -> int:
    """The job's rank of node `task`'s local rank: as its agent's rendezvous gave it, where
    `nodes` has it, else task x nproc_per_node + local."""
    ranks = nodes.get(task) if nodes else None
    return ranks[local] if ranks is not None and local < len(ranks) else task * nproc_per_node + local

