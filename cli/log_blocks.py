"""A log file read the way the log probe reads a pipe: whole lines, in blocks of bytes.

Old logs are often kept compressed: gzip, bzip2 and xz files are read as the text they hold,
told by their first bytes rather than their names.

A log saved from a collector has the collector's timestamp before each line the job printed:
`kubectl logs --timestamps` and `docker logs -t` write RFC 3339 times
(`2026-01-10T10:00:01.123456789Z [rank0]:step 5 ...`), and exports of other stores do the same,
some without a zone; the container runtime's own files on a Kubernetes node (CRI's format,
`/var/log/pods/...`) add the stream and a tag after it (`... stdout F [rank0]:step 5`).  Such a
file (`stamped`) is read without them (`unstamped`), so that the launcher's prefix and the
framework's lines begin their lines again; `ingest` takes each line's time from its stamp first.
(CRI cuts a line longer than 16 KiB into parts tagged `P` before the last, `F`: each part is
read as a line.)"""
from __future__ import annotations

import bz2
import errno
import io
import lzma
import re
import zlib
from typing import BinaryIO, Callable, Iterator

BLOCK = 65536
SCAN_HEAD = 64 << 20
"""How much of a file the scans read that must know something of it before it is parsed."""

_DECOMPRESSORS: tuple[tuple[bytes, Callable], ...] = (
    (b"\x1f\x8b", lambda: zlib.decompressobj(wbits=31)),     # gzip
    (b"BZh", bz2.BZ2Decompressor),
    (b"\xfd7zXZ\x00", lzma.LZMADecompressor))
_ZSTD = b"\x28\xb5\x2f\xfd"
CUT_SHORT = "the compressed file is cut short or damaged: read up to there"


class Decompressed(io.RawIOBase):
    """A compressed file's text.  Unlike gzip.open and the like, a file cut short (a log copied
    while it was being written) gives all its whole lines up to the cut, and says so
    (`cut_short`): the line the cut fell in is dropped, since a number cut in two would be
    read as another number.  Members one after the other (`cat a.gz b.gz`, appended
    rotations) are read as one file."""

    def __init__(self, raw: BinaryIO, new: Callable) -> None:
        self._raw, self._new = raw, new
        self._engine = new()
        self._fed = False           # has the member in progress been given any bytes?
        self._out = memoryview(b"")
        self._tail = b""            # the text after the last newline so far: held until the next
        self.cut_short = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        while not self._out:
            if self._engine.eof:
                rest = self._engine.unused_data
                self._engine, self._fed = self._new(), False
                if rest:
                    self._feed(rest)
                    continue
            data = b"" if self.cut_short else self._raw.read(BLOCK)
            if not data:
                self.cut_short = self.cut_short or (self._fed and not self._engine.eof)
                if self._tail and not self.cut_short:      # the file's last line, unended
                    self._out, self._tail = memoryview(self._tail), b""
                    continue
                return 0
            self._feed(data)
        n = min(len(buffer), len(self._out))
        buffer[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def _feed(self, data: bytes) -> None:
        self._fed = True
        try:
            text = self._tail + self._engine.decompress(data)
        except (zlib.error, OSError, EOFError, lzma.LZMAError):
            self.cut_short = True
            return
        cut = text.rfind(b"\n") + 1
        self._out, self._tail = memoryview(text)[:cut], text[cut:]

    def close(self) -> None:
        self._raw.close()
        super().close()


def open_log(path: str) -> BinaryIO:
    """The file's bytes, decompressed where it is a gzip, bzip2 or xz file.  Raises OSError
    for a compression this cannot read (zstd), as for a file that cannot be opened."""
    raw = open(path, "rb")
    try:
        magic = raw.read(6)
        raw.seek(0)
    except OSError:
        raw.close()
        raise
    for head, new in _DECOMPRESSORS:
        if magic.startswith(head):
            return io.BufferedReader(Decompressed(raw, new), BLOCK)  # type: ignore[return-value]
    if magic.startswith(_ZSTD):
        raw.close()
        raise OSError(errno.EINVAL, "a zstd file: decompress it first (zstd -d, or zstdcat FILE | "
                                    "ridgescope ... -)", path)
    return raw


def cut_short(stream: BinaryIO) -> bool:
    """Did the stream, a compressed file, end before its end marker?"""
    return getattr(getattr(stream, "raw", None), "cut_short", False)


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
    """The blocks of the file's first SCAN_HEAD bytes (decompressed, without a collector's
    timestamps)."""
    with open_log(path) as stream:
        stamps = None
        for _, block in zip(range(SCAN_HEAD // BLOCK), read_blocks(stream)):
            if stamps is None:
                stamps = stamped(block)
            yield unstamped(block) if stamps else block


COLLECTOR_STAMP = re.compile(rb"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9})?"
                             rb"(?:Z|[+-][0-9]{2}:?[0-9]{2})? (?:std(?:out|err) [FP] )?", re.M)
"""A collector's timestamp at a line's start: RFC 3339 (a `T` between date and time, which
Python's logging never prints), then one space; in CRI's files, the stream and tag after."""
_STAMP_HEAD = 256
"""How many of a log's first lines `stamped` looks at."""


def stamped(head: bytes) -> bool:
    """Do nine in ten of the lines of `head` (a log's first block) that hold anything begin with
    a collector's timestamp?  (A collector stamps every line; a job's own lines may begin with
    such a time now and then.)"""
    lines = [line for line in head.split(b"\n", _STAMP_HEAD)[:_STAMP_HEAD] if line.strip()]
    found = sum(1 for line in lines if COLLECTOR_STAMP.match(line))
    return bool(lines) and 10 * found >= 9 * len(lines)


def unstamped(data: bytes) -> bytes:
    """`data` without the collector's timestamp that begins each of its lines."""
    return COLLECTOR_STAMP.sub(b"", data)


def collector_stamps(path: str) -> bool:
    """Is the file a collector's (`stamped`), by its first block?  False for stdin (`-`), told
    from its first block as it is read."""
    if path == "-":
        return False
    with open_log(path) as stream:
        return stamped(next(read_blocks(stream), b""))
