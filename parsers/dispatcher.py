"""Per-stream dispatcher: decoding, garbage accounting, rank prefixes, `\\r` redraws, ANSI codes,
a cheap pre-check, framework auto-detection and the always-on event and NCCL parsers."""
from __future__ import annotations

import functools

from .base import (ANSI, BACKSPACES, BAR, CLOCK, CONTROL, LIMIT, MAX_LINE, READ_LINE, SHORT_LINE, TIMEOUT,
                   Parser, Unclocked, record)
from . import mllog, rendezvous
from .composer import ComposerParser
from .deepspeed import DeepSpeedParser
from .espnet import EspnetParser
from .events import EventParser
from .generic import GenericParser
from .glued import glued_at, glued_pieces
from .hf import AccelerateParser, HFTrainerParser
from .hf_epochs import TrainingBanner
from .icefall import IcefallParser
from .ignite import IgniteParser
from .keras import KerasParser
from .lightning import LightningParser, NemoParser
from .litgpt import LitGPTParser
from .maxtext import MaxTextParser
from .megatron import MegatronParser
from .mpirun_tags import MpirunTags
from .nanogpt import NanoGPTParser
from .nccl import NcclParser, chatter
from .nemo_rl import NemoRLParser
from .node_labels import NodeLabels
from .structured import message_of
from .olmo import OlmoParser
from .prefix import RayWorkers, split_rank_prefix
from .scan import candidate_lines, interesting
from .sighting import PatternSighting, Sighting, StreamAge
from .speechbrain import SpeechBrainParser
from .slime import SlimeParser
from .srun import AGENT_MARK, LABEL, PIECE, SrunPieces, cut_after_word, cut_inside, flatten, labelled, widest_node
from .tee import TeeParts, per_write_prefix, split_inside
from .template import TeePrefix
from .tensorflow import TensorflowParser
from .torchtitan import TorchtitanParser
from .verl import VerlParser

# Detection order: most specific first; `generic` is the fallback and never claims a stream.
PARSERS = {
    "megatron": MegatronParser,
    "torchtitan": TorchtitanParser,
    "nemo": NemoParser,
    "ignite": IgniteParser,
    "lightning": LightningParser,
    "hf_trainer": HFTrainerParser,
    "accelerate": AccelerateParser,
    "deepspeed": DeepSpeedParser,
    "composer": ComposerParser,
    "olmo": OlmoParser,
    "verl": VerlParser,
    "nemo_rl": NemoRLParser,
    "slime": SlimeParser,
    "maxtext": MaxTextParser,
    "espnet": EspnetParser,
    "icefall": IcefallParser,
    "speechbrain": SpeechBrainParser,
    "keras": KerasParser,
    "litgpt": LitGPTParser,
    "tensorflow": TensorflowParser,
    "nanogpt": NanoGPTParser,
    "generic": GenericParser,
}
LOOP_BAR = "tqdm"
"""Not a framework: a stream whose training loop draws a tqdm bar with no label (`for batch in
tqdm(loader)`), which by its looks is nobody's training and gives no record unless told so.
The generic parser reads it, taking the first such bar each rank draws for its training bar."""
FORMATS = (*PARSERS, LOOP_BAR)
"""What `--log-format` may name."""
UNLABELLED_BAR = ("a bar with no label drew {drawn} steps and gave none (downloads and evaluations "
                  f"draw the same); if it is the training loop's, --log-format {LOOP_BAR} reads it")
"""What `parse`, `ingest` and `run` say where such a bar was the only sign of steps."""


_DENSE = 4
"""A block where more than 3 lines in 4 are candidates is fed line by line: a plain loop over
`split` costs less there than stepping through the candidates."""
SCAN_MIN = 4096
"""`feed_chunk` scans blocks of at least this many bytes; smaller ones (a live job's pipe gives a
line or a few per read) go line by line: the scan's fixed cost, ~50 us, is more than it saves."""
_HEAD_LINES = 16
_READER_BACKOFF = 63


def _dense_head(data: bytes) -> bool:
    """Do more than 3 in 4 of the block's first lines hold a keyword?  Then the block is most
    likely dense (a framework's progress lines), and the scan, ~0.3 us a line, would be spent
    for nothing; a wrong guess only costs speed."""
    head = data[:2048].split(b"\n", _HEAD_LINES)[:_HEAD_LINES]
    hits = sum(1 for line in head if interesting(line.decode("latin-1")))
    return hits * _DENSE > len(head) * (_DENSE - 1)    # 2 KiB may hold fewer than 16 lines


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_UNCLAIMED_SHAPES = 2048
"""Shapes `Dispatcher._claimant` keeps, at most (up to 1 MiB of lines; a real log's stream has
shown up to ~260): a stream of ever new shapes starts it afresh."""

_PREFIX_START = frozenset("[ 0123456789(")


def _maybe_prefixed(line: str) -> bool:
    if line[0] == "(":      # Ray: `(RayTrainWorker pid=75298) `
        return line.find(" pid=", 1, 104) >= 0
    if line[0] == "[":
        return line.startswith(("[rank", "[default")) or (line[1:2].isdigit() and (
            "]<std" in line[:24] or "]:" in line[:10]))
    return ": " in line[:10]


def _without_codes(text: str) -> str | None:
    """The text without its ANSI codes, and without the backspaces that a `\r` or the end
    follows (Keras erases its bar so before each redraw); None where another control character
    is left."""
    timeout = None if len(text) <= SHORT_LINE else 0.05
    if "\x1b" in text:
        text = ANSI.sub("", text, timeout=timeout)
    if "\x08" in text:
        text = BACKSPACES.sub("", text, timeout=timeout)
    if CONTROL.search(text, timeout=timeout):
        return None
    return text


def _bar_end(line: str) -> int:
    """Where a tqdm redraw ends in `line`, if text follows it: a bar never ends its line, so
    what the job prints next runs on after the redraw (torchtune's `Step 5 | loss:...`, a
    checkpoint's message); 0 if nothing does."""
    m = BAR.search(line)
    if m is None or line[m.end() - 1] != "]" or not line[m.end():].strip():
        return 0
    return m.end()


def _as_bytes(data: str | bytes | bytearray | memoryview) -> bytes:
    return data.encode("utf-8", "surrogateescape") if isinstance(data, str) else bytes(data)


