"""A rank's line that reached the launcher in two writes, put back together.

Two launchers pass each rank's output on a write at a time, each behind the rank's prefix:
torchrun's `--tee` (`[defaultN]:`) and mpirun's `--tag-output` (`[1,N]<stdout>:`).  Where a
rank has written only part of a line, that part goes on alone, and the rest later, behind the
prefix again.  `print` under PYTHONUNBUFFERED=1 writes a line's text and its newline in two
system calls, so a busy machine shows, now and then:

    [default0]:step 2/4 loss 2.300 step_time_ms 300.0[default1]:step 2/4 loss 2.301 ...
    [default0]:

Progress bars do it on every step.  torchrun's tail reads in text mode, which turns a bar's
every `\r` into a newline: each redraw is a line, whose text is passed on when it is drawn and
whose newline comes with the rank's next redraw.  mpirun keeps the `\r`: a bar's redraws run
on one line for its whole epoch, each behind the prefix, between other ranks' redraws.

A part before another prefix is held under its prefix, and given back in front of the same
prefix's next part.  Parts without a prefix (the launcher's own messages) are held as None.
"""
from __future__ import annotations

import re

from .base import MAX_LINE

_MPIRUN = re.compile(rb"\[[0-9]{1,7},[0-9]{1,7}\]<std(?:out|err)>:")
_PREFIX = re.compile(rb"\[default[0-9]{1,7}\]:|" + _MPIRUN.pattern)
"""A prefix that a launcher writes before each write of a rank's output, not only at lines'
starts; the prefix itself is the key of the rank's held part (stdout and stderr apart)."""

_REDRAW_END = re.compile(rb"(?:it/s|s/it)[^\[\]\n]*+\] *$")
"""The end of a tqdm redraw: its rate, the postfix, the closing bracket, the padding that blanks
a longer redraw before it."""
REDRAW_TAIL = 400
"""How far from a held part's end its redraw's end is looked for."""


def split_inside(data: bytes) -> bool:
    """Does a launcher's per-write prefix begin anywhere but at the start of a line?  Where
    there is none, or only torchrun's, the check is two counts, each one scan at C speed: it
    costs little on a block with no such prefix."""
    found = data.count(b"[default")
    if found > data.count(b"\n[default") + data.startswith(b"[default"):
        return True
    if b"]<std" not in data:
        return False
    return any(m.start() > 0 and data[m.start() - 1] != 10 for m in _MPIRUN.finditer(data))


def per_write_prefix(data: bytes) -> bool:
    """Does `data` hold a prefix that a launcher writes before each write (see above)?"""
    return (b"[default" in data or b"]<std" in data) and _PREFIX.search(data) is not None


