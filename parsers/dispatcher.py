"""Per-stream dispatcher: decoding, garbage accounting, rank prefixes, `\\r` redraws, ANSI codes,
a cheap pre-check, framework auto-detection and the always-on event and NCCL parsers."""
from __future__ import annotations

import re

from .base import ANSI, CONTROL, LIMIT, MAX_LINE, SHORT_LINE, TIMEOUT
from .composer import ComposerParser
from .deepspeed import DeepSpeedParser
from .events import EventParser
from .generic import GenericParser
from .hf import AccelerateParser, HFTrainerParser
from .lightning import LightningParser, NemoParser
from .megatron import MegatronParser
from .nanogpt import NanoGPTParser
from .nccl import NcclParser
from .prefix import split_rank_prefix
from .torchtitan import TorchtitanParser

# Detection order: most specific first; `generic` is the fallback and never claims a stream.
PARSERS = {
    "megatron": MegatronParser,
    "torchtitan": TorchtitanParser,
    "nemo": NemoParser,
    "lightning": LightningParser,
    "hf_trainer": HFTrainerParser,
    "accelerate": AccelerateParser,
    "deepspeed": DeepSpeedParser,
    "composer": ComposerParser,
    "nanogpt": NanoGPTParser,
    "generic": GenericParser,
}


def _interesting(s: str) -> bool:
    """Cheap pre-check: does the line hold any word that some parser or event looks for?

    Substring tests run in C; word stems cover both cases ('tep' for step/Step, 'oss' for
    loss/Loss).  A line that fails here costs nothing more."""
    return ("tep" in s or "oss" in s or "ime" in s or "iter" in s or "%|" in s or "NCCL" in s
            or "rror" in s or "Trace" in s or "heckpoint" in s or "poch" in s or "/s" in s
            or "val" in s or "{" in s or "esum" in s or "estart" in s or "ontinuing" in s
            or "xitcode" in s or "Kill" in s or "atency" in s or "Speed" in s or "DLL " in s
            or "[batch=" in s or "emory" in s or "detected" in s or "ppl" in s or "ailed" in s
            or "chosen_" in s or "CHECKPOINT" in s)


# The same keywords, for one C-level scan over a whole chunk (`Dispatcher.feed_chunk`).  Keep
# them in step with `_interesting`: a line holding none of them, and no character of _SPECIAL,
# is one that `feed` would drop on its fast path.
_NEEDLES = ("tep", "NCCL", "oss", "ime", "iter", "%|", "rror", "Trace", "heckpoint", "poch", "/s",
            "val", "{", "esum", "estart", "ontinuing", "xitcode", "Kill", "atency", "Speed", "DLL ",
            "[batch=", "emory", "detected", "ppl", "ailed", "chosen_", "CHECKPOINT")
_NEEDLES_B = tuple(n.encode() for n in _NEEDLES)
# Characters that keep a line off `feed`'s fast path: control characters (tab and newline
# aside) and, to stay on the safe side, anything outside ASCII (in bytes: possibly invalid UTF-8;
# in text: possibly not printable).  Such lines are fed one by one.  In bytes, one `translate`
# turns each of them into NUL, which `find` then locates with memchr.
_SPECIAL = re.compile("[\\x00-\\x08\\x0b-\\x1f\\x7f-\\U0010ffff]")
_TO_NUL = bytes(0 if (b < 0x20 and b not in (9, 10)) or b >= 0x7f else b for b in range(256))
_DENSE = 3
"""A chunk where more than one line in this many holds one of the first keywords (the common
ones) is fed line by line: there the scan would cost more than it saves."""


def _candidates(data, nl, needles) -> list[int] | None:
    """Start offsets of the lines of `data` that hold a keyword or a special character; None
    when the chunk is dense with keywords."""
    starts = set()
    add = starts.add
    find, rfind = data.find, data.rfind
    lines = -1
    for j, k in enumerate(needles):
        i = find(k)
        hits = 0
        while i >= 0:
            add(rfind(nl, 0, i) + 1)
            e = find(nl, i)
            if e < 0:
                break
            hits += 1
            if hits == 32 and j < 4 and 32 * _DENSE > data.count(nl, 0, e):
                return None     # dense from the start: do not pay for the rest of the scan
            i = find(k, e)
        if j < 4 and len(starts) > 8:
            if lines < 0:
                lines = data.count(nl)
            if len(starts) * _DENSE > lines:
                return None
    if nl.__class__ is bytes:
        marked = data.translate(_TO_NUL)
        mfind = marked.find
        i = mfind(0)
        while i >= 0:
            add(rfind(nl, 0, i) + 1)
            e = find(nl, i)
            if e < 0:
                break
            i = mfind(0, e)
    else:
        search = _SPECIAL.search
        m = search(data)
        while m is not None:
            i = m.start()
            add(rfind(nl, 0, i) + 1)
            e = find(nl, i)
            if e < 0:
                break
            m = search(data, e)
    return sorted(starts)


_PREFIX_START = frozenset("[ 0123456789")


