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
(CRI cuts a line longer than 16 KiB into parts tagged `P` before the last, `F`: they are joined
again.)  Other collectors keep JSON lines, each holding the job's line under a key of
its own (`JSON_TEXT`) and its time under another: such a file is read as those lines."""
from __future__ import annotations

import bz2
import errno
import io
import json
import lzma
import re
import zlib
from typing import BinaryIO, Callable, Iterator

from ridgescope.parsers import kubectl

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
    """The blocks of the file's first SCAN_HEAD bytes (decompressed, and the job's own lines
    where a collector wrapped them: `Collected`)."""
    with open_log(path) as stream:
        collected: Collected | None = None
        for i, block in zip(range(SCAN_HEAD // BLOCK), read_blocks(stream)):
            if i == 0:
                collected = collector_format(block)
            yield collected.block(block) if collected is not None else block


_STAMP = rb"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9})?(?:Z|[+-][0-9]{2}:?[0-9]{2})? "
_STERN = rb"(?:(?:\x1b\[[0-9;]{1,8}m)?[a-z0-9][a-z0-9.-]{0,252}(?:\x1b\[0m)? ){2,3}"
_POD = b"^(" + kubectl.PREFIX.encode() + b"|" + _STERN + b")?"
"""`kubectl logs --prefix --timestamps` puts the pod's prefix before the stamp, and `stern
--timestamps` its `[NAMESPACE ]POD CONTAINER `: it stays, for the parsers to read the pod's node
from (`parsers/kubectl.py`, `parsers/stern.py`)."""
STERN_SHORT = rb"^(" + _STERN + rb")([01][0-9])-([0-3][0-9]) ([0-2][0-9]):([0-5][0-9]):([0-5][0-9]) "
"""`stern --timestamps=short`'s stamp behind its prefix: month, day and time, no year or zone
(`01-10 10:00:03 `); alone, a line's own text could begin so.  (Its groups: the prefix, then
the stamp's numbers, which `ingest` dates.)"""
COLLECTOR_STAMP = re.compile(_POD + _STAMP[1:] + rb"(?:std(?:out|err) [FP] )?|" + STERN_SHORT, re.M)
"""A collector's timestamp at a line's start (or behind kubectl's pod prefix): RFC 3339 (a `T`
between date and time, which Python's logging never prints), then one space; in CRI's files,
the stream and tag after."""
_WHOLE_STAMP = re.compile(_POD + _STAMP[1:] + rb"(?!std(?:out|err) P )(?:std(?:out|err) F )?|" + STERN_SHORT,
                          re.M)
"""The stamp of a line that ends where its entry does (all but CRI's `P` parts)."""
_PART = re.compile(_STAMP + rb"std(?:out|err) P ([^\n]*+)\n", re.M)
"""A CRI part with its stamp and its newline: its text runs on into the next entry's."""
_PART_START = re.compile(_STAMP + rb"std(?:out|err) P ", re.M)
_HEAD_LINES = 256
"""How many of a log's first lines the tests of its format look at."""
JSON_TEXT = ("log", "message", "msg", "line", "textPayload")
"""The keys under which a collector's JSON lines hold the job's line: Docker's json-file
driver (`log`, with its newline), python-json-logger's and most stores' exports (`message`,
`msg`), Loki's `logcli --output=jsonl` (`line`), Google Cloud Logging's (`textPayload`).  (A
stream that a logger's JSON lines make up only in part is read line by line by the parsers,
`parsers/structured.py`; here, the collector's time of each line is kept for `ingest`.)"""
JSON_TIME = ("time", "timestamp", "@timestamp", "ts")
_POD_HOLDERS = (None, "labels", "kubernetes", "resource")
"""Where a collector's JSON line names the pod and container of its line: stern's `-o json` and
`extjson` at the top (`podName`, `containerName`), Loki's labels (`pod`, `container`), Fluent
Bit's and Fluentd's `kubernetes` metadata and Google Cloud Logging's `resource.labels`
(`pod_name`, `container_name`)."""
_POD_PREFIX = re.compile(kubectl.PREFIX)


def pod_prefix(obj: dict) -> str:
    """kubectl's prefix of the pod and container that a collector's JSON line names (see
    `_POD_HOLDERS`), which the parsers read the pod's node from (`parsers/kubectl.py`); "" where
    it names none."""
    for holder in _POD_HOLDERS:
        names = obj if holder is None else obj.get(holder)
        if holder == "resource" and isinstance(names, dict):
            names = names.get("labels")
        if not isinstance(names, dict):
            continue
        pod = names.get("podName") or names.get("pod") or names.get("pod_name")
        container = names.get("containerName") or names.get("container") or names.get("container_name")
        if isinstance(pod, str) and isinstance(container, str):
            prefix = f"[pod/{pod}/{container}] "
            return prefix if _POD_PREFIX.fullmatch(prefix) else ""
    return ""


_WRAPPER_CLOCK = re.compile(
    rb"^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9})?(?:Z|[+-][0-9]{2}:?[0-9]{2})?"
    rb"|(?:(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ 0-3][0-9] )?[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.][0-9]{1,9})?) ",
    re.M)
"""A clock that a wrapper put before each line, then one space: `ts` (moreutils) in its default
format (`Dec 03 02:09:56`) or another (`ts '%Y-%m-%d %H:%M:%.S'`, `ts '%H:%M:%.S'`, the time since
it started with `ts -s`)."""
_LOGGER_REST = re.compile(rb"[|:-]|\[?(?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\b")
"""What follows the clock of a job's own logger: its separator or the record's level (fairseq's
`| INFO |`, PaddleSeg's `[INFO]`, `logging`'s `- name -`)."""


def _head_lines(head: bytes) -> list[bytes]:
    return [line for line in head.split(b"\n", _HEAD_LINES)[:_HEAD_LINES] if line.strip()]


def stamped(head: bytes) -> bool:
    """Do nine in ten of the lines of `head` (a log's first block) that hold anything begin with
    a collector's timestamp?  (A collector stamps every line; a job's own lines may begin with
    such a time now and then.)"""
    lines = _head_lines(head)
    found = sum(1 for line in lines if COLLECTOR_STAMP.match(line))
    return bool(lines) and 10 * found >= 9 * len(lines)


def unstamped(data: bytes) -> bytes:
    """`data` without the collector's timestamp that begins each of its lines, CRI's parts of a
    line joined (the last may end `data` unended, to go on in what follows)."""
    data = _WHOLE_STAMP.sub(rb"\1\2", data)
    return _PART.sub(rb"\1", data) if b" P " in data else data


def clocked(head: bytes) -> bool:
    """Do nine in ten of the lines of `head` that hold anything begin with a wrapper's clock
    (`_WRAPPER_CLOCK`)?  Not where most go on as a logger's records do: a job whose logger
    stamps each line (fairseq, YOLOX) keeps its lines as they are."""
    lines = _head_lines(head)
    rests = [line[m.end():] for line in lines for m in (_WRAPPER_CLOCK.match(line),) if m]
    logged = sum(1 for rest in rests if _LOGGER_REST.match(rest))
    return bool(lines) and 10 * len(rests) >= 9 * len(lines) and 2 * logged < len(rests)


def _json_object(line: bytes) -> dict | None:
    if not line.startswith(b"{"):
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def json_text_key(head: bytes) -> str | None:
    """The key of JSON_TEXT under which nine in ten of the lines of `head` that hold anything
    are JSON objects with a string, if one is: a collector's JSON lines.  (A job that prints
    its metrics as JSON, `{"step": 5, "loss": 2.0}`, has none of these keys.)"""
    lines = _head_lines(head)
    objects = [_json_object(line) for line in lines]
    for key in JSON_TEXT:
        found = sum(1 for obj in objects if obj is not None and isinstance(obj.get(key), str))
        if lines and 10 * found >= 9 * len(lines):
            return key
    return None


class Collected:
    """The job's own lines of a log that a collector wrapped: behind a timestamp each (`key`
    None), or as JSON lines that hold each under `key`.  A line longer than 16 KiB is cut into
    entries: Docker's `log` keeps the newline of the last alone, CRI tags the others `P`.  They
    are joined again, across blocks too; a line whose last entry never came (a file copied as it
    was written) is dropped, as a compressed file's line that its cut fell in is."""

    def __init__(self, key: str | None) -> None:
        self.key = key
        self._part = ""
        self._unended = b""

    @property
    def says(self) -> str:
        return ("its lines begin with a log collector's timestamps (kubectl logs --timestamps, stern --timestamps, "
                "docker logs -t): read without them") if self.key is None else (
                f"its lines are a log collector's JSON: read as the text under {self.key!r}")

    def block(self, data: bytes) -> bytes:
        """The job's whole lines of a block of whole lines."""
        if self.key is None:
            text = self._unended + unstamped(data)
            cut = text.rfind(b"\n") + 1
            # a CRI part last: its line goes on in the next block (a file's last line, unended, does not)
            if cut < len(text) and (data.endswith(b"\n") or _PART_START.match(data, data.rfind(b"\n") + 1)):
                self._unended = text[cut:]
                return text[:cut]
            self._unended = b""
            return text
        out: list[str] = []
        for raw in data.split(b"\n"):
            if raw.strip():
                line = self.text(raw)[0]
                if line is not None:
                    out.append(line)
        return "".join(out).encode("utf-8", "surrogateescape")

    def text(self, raw: bytes) -> tuple[str | None, str | None]:
        """(the job's line, with its newline, or None while a Docker line goes on in the next
        entry; the collector's time of it, where it gives one) of one collected line, behind
        kubectl's prefix of its pod where the entry names one.  A line that is no JSON object
        is the job's as it is."""
        obj = _json_object(raw.strip())
        value = obj.get(self.key) if obj is not None else None
        if obj is None or not isinstance(value, str):
            return raw.decode("utf-8", "surrogateescape").rstrip("\n") + "\n", None
        when = next((obj[k] for k in JSON_TIME if isinstance(obj.get(k), str)), None)
        if self.key == "log" and not value.endswith("\n"):
            self._part += value
            return None, when
        text, self._part = self._part + value, ""
        return pod_prefix(obj) + (text if text.endswith("\n") else text + "\n"), when


class Clocked(Collected):
    """The job's own lines behind a wrapper's clock each (`clocked`), read without it: behind it,
    torchrun's prefixes, its report and tracebacks begin their lines again."""

    says = "its lines begin with a clock that a wrapper put there (ts): read without it"

    def __init__(self) -> None:
        super().__init__(None)

    def block(self, data: bytes) -> bytes:
        return _WRAPPER_CLOCK.sub(b"", data)


def collector_format(head: bytes) -> Collected | None:
    """How a collector wrapped the lines of a log whose first block is `head`, if one did."""
    if stamped(head):
        return Collected(None)
    if clocked(head):
        return Clocked()
    key = json_text_key(head)
    return Collected(key) if key is not None else None


def collector_of(path: str) -> Collected | None:
    """`collector_format` of the file's first block; None for stdin (`-`), which is told from its
    first block as it is read."""
    if path == "-":
        return None
    with open_log(path) as stream:
        return collector_format(next(read_blocks(stream), b""))