SLURMS_OWN = ("slurmstepd: ", "slurmstepd-", "srun: ")
"""How the lines of Slurm's step daemon and of srun itself begin (`launcher_errors.py`)."""


class Dispatcher:
    """One per stream (a process's stdout, a log file).  `feed` one raw line at a time."""

    FAST = True
    """Use the fast paths: the active parser's `fast` hook, its block readers and runs, and the
    NCCL chatter drop (tests turn them off to compare with the full regex path)."""

    def __init__(self, log_format: str | None = None, nproc_per_node: int | None = None,
                 tee_prefix: TeePrefix | None = None, training_banner: TrainingBanner | None = None) -> None:
        if log_format is not None and log_format not in FORMATS:
            raise ValueError(f"unknown log format {log_format!r}; one of {', '.join(FORMATS)}")
        self.generic = GenericParser(unlabelled_loop=log_format == LOOP_BAR)
        """The fallback of every stream, forced or not (its `parse` takes `bars`)."""
        if log_format == LOOP_BAR:
            log_format = "generic"
        self.forced = log_format
        self.parsers: dict[str, Parser] = {
            name: self.generic if name == "generic" else cls() for name, cls in PARSERS.items()
            if log_format is None or name in (log_format, "generic")}
        self.order = list(self.parsers.values())
        if training_banner is not None:
            # shared with the process's other pipe: HF's Trainer logs its banner on stderr and
            # prints the log dicts whose steps it gives on stdout (`hf_epochs`)
            for p in self.order:
                if isinstance(p, HFTrainerParser):
                    p.banner = training_banner
        self._detects = tuple((p, p.detect) for p in self.order if p.name != "generic")
        self._reading_detects = tuple((p, detect) for p, detect in self._detects if p.detect_reads)
        self._unclaimed: set[bytes] = set()
        """Shapes of lines that no `detect` claimed (see `_claimant`)"""
        self.active: Parser | None = None
        self._activate(self.parsers[log_format] if log_format else None)
        self.events = EventParser()
        self.nccl = NcclParser()
        self.ray = RayWorkers()
        self.seen: set[str] = set()
        self._line_part: tuple | None = None
        """(rank, the unclaimed parts) of a line that `feed_redraws` began and no newline ended"""
        self.tee = TeeParts()
        self.srun = SrunPieces()
        self._srun_line = b""
        """The redraws of a labelled line that `feed_redraws` holds for `feed_chunk`"""
        self.nproc_per_node = nproc_per_node
        """Workers per node under `srun --label torchrun --tee` (see `srun.flatten`); where
        not told, the most that one node's lines have shown so far."""
        self._widest_node = 0
        self._node_ranks: dict[int, list[int]] = {}
        """node label -> the job's rank of each of its local ranks, as its torchrun agent's
        rendezvous gave them (`rendezvous.py`)"""
        self._nodes_flattened = False
        """Have nodes' labels around torchrun's prefix been read as ranks?  A node's agent's line
        that names a local rank is then read as that worker's (see `srun.flatten`)."""
        self.tee_prefix = tee_prefix
        """torchrun's prefix where its role or template is not the default (see `template`)"""
        self._tee_line_parts: dict[bytes | None, tuple] = {}
        """prefix -> the `_line_part` of its rank's line, where the launcher prefixes each write
        (see `_tee_redraws`)"""
        self.labels = NodeLabels()
        """The launchers' node labels of the stream, read as srun's (see `node_labels`)"""
        self._age = StreamAge()
        self._tee_mark, self._mpirun_mark = Sighting("[default"), Sighting("]<std")
        self.mpirun_tags = MpirunTags()
        """Open MPI 5's namespaces of the stream's `--output tag-fullname` (see `mpirun_tags`)"""
        self._srun_mark = PatternSighting(rb"^" + LABEL)
        """Has the stream shown torchrun's `--tee` prefix, mpirun's tag, srun's label?  (see `sighting`)"""
        self._read_len = 0
        """Length of the last line that the active parser's `fast` hook or a block reader
        (`_read_in_place`) read: a line half as long again is checked for two prints run into
        one (see `glued`).  One length for both: a block of lines read in place moves it on,
        so that the next line `feed` reads is not measured against a line read long before."""
        self.stats = {"lines": 0, "records": 0, "garbage": 0, "timeouts": 0, "truncated": 0,
                      "switches": 0, "glued": 0}
        self._inherited: list = []
        """Records of the steps an unlabelled bar drew before the framework that claimed the
        stream named itself (`_inherit`): given first by the call that reads the claim."""

    def _activate(self, parser) -> None:
        """Make `parser` the stream's framework, with cached references to its per-line hooks."""
        self.active = parser
        # the multi-line records being read: the active parser's, or pprint's dicts (`spread_dicts`)
        self._open = self.generic.spread.open if parser in (None, self.generic) else getattr(parser, "open", None)
        self._fast = getattr(parser, "fast", None) if self.FAST else None  # no-regex fast path
        # No framework yet: the generic parser's readers, whose shapes no `detect` claims, and
        # its fallback readers, told which lines another parser claims.
        reading = parser if parser is not None else self.generic
        readers = [getattr(reading, name) for name in reading.readers]
        if parser is None:
            readers += [functools.partial(getattr(reading, name), claimed=self._claimed)
                        for name in reading.fallback_readers]
        self._readers = tuple(readers) if self.FAST else ()
        self._runs = {first: getattr(reading, name) for first, name in reading.runs} if self.FAST else {}
        self._yields = parser.yields_to if parser else None
        self._line_rank = getattr(parser, "line_rank", None)
        """The rank a line of the framework's own names where no launcher prefix does (icefall's
        `(R/W)`): every record of the line is that rank's, events too."""

    def _claimed(self, line: str) -> bool:
        """Would `feed` give this line, with no framework active, to another parser than the
        generic one: the NCCL parser, or a framework whose `detect` claims it?"""
        return "NCCL" in line or self._claimant(line) is not None

    def _claimant(self, line: str) -> Parser | None:
        """The first parser but the active one whose `detect` claims the line.

        A line of a shape (its digits aside) that no `detect` claimed before is shown only to
        those that read state from it (`Parser.detect_reads`): the lines that reach here and
        give nothing (launcher chatter that holds a keyword by chance, the redraws of a bar no
        framework draws) come in runs of few shapes, and the other detectors cost ~5 us a line."""
        active, unclaimed = self.active, self._unclaimed
        shape = None
        if len(line) <= SHORT_LINE:
            shape = line.encode("utf-8", "surrogatepass").translate(_DIGITS_AS_ZERO)
        if shape in unclaimed:
            for p, detect in self._reading_detects:
                if p is not active and detect(line):
                    return p
            return None
        for p, detect in self._detects:
            if p is not active:
                if detect(line):
                    return p
            elif not p.detect_reads and detect(line):
                shape = None    # claimed, by the parser that holds the stream now
        if shape is not None:
            if len(unclaimed) >= _UNCLAIMED_SHAPES:
                unclaimed.clear()
            unclaimed.add(shape)
        return None

    def _claim_redrawn(self, line: str) -> None:
        """A line of `\r` redraws whose later part names the framework (HF prints its first
        log dict on the line of the bar's first redraws): the framework reads the whole line,
        so that its bars come before its dict, as they did on the screen."""
        for p, detect in self._detects:
            if detect(line):
                self._inherit(p)
                self._switch(p)
                return

    def _switch(self, parser) -> None:
        if self.active is not parser:
            if self.active is not None:
                parser.take_over(self.active)
            self._activate(parser)
            self.stats["switches"] += 1

    def _inherit(self, parser) -> None:
        """`parser` claims a stream that no framework had: it may take the steps of the
        unlabelled bars read so far (`Parser.inherit_bars`)."""
        if self.active is None:
            handed = self._accept(parser, parser.inherit_bars(self.generic.loop_bars.unlabelled.claim()))
            if handed:
                self.stats["records"] += len(handed)
                self._inherited += handed

    def _with_inherited(self, out: list) -> list:
        handed, self._inherited = self._inherited, []
        return handed + out

    def _finished(self, out: list) -> list:
        """The records of one call of `feed`, `feed_chunk` or `feed_redraws`, in order."""
        if self._inherited:
            out = self._with_inherited(out)
        return self._place_resumes(out) if self.events.resumed_unnumbered else out

    def pending_restart(self) -> dict | None:
        """torchrun's agent's word, read on this stream, that a worker failed, while no step has
        said yet whether it started its workers again."""
        held = self.events.resumed_unnumbered.get(None)
        return held if held is not None and held["kind"] == "error" else None

    def restart_may_follow(self, failed: dict) -> dict:
        """Another stream of the process read `failed` (`pending_restart`): this one's next step,
        if no further on than this stream's last, begins the run again (`_place_resumes`).
        Returns what this stream now holds pending."""
        held = self.events.resumed_unnumbered[None] = dict(failed, step=self._stream_step(None))
        return held

    def adopt(self, name: str) -> bool:
        """Read this stream as `name`'s, where it shows no framework yet and the process's
        other pipe showed that one, if the framework splits its output so (`Parser.adopt`)."""
        parser = self.parsers.get(name)
        if self.active is not None or parser is None or not parser.adopt():
            return False
        self._inherit(parser)
        self._switch(parser)
        return True

    def unlabelled_bar_steps(self) -> int:
        """The furthest count of a bar with no label that gave no record (0: none was drawn):
        a loop's own, maybe, which `LOOP_BAR` would read."""
        return self.generic.loop_bars.unlabelled.most_drawn()

    @property
    def framework(self) -> str | None:
        return self.active.name if self.active else None

    def feed(self, line: str | bytes, rank: int | None = None) -> list[dict]:
        """The records of one raw line (str or bytes, its newline optional).  Never raises: a
        line that a parser fails on is counted as garbage and skipped, like a garbled one.
        Lines that a launcher passed on in parts are put back together (see `tee`, `srun`)."""
        return self._finished(self._feed_any(line, rank))

    def _feed_any(self, line: str | bytes, rank: int | None) -> list[dict]:
        try:
            if type(line) is bytes and len(line) < 2048 and line.isascii():
                # text from here on: a substring test on bytes, `b"x" in line`, first tries the
                # operand as an int and drops the TypeError (~0.2 us, five times str's test),
                # and a line of chatter makes ten of them.  (ASCII: its length stays the bytes',
                # which srun's 1024-byte pieces are counted in.)
                line = line.decode("ascii")
            # torchx's, SkyPilot's, kubectl's or pdsh's prefix, or stern's notice (`node_labels`).  The
            # marks spelt out, as constants: a call, or a global's name, a line cost 2-3 % of a line
            # of chatter.
            if self.labels.marked or (
                    ", pid=" in line or "pdsh " in line or "WORLD INFO DICT: {" in line or "[pod/" in line
                    or "torchx" in line or ("]:" in line and (": [rank" in line or " [0]:" in line))
                    or "\u203a" in line
                    if isinstance(line, str) else
                    b", pid=" in line or b"pdsh " in line or b"WORLD INFO DICT: {" in line or b"[pod/" in line
                    or b"torchx" in line or (b"]:" in line and (b": [rank" in line or b" [0]:" in line))
                    or b"\xe2\x80\xba" in line):
                line = self.labels.line(line)
            if self.tee_prefix is not None:
                line = self.tee_prefix.as_default(_as_bytes(line))
            if isinstance(line, str):
                if "]<std" in line:
                    line = self.mpirun_tags.plain_text(line)
                    split = ("[default" in line and line.find("[default", 1) > 0) or split_inside(_as_bytes(line))
                else:
                    split = "[default" in line and line.find("[default", 1) > 0
            else:
                line = bytes(line)
                if b"]<std" in line:
                    line = self.mpirun_tags.plain_bytes(line)
                    split = (b"[default" in line and line.find(b"[default", 1) > 0) or split_inside(line)
                else:
                    split = b"[default" in line and line.find(b"[default", 1) > 0
            if self._nodes_flattened and rank is None and (
                    ") local_rank: " in line if isinstance(line, str) else AGENT_MARK in line):
                return self.feed_chunk(_as_bytes(line))     # a node's agent's line (`srun.flatten`)
            if (split or self.tee.open) and rank is None:
                data = _as_bytes(line)
                if b": [default" in data and b"\n" not in data[:-1]:
                    return self.feed_chunk(data)    # srun's label around torchrun's prefix
                return self._feed_joined(data)
            if rank is None and (self.srun.held or self.srun.writes or (
                    len(line) > PIECE and labelled(line) and cut_inside(_as_bytes(line))) or (
                    len(line) < 40 and cut_after_word(_as_bytes(line)))):
                return self._feed_srun(_as_bytes(line))
            return self._feed(line, rank)
        except Exception:  # noqa: BLE001 - as in `_feed_line`
            self.stats["garbage"] += 1
            return []

    def _feed_joined(self, line: bytes) -> list[dict]:
        """`feed` of a line that holds, or may end, a part of a line that `--tee` or mpirun
        split.  A "line" with a newline inside is no line a reader split off: it is read as it
        is."""
        if b"\n" in line[:-1]:
            return self._feed_line(line, None)
        out: list = []
        joined = self._join(line if line.endswith(b"\n") else line + b"\n")
        with Unclocked():   # parts held from earlier lines: `feed_chunk` times them, not `feed`
            if joined:
                for whole in joined[:-1].split(b"\n"):
                    out.extend(self._feed_line(whole, None))
        return out

    def _feed_srun(self, line: bytes) -> list[dict]:
        """`feed` of a line of a stream that srun cut lines in (see `srun`): held while it is a
        first piece, read with the pieces before it when it ends a line.  A "line" with a newline
        inside is no line a reader split off (as in `_feed_joined`): it is read as it is."""
        if b"\n" in line[:-1]:
            return self._feed_line(line, None)
        joined = self.srun.join(line if line.endswith(b"\n") else line + b"\n")
        out: list = []
        for whole in joined[:-1].split(b"\n") if joined else ():     # a held line, then this one
            out.extend(self._feed_line(whole))
        return out

    def _join(self, data: bytes) -> bytes:
        """`data` as whole lines of one rank each (`TeeParts.join`); a line given from held
        parts alone is no line of the stream, and is not counted as one."""
        joined, extra = self.tee.join(data, CLOCK.now_ns)
        self.stats["lines"] -= extra
        for prefix in [p for p in self._tee_line_parts if p not in self.tee.held]:
            del self._tee_line_parts[prefix]      # its line ended
        return joined

    def _feed_line(self, line: str | bytes, rank: int | None = None) -> list[dict]:
        """`feed`, once the line is whole."""
        try:
            return self._feed(line, rank)
        except Exception:  # noqa: BLE001 - a parser's bug must not stop the stream
            self.stats["garbage"] += 1
            return []

    def _feed(self, line: str | bytes, rank: int | None) -> list[dict]:
        stats = self.stats
        stats["lines"] += 1
        # fast path: a short, clean line that no parser would look at.  A launcher prefix does
        # not matter: if the whole line holds no keyword, neither does the rest after the prefix.
        if type(line) is bytes and len(line) < 2048:
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError:
                pass  # the slow path counts it as garbage
        printable = checked = False
        if type(line) is str and len(line) < 2048:
            if line[-1:] == "\n":
                line = line[:-1]
            if line[-1:] == "\r":      # CRLF: a line ending, not a redraw
                line = line[:-1]
            # Tabs are the one control character common in progress lines (meters); a line
            # that is printable once they are spaces has no ANSI code or other control.
            printable = line.isprintable() or (
                "\t" in line and line.replace("\t", " ").isprintable())
            if printable and not self.events.tb and not self._open:
                if not interesting(line) or (self.FAST and "NCCL INFO" in line and self._nccl_dropped(line)):
                    return []
                checked = True      # a launcher prefix holds no keyword: `_line` need not look again
                fast, active = self._fast, self.active
                if fast is not None and active is not None and rank is None and not (
                        line[0] in _PREFIX_START and _maybe_prefixed(line)) and not (
                        self._yields and self._yields & self.seen):
                    # the active parser's own line shape, without a regex (None: not that shape).
                    # Not while its records yield to another framework's: there the full path
                    # drops them and gives the line to the event parser.  Nor where two prints
                    # may have run into the line (half as long again as the last it read):
                    # `_line` cuts them apart.
                    n = len(line)
                    recs = fast(line) if n * 2 <= self._read_len * 3 or not glued_at(line) else None
                    if recs is not None:
                        if recs:
                            self.seen.add(active.name)     # `_accept`, inline
                            r0 = recs[0]
                            if r0["kind"] in ("progress", "timing") and r0["step"] is not None:
                                self.events.last_step[None] = r0["step"]
                            stats["records"] += len(recs)
                            self._read_len = n
                        return recs
        try:
            if isinstance(line, str):
                text = line
            else:
                try:
                    text = bytes(line).decode("utf-8")
                except (UnicodeDecodeError, TypeError, ValueError):
                    stats["garbage"] += 1
                    return []
            if len(text) > MAX_LINE:
                if "\r" in text:
                    return self._long_redraws(text, rank)
                text = text[:MAX_LINE]
                stats["truncated"] += 1
            if text.endswith("\n"):
                text = text[:-1]
            if text.endswith("\r"):
                text = text[:-1]
            LIMIT.timeout = None if len(text) <= SHORT_LINE else TIMEOUT
            if not printable and not text.isprintable() and not (
                    "\t" in text and text.replace("\t", " ").isprintable()):
                cleaned = _without_codes(text)
                if cleaned is None:
                    stats["garbage"] += 1
                    return []
                text = cleaned
            if rank is None and text and text[0] in _PREFIX_START and _maybe_prefixed(text):
                rank, text = self._split_prefix(text)
            if "\r" in text:
                out: list = []
                if self.active is None and interesting(text):   # no keyword: no segment is read
                    self._claim_redrawn(text)
                for seg in text.split("\r")[:2000]:
                    if seg:
                        out.extend(self._line(seg, rank))
            else:
                out = self._line(text, rank, checked)
        except TimeoutError:
            stats["timeouts"] += 1
            stats["garbage"] += 1
            return []
        finally:
            LIMIT.timeout = TIMEOUT
        if out:
            stats["records"] += len(out)
        return out

    def _long_redraws(self, text: str, rank) -> list[dict]:
        """A line of `\r` redraws longer than MAX_LINE: a bar that ran a whole epoch into a pipe
        (tqdm, Lightning and Keras end its line only when the epoch ends, HF at its next log).
        Each redraw is read as a line of its own, so that no step is lost to the cut; the
        line's launcher prefix, at its start, gives the rank of them all, and a garbled redraw
        is counted and skipped alone."""
        if text.endswith("\n"):
            text = text[:-1]
        if rank is None and text[0] in _PREFIX_START and _maybe_prefixed(text):
            rank, text = self._split_prefix(text)
        if self.active is None and interesting(text):
            self._claim_redrawn(text)
        return self._redraws(text, rank)

    def _redraws(self, text: str, rank) -> list[dict]:
        """Read each `\r` redraw of `text` (no launcher prefix) as a line of its own; one that a
        parser fails on is counted as garbage, as `feed` counts a line."""
        out: list = []
        try:
            self._read_redraws(text, rank, out)
        finally:
            LIMIT.timeout = TIMEOUT
        return out

    def _read_redraws(self, text: str, rank, out: list) -> None:
        stats = self.stats
        pos, end = 0, len(text)
        while pos < end:
            cr = text.find("\r", pos)
            if cr < 0:
                cr = end
            seg = text[pos:cr].rstrip("\x08")      # the backspaces before a `\r` erase nothing
            pos = cr + 1
            if not seg:
                continue
            if len(seg) > MAX_LINE:
                seg = seg[:MAX_LINE]
                stats["truncated"] += 1
            LIMIT.timeout = None if len(seg) <= SHORT_LINE else TIMEOUT
            try:
                cleaned = seg if seg.isprintable() else _without_codes(seg)
                if cleaned is None:
                    stats["garbage"] += 1
                    continue
                recs = self._line(cleaned, rank)
            except TimeoutError:
                stats["timeouts"] += 1
                stats["garbage"] += 1
                continue
            except Exception:  # noqa: BLE001 - a parser's bug must not stop the stream
                stats["garbage"] += 1
                continue
            if recs:
                stats["records"] += len(recs)
                out.extend(recs)

    def feed_redraws(self, data: bytes) -> list[dict]:
        """The `\r` redraws of a line whose newline has not come yet: a bar in a pipe redraws
        itself for a whole epoch before it ends its line.  The log probe gives them as they
        come, so that each step's record comes when its step is drawn, not when the epoch ends;
        `data` ends with a `\r`.  The line's launcher prefix, in its first part, gives the rank
        of the later parts, and the line ends in the next `feed_chunk`, where it is counted.

        While no framework claims the stream, the parts that gave nothing are kept (up to
        MAX_LINE): a framework that a later part names reads them again first, as it would
        the whole line (HF prints its first log dict after its bar's first redraws)."""
        return self._finished(self._feed_redraws(data))

    def _feed_redraws(self, data: bytes) -> list[dict]:
        if self.tee_prefix is not None:
            data = self.tee_prefix.as_default(data)
        if self._srun_line or (self._line_part is None and not self.tee.open and labelled(data)):
            # srun, which passes a labelled line on 1024 bytes at a time, has already held
            # these redraws back: they are read when the line ends, behind any it cut before
            self._srun_line += data
            if len(self._srun_line) <= MAX_LINE:
                return []
            held, self._srun_line = self._srun_line, b""    # no srun line is this long
            return self.feed_chunk(held)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self.stats["garbage"] += 1
            return []
        part = self._line_part
        if part is None:
            if self.tee.open or per_write_prefix(data):
                return self._tee_redraws(data)
            rank = None
            if text and text[0] in _PREFIX_START and _maybe_prefixed(text):
                rank, text = self._split_prefix(text)
            part = self._line_part = (rank, [])
        return self._read_part(text, part)

    def _tee_redraws(self, data: bytes) -> list[dict]:
        """`feed_redraws` where the launcher passes each write on behind the rank's prefix
        (mpirun's `--tag-output`: a bar's redraws, and other ranks' between them): each rank's
        redraws go to its own part of the line, each read with the time it came."""
        out: list = []
        now = CLOCK.now_ns
        try:
            for prefix, redraws, came in self.tee.redraws(data, now):
                try:
                    text = redraws.decode("utf-8")
                except UnicodeDecodeError:
                    self.stats["garbage"] += 1
                    continue
                part = self._tee_line_parts.get(prefix)
                if part is None:
                    rank = None if prefix is None else split_rank_prefix(prefix.decode("ascii"))[0]
                    part = self._tee_line_parts[prefix] = (rank, [])
                CLOCK.now_ns = came
                out += self._read_part(text, part)
        finally:
            CLOCK.now_ns = now
        return out

    def _read_part(self, text: str, part: tuple) -> list[dict]:
        rank, unclaimed = part
        if self.active is None and interesting(text):
            self._claim_redrawn(text)
            if self.active is not None and unclaimed:
                text = "\r".join(unclaimed) + "\r" + text
                unclaimed.clear()
        out = self._redraws(text, rank)
        if self.active is None and not out and sum(map(len, unclaimed)) + len(text) <= MAX_LINE:
            unclaimed.append(text)
        return out

    def _end_line_part(self, data: bytes, part: tuple) -> tuple[list[dict], bytes]:
        """The records of the rest of a line that `feed_redraws` began, which `data` holds up
        to its first newline; and the rest of `data`."""
        self._line_part = None
        nl = data.find(b"\n")
        head, rest = (data, b"") if nl < 0 else (data[:nl], data[nl + 1:])
        self.stats["lines"] += 1
        try:
            text = head.decode("utf-8")
        except UnicodeDecodeError:
            self.stats["garbage"] += 1
            return [], rest
        return (self._read_part(text[:-1] if text.endswith("\r") else text, part) if text else []), rest

    def _end_tee_line(self, data: bytes) -> tuple[list[dict], bytes]:
        """The records of the first line of `data`, read as it comes while parts of ranks'
        lines are held (`--tee`, mpirun), and the rest of `data`.  The line is read as redraws, each
        rank's part of it added to what is held for it, so that a held redraw is read with the
        time it came; its newline ends a redraw as a `\r` would, and the line of the write it
        is in."""
        nl = data.find(b"\n")
        head, rest = (data, b"") if nl < 0 else (data[:nl], data[nl + 1:])
        self.stats["lines"] += 1
        out = self._tee_redraws((head[:-1] if head.endswith(b"\r") else head) + b"\r")
        ended = self.tee.at
        self.tee.end_line()
        self._tee_line_parts.pop(ended, None)
        return out, rest

    def feed_chunk(self, data: str | bytes) -> list[dict]:
        """Feed a block of whole lines at once: the same records and stats as `feed` on each line.

        Lines end with a newline; a last line without one counts as a line too (``b"a\\nb"`` and
        ``b"a\\nb\\n"`` both hold two lines).  In bytes (what the log probe reads), one scan of
        the block finds the lines that some parser might look at (`candidate_lines`); the others
        (most of a log) are counted and skipped without any work per line.  While a multi-line
        record or a traceback is open, every line goes through `feed`.  An exception from one
        line counts that line as garbage and the rest of the chunk goes on."""
        return self._finished(self._feed_chunk(data))

    def _feed_chunk(self, data: str | bytes) -> list[dict]:
        if not data:
            return []
        young = self._age.young(data)
        data = self.labels.block(data, young)
        if (rendezvous.MARK in data) if isinstance(data, str) else (rendezvous.MARK_BYTES in data):
            self._learn_nodes(data)     # before the block's workers' lines are flattened
        part = self._line_part
        if type(data) is not bytes:
            if isinstance(data, str) and part is None and self.tee_prefix is None and self._whole_text(data):
                return self._feed_lines(data)
            data = _as_bytes(data)
        if part is not None:
            first, data = self._end_line_part(data, part)
            return first + self.feed_chunk(data) if data else first
        if self._srun_line:
            data, self._srun_line = self._srun_line + data, b""
        if self.srun.held or self.srun.writes or (
                len(data) > PIECE and self._srun_mark.look(data, young) and cut_inside(data)) or cut_after_word(data):
            data = self.srun.join(data)
            if not data:
                return []
        if self.tee_prefix is not None:
            data = self.tee_prefix.as_default(data)
        teed, mpirun = self._tee_mark.look(data, young), self._mpirun_mark.look(data, young)
        if mpirun and b"]<std" in data:
            data = self.mpirun_tags.plain_bytes(data)
        if teed and (b": [default" in data or (self._nodes_flattened and AGENT_MARK in data)):
            data = self._flatten(data)
        if self.tee.open and CLOCK.now_ns is not None:
            # read as it comes (the log probe): a held part is read with the time it came
            out: list = []
            while data and self.tee.open:
                first, data = self._end_tee_line(data)
                out += first
            return out + self.feed_chunk(data) if data else out
        if self.tee.open or ((teed or mpirun) and split_inside(data)):
            # a file read later, with no times, or no part held: all of it came now
            data = self._join(data)
            return self._feed_block(data) if data else []
        return self._feed_block(data)

    def _flatten(self, data: bytes) -> bytes:
        """srun's label and torchrun's `--tee` prefix as one prefix of the job's rank.  Where
        torchrun's template gives the job's rank itself (`${rank}`), the label adds nothing."""
        if self.tee_prefix is not None and not self.tee_prefix.local:
            return flatten(data, 0)
        if self.nproc_per_node is None:
            self._widest_node = max(self._widest_node, widest_node(data))
        nproc = self.nproc_per_node or self._widest_node
        self._nodes_flattened = nproc > 0
        return flatten(data, nproc, self._node_ranks)

    def _learn_nodes(self, data: str | bytes) -> None:
        """The nodes' ranks that their agents' rendezvous results in `data` give."""
        for node, ranks in rendezvous.results(data if isinstance(data, str) else
                                              bytes(data).decode("utf-8", "replace")):
            if node is not None:
                self._learn_node(node, ranks)

    def _learn_node(self, node: int, ranks: list[int]) -> None:
        """A node's agent's rendezvous result: the job's ranks of its workers (`rendezvous`)."""
        self._node_ranks[node] = ranks
        self._widest_node = max(self._widest_node, len(ranks))

    def _whole_text(self, data: str) -> bool:
        """Is `data` text whose lines need no launcher's pieces put back together (`tee`,
        `srun`), nothing of them held either?  It is then read as text, with no bytes made."""
        return not (self.tee.open or self._srun_line or self.srun.held or self.srun.writes
                    or "[default" in data or "]<std" in data
                    or (len(data) > PIECE and cut_inside(_as_bytes(data)))
                    or (labelled(data) and cut_after_word(_as_bytes(data))))

    def _feed_block(self, data: bytes) -> list[dict]:
        """`feed_chunk` of whole lines, each of one rank."""
        if not self._worth_scanning(data):
            return self._feed_lines(data)
        ends, cands = candidate_lines(data, MAX_LINE)
        total, ncands = len(ends), len(cands)
        if ncands * _DENSE > total * (_DENSE - 1):
            return self._feed_lines(data)
        stats, events, feed = self.stats, self.events, self._feed_line
        out: list = []
        i = k = 0       # next line to account for; next candidate
        while True:
            if events.tb or self._open:
                if i == total:
                    break
                j = i     # state from an earlier line: this line must go through `feed`
            else:
                while k < ncands and cands[k] < i:
                    k += 1
                if k == ncands:
                    break
                j = cands[k]
                stats["lines"] += j - i     # lines i..j-1 hold no keyword
            recs = feed(data[ends[j - 1] + 1 if j else 0:ends[j]])
            if recs:
                out.extend(recs)
            i = j + 1
        stats["lines"] += total - i
        return out

    def _worth_scanning(self, data: bytes) -> bool:
        """Scan blocks of at least SCAN_MIN bytes that do not look dense.  (Tests scan all.)"""
        return len(data) >= SCAN_MIN and not _dense_head(data)

    def _feed_lines(self, data: str | bytes) -> list[dict]:
        """`feed` each line of a non-empty block, in a plain loop.  Bytes are decoded once for
        the block when they are valid UTF-8 (a newline byte never splits a character)."""
        if isinstance(data, str):
            text = data
        else:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                return self._feed_split(data)   # `feed` counts the bad lines as garbage
        if self.FAST:
            return self._feed_text(text)
        return self._feed_split(text)

    def _feed_split(self, data: str | bytes) -> list[dict]:
        lines: list = data.split("\n") if isinstance(data, str) else data.split(b"\n")
        if not lines[-1]:
            lines.pop()
        out: list = []
        feed = self._feed_line
        for line in lines:
            recs = feed(line)
            if recs:
                out.extend(recs)
        return out

    def _feed_text(self, text: str) -> list[dict]:
        """`_feed_split` for decoded text, where the active parser's runs and block readers take
        its common lines in place (`_read_in_place`), and `feed` the others.

        Where the readers keep missing (a stream of lines of other shapes), each miss doubles
        the number of lines handed straight to `feed` before they try again, up to
        _READER_BACKOFF: a try that misses costs more than it would save."""
        out: list = []
        stats, events, feed, seen = self.stats, self.events, self._feed_line, self.seen
        pos, end = 0, len(text)
        skip = backoff = 0
        while pos < end:
            if skip:
                skip -= 1
            elif self._readers and not events.tb and not self._open and not (
                    self._yields and self._yields & seen):
                pos, lines, records = self._read_in_place(text, pos, end, out)
                if lines:
                    backoff = 0
                else:
                    backoff = skip = min(2 * backoff + 1, _READER_BACKOFF)
                # what `feed` does after each line a parser answers
                stats["lines"] += lines
                if records:
                    stats["records"] += records
                    if self.active is not None:     # the generic parser never claims a stream
                        seen.add(self.active.name)
                if pos >= end:
                    break
            nl = text.find("\n", pos)
            if nl < 0:
                nl = end
            line = text[pos:nl]
            pos = nl + 1
            if "NCCL INFO" in line and len(line) <= SHORT_LINE and not (events.tb or self._open) \
                    and line.isprintable() and self._nccl_dropped(line):
                stats["lines"] += 1     # as `feed` drops it, without its checks (~1 us a line)
                continue
            recs = feed(line)
            if recs:
                out.extend(recs)
        return out

    def _nccl_dropped(self, line: str) -> bool:
        """Is this `NCCL INFO` line, printable, with no traceback or multi-line record open,
        one that yields no record: chatter, or a line of a communicator's topology (read here
        into the NCCL parser's state, where NCCL's own `host:pid:tid [dev]` starts it)?  Most
        of a log of NCCL_DEBUG=INFO."""
        if chatter(line):
            return True
        LIMIT.timeout = None if len(line) <= SHORT_LINE else TIMEOUT
        return " NCCL INFO " in line and self.nccl.topology(line)

    def _read_in_place(self, text: str, pos: int, end: int, out: list) -> tuple[int, int, int]:
        """Read the lines of `text` from `pos` on straight from the text, up to the first that
        no run or reader takes, where `feed` would slice each line out, check it, split it and
        call the `fast` hook; appends their records to `out`.  Returns (that line's start, lines
        read, records).

        The runs and readers take only printable ASCII, so such a line passes `feed`'s checks;
        its launcher prefix is split off here, as `feed` would.  They change no state of the
        stream but their parser's: the line that none takes goes to `feed`, and may."""
        readers, runs, last_step = self._readers, self._runs, self.events.last_step
        lines = records = 0
        read_len = self._read_len
        while pos < end:
            run = runs.get(text[pos]) if runs else None
            if run is not None:
                try:
                    after, n, recs = run(text, pos, end)
                except Exception:  # noqa: BLE001 - a run must not raise; if one does, the
                    n = 0          # readers and `feed` take its lines again
                if n:
                    lines += n
                    read_len = after - 1 - text.rfind("\n", pos, after - 1) - 1   # the run's last line
                    if recs:
                        records += len(recs)
                        out += recs
                        for r in reversed(recs):
                            if r["step"] is not None and r["kind"] in ("progress", "timing"):
                                last_step[None] = r["step"]
                                break
                    pos = after
                    continue
            nl = text.find("\n", pos)
            if nl < 0:
                nl = end
            if nl - pos >= READ_LINE:
                break
            start, rank = pos, None
            if text[pos] == "(":
                break           # a Ray prefix: its rank is the stream's state, `feed` reads it
            if text[pos] in _PREFIX_START and _maybe_prefixed(text[pos:pos + 24]):
                rank, rest = split_rank_prefix(text[pos:nl])
                start = nl - len(rest)
            elif (nl - pos) * 2 > read_len * 3 and glued_at(text[pos:nl]):
                break           # two prints run into one line: `feed` cuts them apart
            try:
                for read in readers:
                    recs = read(text, start, nl, rank)
                    if recs is not None:
                        break
                else:
                    break
            except Exception:  # noqa: BLE001 - `feed` takes the line, and counts it
                break
            lines += 1
            read_len = nl - start
            if recs:
                records += len(recs)
                out += recs
                r0 = recs[0]
                if r0["step"] is not None and r0["kind"] in ("progress", "timing"):
                    last_step[rank] = r0["step"]
            pos = nl + 1
        self._read_len = read_len
        return pos, lines, records

    def _split_prefix(self, line: str) -> tuple[int | None, str]:
        """(rank, the rest) of a line behind a launcher's prefix."""
        if line[0] == "(":
            split = self.ray.split(line)
            return split if split is not None else (None, line)
        return split_rank_prefix(line)

    def _line(self, line: str, rank, checked: bool = False) -> list[dict]:
        """The records of one line, its launcher prefix gone (`checked`: `feed` found a keyword
        in it, with no traceback or multi-line record open)."""
        if rank is None and self._line_rank is not None:
            rank = self._line_rank(line)
        if "%|" in line and line[-1:] != "]":
            end = _bar_end(line)
            if end and (self.active is None or line[end:end + 1] != "{"):
                # a bar's redraw, then what was printed before its next one: a message logged to
                # the bar's stream (a checkpoint's, an evaluation's).  (A printed dict, the HF
                # Trainer's, its parser reads with the redraw.)
                return self._line(line[:end], rank) + self._line(line[end:], rank)
        events = self.events
        if line[:1] == "{" and ('"message": "' in line or '"msg": "' in line):
            said = message_of(line)     # a structured logger's line: read as its message
            if said is not None:
                recs = self._line(said, rank)
                if recs or rank in events.tb or (self._open and rank in self._open):
                    return recs         # (or a traceback or a block it began: its next lines go on it)
        out: list = []
        if events.tb and rank in events.tb:
            consumed, recs = events.traceback_line(line, rank, self._fw())
            out.extend(recs)
            if consumed:
                return out
        active, opened = self.active, self._open
        if active is not None and active is not self.generic and opened and rank in opened:
            # a multi-line record in progress (Composer's, Megatron's timer block): the line
            # adds to it, or closes it and then goes on as any other line
            recs = self._accept(active, active.parse(line, rank))
            self._note_step(recs, rank)
            if rank in opened:
                return out + recs
            out.extend(recs)
        elif opened and rank in opened:     # pprint's dict over lines, on the generic parser's stream
            spread = self.generic.spread_line(line, rank)
            if spread is not None:
                self._note_step(spread, rank)
                return out + spread
        if not checked and not interesting(line):
            return out
        if rank is not None and rendezvous.MARK in line:    # a node's agent, behind the node's label
            ranks = rendezvous.ranks_listed(line)
            if ranks is not None:
                self._learn_node(rank, ranks)
        if "NCCL" in line:
            recs = self.nccl.parse(line, rank)
            if recs:
                out.extend(recs)
                return out
            if "NCCL INFO" in line or line.startswith("NCCL version "):   # (its bare version: the NCCL parser's alone)
                return out
        if rank is None and glued_at(line):    # two processes' prints in one line (see `glued`)
            pieces = glued_pieces(line)
            self.stats["glued"] += len(pieces) - 1
            for piece in pieces:
                out.extend(self._line(piece, rank))
            return out
        if mllog.TAG in line[:24]:      # MLPerf's logger, whatever the framework (`mllog`)
            recs = [r for r in mllog.read(line.lstrip(), rank, self._stream_step(rank)) or []
                    if r.get("phase") != "start" or self.generic.first_start(r)]
            self._note_step(recs, rank)
            return out + recs
        # Slurm's own messages (`slurmstepd: task_p_pre_launch: ..`, one a task as a job starts,
        # `srun: Job step aborted: ..`) hold no training progress: only the events parser's
        recs = [] if line[:1] == "s" and line.startswith(SLURMS_OWN) else self._progress(line, rank)
        if recs:
            out.extend(recs)
            self._note_step(recs, rank)
            return out
        if self.active is None:     # a loop's bar that drew a step not given yet: the rank is at it
            drawn = self.generic.loop_bars.drawn_step(rank)
            if drawn is not None and drawn > (events.last_step.get(rank) or 0):
                events.last_step[rank] = drawn
        recs = events.parse(line, rank, self._fw())
        if recs:
            out.extend((self.active or self.generic).place_events(recs, rank))
            for r in recs:      # (a checkpoint's load, then the restart it names)
                if r["kind"] == "restart" and isinstance(r["step"], int):
                    events.resumed_unnumbered.pop(rank, None)
                    for p in self.order:
                        p.note_restart(rank, r["step"])
        return out

    def _place_resumes(self, out: list) -> list:
        """`out` with the restart of a resume that named no step (see `events.LIGHTNING_RESUME`)
        before the first step the rank draws after it: the run resumed after the step before
        that one.  Nothing where that step is the first (a run that starts anew).

        After torchrun's agent said a worker failed, a step no further on than the failed run's
        says that the agent started its workers again (`--max-restarts`), from their start or
        from a checkpoint: a restart of every rank, which is no repeat of the steps printed
        before (their prints are no other ranks').  A step further on is another node's worker
        that has not stopped yet: no restart."""
        resumed = self.events.resumed_unnumbered
        for rank, load in list(resumed.items()):
            after = next((i + 1 for i, r in enumerate(out) if r is load), 0)
            for i in range(after, len(out)):
                r = out[i]
                if r["kind"] == "progress" and isinstance(r["step"], int) and (rank is None or r["rank"] == rank):
                    del resumed[rank]
                    n = len(out)
                    if load["kind"] == "error":
                        if isinstance(load["step"], int) and r["step"] <= load["step"]:
                            out = out[:i] + [record("restart", load["framework"], None, r["step"] - 1,
                                                    message=load["message"], step_from="first_step_after",
                                                    launcher="torchrun")] + out[i:]
                    elif r["step"] > 1:
                        out = out[:i] + [record("restart", load["framework"], load["rank"], r["step"] - 1,
                                                message=load["message"], step_from="first_step_after")] + out[i:]
                    self.stats["records"] += len(out) - n
                    break
        return out

    def _note_step(self, recs: list, rank) -> None:
        """The step a rank is at, for the events of its next lines (a checkpoint, an error).  An
        evaluation that names a later step than the last one trained says the rank reached it
        (nanoGPT evaluates and saves at step N before it prints `iter N`)."""
        r0 = recs[0] if recs else None
        if r0 is None or r0["step"] is None:
            return
        last = self.events.last_step
        kind, step = r0["kind"], r0["step"]
        if kind in ("progress", "timing") or (kind == "eval" and step > (last.get(rank) or 0)):
            last[rank] = step

    def _stream_step(self, rank):
        """The step a rank is at; for an unprefixed line, the furthest any rank reached (MLPerf's
        logger prints bare, its job's ranks behind srun's labels: the ranks of a synchronous job
        move together)."""
        if rank is not None:
            return self.events.step_of(rank)
        return max((s for s in self.events.last_step.values() if isinstance(s, int)), default=None)

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
            if active.owns(line):
                return []
            if self.forced:
                if active.name != "generic":
                    return self.generic.parse(line, rank, bars=False)
                return []
        p = self._claimant(line)
        if p is not None:
            if active is not None and active.name in p.yields_to:
                return []   # its records would yield to the active one's: the stream stays
            self._inherit(p)
            recs = p.parse(line, rank)
            self._switch(p)
            return self._accept(p, recs)
        if active is None or active.name != "generic":
            return self.generic.parse(line, rank, bars=active is None)
        return []

    def flush(self) -> list[dict]:
        held, self._srun_line = self._srun_line, b""
        out = self.feed_chunk(held) if held else []
        out += self._unfinished_lines()
        ends: list = []
        for p in self.order:
            ends.extend(self._accept(p, self._held(p.flush)))
        ends.extend(self._held(lambda: self.events.flush(self._fw())))
        self.stats["records"] += len(ends)
        return self._with_inherited(out + ends)

    def _held(self, flush) -> list[dict]:
        """The records that `flush` gives at the stream's end; none where it fails (counted as
        garbage, as `feed` counts a line): one parser's bug loses what it held, and only that."""
        try:
            return flush()
        except TimeoutError:
            self.stats["timeouts"] += 1
        except Exception:  # noqa: BLE001 - the stream's end must not raise to the probe or `parse`
            self.stats["garbage"] += 1
        return []

    def _unfinished_lines(self) -> list[dict]:
        """The held parts of lines that the stream ended in the middle of, read as lines (of
        lines already counted)."""
        out: list = []
        with Unclocked():   # parts held since some earlier read
            for line in self.tee.drain():
                out.extend(self._feed_line(line))
                self.stats["lines"] -= 1
            for line in self.srun.drain():      # pieces that no line counted yet
                out.extend(self._feed_line(line))
        return out
