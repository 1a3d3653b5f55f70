"""A log file read the way the log probe reads a pipe: whole lines, in blocks of bytes.

Old logs are often kept compressed: gzip, bzip2 and xz files are read as the text they hold,
told by their first bytes rather than their names."""
from __future__ import annotations

import bz2
import errno
import io
import lzma
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
    """The blocks of the file's first SCAN_HEAD bytes (decompressed)."""
    with open_log(path) as stream:
        for _, block in zip(range(SCAN_HEAD // BLOCK), read_blocks(stream)):
            yield block
