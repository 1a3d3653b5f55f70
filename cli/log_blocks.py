"""A log file read the way the log probe reads a pipe: whole lines, in blocks of bytes."""
from __future__ import annotations

from typing import BinaryIO, Iterator

BLOCK = 65536
SCAN_HEAD = 64 << 20
"""How much of a file the scans read that must know something of it before it is parsed."""


def read_blocks(stream: BinaryIO) -> Iterator[bytes]:
    """The stream's whole lines in blocks of about BLOCK bytes: `feed_chunk` takes a block at a
    time, several times faster than `feed` a line at a time, with the same records and counts."""
    pending = b""
    while True:
        chunk = stream.read(BLOCK)
        if not chunk:
            break
        pending += chunk
        cut = pending.rfind(b"\n") + 1
        if cut:
            yield pending[:cut]
            pending = pending[cut:]
    if pending:
        yield pending


def head_blocks(path: str) -> Iterator[bytes]:
    """The blocks of the file's first SCAN_HEAD bytes."""
    with open(path, "rb") as stream:
        for _, block in zip(range(SCAN_HEAD // BLOCK), read_blocks(stream)):
            yield block
