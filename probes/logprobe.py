"""Log probe: passes a child's stdout/stderr through unchanged and parses it on the side.

Bytes are written to our own stream as soon as they are read, before any parsing, so the
user sees exactly what the job printed, when it printed it.  The complete lines of what was
read then go, as one block, to one parser dispatcher per stream, which maps launcher prefixes
to ranks; so do the `\r` redraws of a line not ended yet (a progress bar), as they come.
"""
from __future__ import annotations

import os
import threading
import time

MAX_LINE = 1 << 20


def cut_pending(pending: bytes) -> tuple[bytes, bytes, bytes]:
    """What of the bytes read so far can be parsed now: (the whole lines, the `\r` redraws of
    the line after them, the rest, kept for the next read).  A bar in a pipe ends its line only
    when its epoch ends: its redraws are parsed as they come.  A `\r` that ends `pending` is
    kept back, since a `\n` may follow it (CRLF)."""
    cut = pending.rfind(b"\n") + 1
    lines, pending = pending[:cut], pending[cut:]
    redraw = pending.rfind(b"\r", 0, len(pending) - 1) + 1
    return lines, pending[:redraw], pending[redraw:]


class StreamPump:
    def __init__(self, fd: int, out, stream: str, on_record, default_rank: int):
        self.fd, self.out, self.stream = fd, out, stream
        self.on_record = on_record
        self.default_rank = default_rank
        self.lines = 0
        self.parse_errors = 0
        self.framework = ""
        """The first framework other than the generic fallback that the parsers recognised."""
        try:
            from ridgescope.parsers import Dispatcher
            self.dispatcher = Dispatcher()
        except Exception:  # noqa: BLE001 - without parsers the output still passes through
            self.dispatcher = None
        self._thread = threading.Thread(target=self._run, name=f"ridgescope-{stream}",
                                        daemon=True)

    def start(self) -> "StreamPump":
        self._thread.start()
        return self

    def join(self, timeout_s: float | None = None) -> None:
        self._thread.join(timeout_s)

    def _run(self) -> None:
        pending = b""
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.out.write(chunk)
            self.out.flush()
            lines, redraws, pending = cut_pending(pending + chunk)
            if lines:
                self._parse(lines, lines.count(b"\n"))
            if redraws:
                self._read("feed_redraws", redraws)
            if len(pending) > MAX_LINE:
                self._parse(pending, 1)
                pending = b""
        if pending:
            self._parse(pending, 1)
        self._flush()
        os.close(self.fd)

    def _parse(self, block: bytes, lines: int) -> None:
        """`block`: whole lines, each ending with a newline, or one line without one."""
        self.lines += lines
        self._read("feed_chunk", block)

    def _flush(self) -> None:
        self._read("flush")

    def _read(self, method: str, *args) -> None:
        """Emit the records of one call of the dispatcher's `method`."""
        if self.dispatcher is None:
            return
        try:
            records = getattr(self.dispatcher, method)(*args)
        except Exception:  # noqa: BLE001 - parsers count garbage; this is the last guard
            self.parse_errors += 1
            return
        self._emit(records)

    def _emit(self, records: list[dict]) -> None:
        now = time.time_ns()
        for record in records:
            if not self.framework and record.get("framework") not in (None, "", "generic"):
                self.framework = str(record["framework"])
            rank = record.get("rank")
            self.on_record(rank if isinstance(rank, int) else self.default_rank,
                           {"record": record, "stream": self.stream}, now)

    @property
    def garbage(self) -> int:
        stats = getattr(self.dispatcher, "stats", None) or {}
        return int(stats.get("garbage", 0)) + self.parse_errors