class TeeParts:
    """The held first parts of the ranks' unfinished lines, for one stream."""

    def __init__(self) -> None:
        self.held: dict[bytes | None, bytes] = {}
        """prefix (None: none) -> the text of its unfinished line"""
        self.since: dict[bytes | None, int | None] = {}
        """prefix -> when the first byte of its held part came (the parsers' clock)"""
        self.at: bytes | None = None
        """The prefix of the write that the stream's last bytes ended in, where the live path
        read up to a `\r` inside a line: the next bytes before any prefix are that write's."""

    @property
    def open(self) -> bool:
        """Is a part held, or the stream inside a prefixed write?"""
        return bool(self.held) or self.at is not None

    def join(self, data: bytes, now: int | None = None) -> tuple[bytes, int]:
        """`data` (whole lines; a last one without its newline counts as whole) as whole lines
        of one rank each, each behind its rank's prefix; the parts that end before another
        prefix are held, with when they came (`now`, the parsers' clock).  A held part longer
        than MAX_LINE is given as a line of its own, up to its last `\r`: the count of those
        comes second, lines that the stream did not end."""
        lines = data.split(b"\n")
        if not lines[-1]:
            lines.pop()
        out: list[bytes] = []
        extra = 0
        held = self.held
        first, self.at = self.at, None
        for line in lines:
            parts = _parts(line, first)
            first = None
            for prefix, text in parts[:-1]:
                text, redraw = self._after_held(prefix, text)
                if redraw is not None:
                    out.append(redraw)
                    extra += 1
                if len(text) > MAX_LINE:
                    # a bar behind a prefix on every redraw, `\r` kept, draws a whole epoch on
                    # one line: its whole redraws go on as a line, the last may not be whole yet
                    cut = text.rfind(b"\r")
                    cut = cut if cut > 0 else len(text)
                    out.append(_prefixed(prefix, text[:cut]))
                    extra += 1
                    text = text[cut:]
                if text:
                    held[prefix] = text
                    self.since.setdefault(prefix, now)
                else:
                    self.since.pop(prefix, None)
            prefix, text = parts[-1]
            text, redraw = self._after_held(prefix, text)
            if redraw is not None:
                out.append(redraw)
                extra += 1
            out.append(_prefixed(prefix, text))
            self.since.pop(prefix, None)
        if not out:
            return b"", extra
        out.append(b"")
        return b"\n".join(out), extra

    def _after_held(self, prefix: bytes | None, text: bytes) -> tuple[bytes, bytes | None]:
        """`prefix`'s next part with its held part in front, and None; or, where the held part
        is a bar's whole redraw and the next part brings text of its own, that text alone and
        the redraw as a line of its own.  torchrun gives a rank's stdout and stderr one prefix:
        a line logged to stdout while the bar's last redraw waits for its newline (the next
        `\r`) came glued to it, and neither was read (SpeechBrain's epoch summary after its
        bar, under `--tee`).  tqdm writes a redraw in one write, so one that ends as a redraw
        ends (`, 6.11it/s, train_loss=2.3]`) is whole.  A part that begins with `\r` is the
        bar's next redraw, where the launcher kept the `\r`: the line goes on."""
        held = self.held.pop(prefix, b"")
        if held and text and text[:1] != b"\r" \
                and _REDRAW_END.search(held, max(0, len(held) - REDRAW_TAIL)):
            self.since.pop(prefix, None)
            return text, _prefixed(prefix, held)
        return held + text, None

    def redraws(self, data: bytes, now: int | None) -> list[tuple[bytes | None, bytes, int | None]]:
        """The live path: `data`, read up to a `\r` inside a line (a bar's redraws, mpirun
        passing each on behind its rank's prefix), or a line whose parts came at different
        times (see the dispatcher's `_end_tee_line`), added to each prefix's held part.  Returns
        (prefix, the redraws that are whole, when they came) in order: a redraw is whole once
        the same prefix's next `\r` has come.  The one that was held came with an earlier read,
        at the time kept for it; the rest came `now`.  When the line ends: `end_line`."""
        out: list[tuple[bytes | None, bytes, int | None]] = []
        parts = _parts(data, self.at)
        self.at = parts[-1][0]
        for prefix, text in parts:
            held = self.held.pop(prefix, b"")
            since = self.since.pop(prefix, now)
            if held in (b"", b"\r"):
                since = now         # a held redraw came when its text did
            last = text.rfind(b"\r")
            if last < 0:
                if len(held) + len(text) > MAX_LINE:   # no redraw, no line end: read it as it is
                    out.append((prefix, held + text, since))
                elif held or text:
                    self.held[prefix], self.since[prefix] = held + text, since
                continue
            first = 0
            if held:        # its text runs up to the first `\r` of this read
                first = text.find(b"\r")
                out.append((prefix, held + text[:first], since))
            if last > first:
                out.append((prefix, text[first:last], now))
            self.held[prefix], self.since[prefix] = text[last:], now
        return out

    def end_line(self) -> None:
        """The live path's line of the write the stream is in has ended (its newline came)."""
        self.held.pop(self.at, None)
        self.since.pop(self.at, None)
        self.at = None

    def drain(self) -> list[bytes]:
        """The held parts as lines of their own, for a stream that ended in the middle of them."""
        lines = [_prefixed(prefix, text) for prefix, text in self.held.items()]
        self.held.clear()
        self.since.clear()
        self.at = None
        return lines


def _parts(line: bytes, first: bytes | None = None) -> list[tuple[bytes | None, bytes]]:
    """(prefix, text) of each prefixed part of one physical line, in order; the text before
    the first prefix, if any, under `first` (the write it continues; None: no prefix's)."""
    parts: list[tuple[bytes | None, bytes]] = []
    start = 0
    prefix = first
    for m in _PREFIX.finditer(line):
        if m.start() > 0:
            parts.append((prefix, line[start:m.start()]))
        start, prefix = m.end(), m.group()
    parts.append((prefix, line[start:]))
    return parts


def _prefixed(prefix: bytes | None, text: bytes) -> bytes:
    return text if prefix is None else prefix + text