def _maybe_prefixed(line: str) -> bool:
    if line[0] == "[":
        return line.startswith(("[rank", "[default")) or (line[1:2].isdigit() and "]<std" in line[:24])
    return ": " in line[:10]


_PREFIX_SECOND = frozenset("rd0123456789")


class Dispatcher:
    """One per stream (a process's stdout, a log file).  `feed` one raw line at a time."""

    FAST = True
    """Use the active parser's `fast` hook (tests turn it off to compare with the full path)."""

    def __init__(self, log_format: str | None = None) -> None:
        if log_format is not None and log_format not in PARSERS:
            raise ValueError(f"unknown log format {log_format!r}; one of {', '.join(PARSERS)}")
        self.forced = log_format
        self.parsers = {name: cls() for name, cls in PARSERS.items()
                        if log_format is None or name == log_format}
        if log_format is not None and log_format != "generic":
            self.parsers["generic"] = GenericParser()
        self.order = list(self.parsers.values())
        self.active = self.parsers[log_format] if log_format else None
        self._open = getattr(self.active, "open", None)  # the active parser's multi-line records
        self._fast = getattr(self.active, "fast", None) if self.FAST else None  # no-regex fast path
        self._yields = self.active.yields_to if self.active else None
        self.events = EventParser()
        self.nccl = NcclParser()
        self.seen: set[str] = set()
        self.stats = {"lines": 0, "records": 0, "garbage": 0, "timeouts": 0, "truncated": 0,
                      "switches": 0}

    def _hungry(self) -> bool:
        return bool(self._open)

    @property
    def framework(self) -> str | None:
        return self.active.name if self.active else None

    def feed(self, line: str | bytes, rank: int | None = None) -> list[dict]:
        stats = self.stats
        stats["lines"] += 1
        # fast path: a short, clean line that no parser would look at.  A launcher prefix does
        # not matter: if the whole line holds no keyword, neither does the rest after the prefix.
        if line.__class__ is bytes and len(line) < 2048:
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError:
                pass  # the slow path counts it as garbage
        if line.__class__ is str and len(line) < 2048:
            if line[-1:] == "\n":
                line = line[:-1]
            if (line.isprintable() or ("\t" in line and line.replace("\t", " ").isprintable())) \
                    and not self.events.tb and not self._open:
                if not _interesting(line):
                    return []
                fast = self._fast
                if fast is not None and rank is None and not (
                        line[0] in _PREFIX_START and _maybe_prefixed(line)) and not (
                        self._yields and self._yields & self.seen):
                    # the active parser's own line shape, without a regex (None: not that shape).
                    # Not while its records yield to another framework's: there the full path
                    # drops them and gives the line to the event parser.
                    recs = fast(line)
                    if recs is not None:
                        if recs:
                            self.seen.add(self.active.name)     # `_accept`, inline
                            r0 = recs[0]
                            if r0["kind"] in ("progress", "timing") and r0["step"] is not None:
                                self.events.last_step[None] = r0["step"]
                            stats["records"] += len(recs)
                        return recs
        try:
            if not isinstance(line, str):
                try:
                    line = bytes(line).decode("utf-8")
                except (UnicodeDecodeError, TypeError, ValueError):
                    stats["garbage"] += 1
                    return []
            if len(line) > MAX_LINE:
                line = line[:MAX_LINE]
                stats["truncated"] += 1
            if line.endswith("\n"):
                line = line[:-1]
            short = len(line) <= SHORT_LINE
            LIMIT.timeout = None if short else TIMEOUT
            # Tabs are the one control character common in progress lines (meters); a line
            # that is printable once they are spaces has no ANSI code or other control.
            if not line.isprintable() and not (
                    "\t" in line and line.replace("\t", " ").isprintable()):
                if "\x1b" in line:
                    line = ANSI.sub("", line, timeout=None if short else 0.05)
                if CONTROL.search(line, timeout=None if short else 0.05):
                    stats["garbage"] += 1
                    return []
            if rank is None and line and line[0] in _PREFIX_START and _maybe_prefixed(line):
                rank, line = split_rank_prefix(line)
            if "\r" in line:
                out: list = []
                for seg in line.split("\r")[:2000]:
                    if seg:
                        out.extend(self._line(seg, rank))
            else:
                out = self._line(line, rank)
        except TimeoutError:
            stats["timeouts"] += 1
            stats["garbage"] += 1
            return []
        finally:
            LIMIT.timeout = TIMEOUT
        if out:
            stats["records"] += len(out)
        return out

    def feed_chunk(self, data: str | bytes) -> list[dict]:
        """Feed a block of whole lines at once: the same records and stats as `feed` on each line.

        Lines end with a newline; a last line without one counts as a line too (``b"a\\nb"`` and
        ``b"a\\nb\\n"`` both hold two lines).  One C-level scan per keyword over the whole chunk
        finds the lines that some parser might look at; the others (most of a log) are counted
        and skipped without any work per line.  While a multi-line record or a traceback is
        open, every line goes through `feed`.  An exception from one line counts that line as
        garbage and the rest of the chunk goes on."""
        if data.__class__ is bytes:
            nl, needles = b"\n", _NEEDLES_B
        elif isinstance(data, str):
            nl, needles = "\n", _NEEDLES
        else:
            data = bytes(data)
            nl, needles = b"\n", _NEEDLES_B
        n = len(data)
        if not n:
            return []
        cands = _candidates(data, nl, needles)
        stats = self.stats
        if cands is None:
            return self._feed_lines(data, nl)
        cands.append(n)
        events = self.events
        count, find = data.count, data.find
        out: list = []
        pos = 0
        ci = 0
        while pos < n:
            if events.tb or self._open:
                s = pos       # state from an earlier line: this line must go through `feed`
            else:
                s = cands[ci]
                while s < pos:
                    ci += 1
                    s = cands[ci]
                if s > pos:
                    # lines [pos, s) hold no keyword: count them (s is a line start or n)
                    fed = self._feed_long(data, pos, s, nl) if s - pos > MAX_LINE else 0
                    stats["lines"] += count(nl, pos, s) + (s == n and data[n - 1:] != nl) - fed
                    pos = s
                    continue
            e = find(nl, s)
            if e < 0:
                e = n
            try:
                recs = self.feed(data[s:e])
            except Exception:  # noqa: BLE001 - one bad line must not cost the rest of the chunk
                stats["garbage"] += 1
                recs = None
            if recs:
                out.extend(recs)
            pos = e + 1
        return out

    def _feed_lines(self, data, nl) -> list[dict]:
        lines = data.split(nl)
        if not lines[-1]:
            lines.pop()
        out: list = []
        feed = self.feed
        for line in lines:
            try:
                recs = feed(line)
            except Exception:  # noqa: BLE001 - as in feed_chunk
                self.stats["garbage"] += 1
                continue
            if recs:
                out.extend(recs)
        return out

    def _feed_long(self, data, pos: int, end: int, nl) -> int:
        """Feed the lines in [pos, end) that are longer than MAX_LINE (`feed` counts them as
        truncated) and return how many; the others there hold no keyword and need nothing."""
        fed = 0
        rfind, find = data.rfind, data.find
        while end - pos > MAX_LINE:
            r = rfind(nl, pos, pos + MAX_LINE + 1)
            if r >= 0:
                pos = r + 1       # every line that ends at or before r is short enough
                continue
            e = find(nl, pos, end)
            if e < 0:
                e = end
            self.feed(data[pos:e])
            fed += 1
            pos = e + 1
        return fed

    def _line(self, line: str, rank) -> list[dict]:
        events = self.events
        out: list = []
        if events.tb and rank in events.tb:
            consumed, recs = events.traceback_line(line, rank, self._fw())
            out.extend(recs)
            if consumed:
                return out
        active = self.active
        if active is not None and getattr(active, "open", None) and rank in active.open:
            recs = active.parse(line, rank)     # Composer: multi-line record in progress
            if recs or line.lstrip().startswith(("Train ", "Eval ")):
                return out + self._accept(active, recs)
        if not _interesting(line):
            return out
        if "NCCL" in line:
            recs = self.nccl.parse(line, rank)
            if recs:
                out.extend(recs)
                return out
            if "NCCL INFO" in line:
                return out
        recs = self._progress(line, rank)
        if recs:
            out.extend(recs)
            if recs[0]["kind"] in ("progress", "timing"):
                step = recs[0]["step"]
                if step is not None:
                    events.last_step[rank] = step
            return out
        out.extend(events.parse(line, rank, self._fw()))
        return out

    def _fw(self) -> str:
        return self.active.name if self.active else "generic"

    def _accept(self, parser, recs: list) -> list:
        if recs and parser.yields_to and parser.yields_to & self.seen:
            return []
        if recs:
            self.seen.add(parser.name)
        return recs

    def _progress(self, line: str, rank) -> list[dict]:
        active = self.active
        if active is not None:
            recs = active.parse(line, rank)
            if recs:
                return self._accept(active, recs)
            if self.forced:
                if active.name != "generic":
                    return self.parsers["generic"].parse(line, rank)
                return []
        for p in self.order:
            if p is active or p.name == "generic":
                continue
            if p.detect(line):
                recs = p.parse(line, rank)
                if self.active is not p:
                    self.active = p
                    self._open = getattr(p, "open", None)
                    self._fast = getattr(p, "fast", None) if self.FAST else None
                    self._yields = p.yields_to
                    self.stats["switches"] += 1
                return self._accept(p, recs)
        if active is None or active.name != "generic":
            return self.parsers["generic"].parse(line, rank)
        return []

    def flush(self) -> list[dict]:
        out: list = []
        try:
            for p in self.order:
                out.extend(self._accept(p, p.flush()))
            out.extend(self.events.flush(self._fw()))
        except TimeoutError:
            self.stats["timeouts"] += 1
        self.stats["records"] += len(out)
        return out
