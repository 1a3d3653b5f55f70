"""Log probe: passes a child's stdout/stderr through unchanged and parses it on the side.

Bytes are written to our own stream as soon as they are read, before any parsing, so the
user sees exactly what the job printed, when it printed it.  The complete lines of what was
read then go, as one block, to one parser dispatcher per stream, which maps launcher prefixes
to ranks; so do the `\r` redraws of a line not ended yet (a progress bar), as they come, with
the time they were read: a bar's records say when each step was first drawn.
"""
from __future__ import annotations

import os
import select
import threading
import time
from typing import TYPE_CHECKING

from ridgescope.probes.print_order import FirstPrints, PrintOrder
from ridgescope.probes.ranks import LocalRanks, tee_prefixed

if TYPE_CHECKING:
    from ridgescope.parsers.template import TeePrefix

MAX_LINE = 1 << 20
GUESS_LINES = 32
GUESS_WAIT_S = 1.0
"""The first lines of a stream held back to guess a torchrun prefix from (see HeldHead), and
for at most how long."""


def cut_pending(pending: bytes) -> tuple[bytes, bytes, bytes]:
    """What of the bytes read so far can be parsed now: (the whole lines, the `\r` redraws of
    the line after them, the rest, kept for the next read).  A bar in a pipe ends its line only
    when its epoch ends: its redraws are parsed as they come.  A `\r` that ends `pending` is
    kept back, since a `\n` may follow it (CRLF)."""
    cut = pending.rfind(b"\n") + 1
    lines, pending = pending[:cut], pending[cut:]
    redraw = pending.rfind(b"\r", 0, len(pending) - 1) + 1
    return lines, pending[:redraw], pending[redraw:]


def _parsers_clock():
    """The parsers' per-thread read time (`ridgescope.parsers.base.CLOCK`); None without them."""
    try:
        from ridgescope.parsers.base import CLOCK
        return CLOCK
    except Exception:  # noqa: BLE001 - without parsers the output still passes through
        return None


def held_part_apart(pending: bytes, chunk: bytes) -> list[bytes]:
    """`chunk` cut after the `\r` or newline that ends what was held back (`pending`, read
    earlier), and one byte more after a `\r` (cut_pending keeps back a last `\r`): the held
    redraw is read with the time it came, the rest with the time of this read."""
    if not pending:
        return [chunk]
    ends = [i for i in (chunk.find(b"\r"), chunk.find(b"\n")) if i >= 0]
    if not ends:
        return [chunk]
    end = min(ends)
    cut = end + (2 if chunk[end:end + 1] == b"\r" else 1)
    return [chunk[:cut], chunk[cut:]] if cut < len(chunk) else [chunk]


def cut_read(pending: bytes, since: int, chunk: bytes, now_ns: int
             ) -> tuple[list[tuple[int, bytes, bytes]], bytes, int]:
    """What one read (`chunk`, at `now_ns`) makes parseable: (when it was drawn, whole lines,
    redraws) for what was held back before (read at `since`) and for the rest; and what is
    held back now, and when its first byte was read.  A bar's last redraw is held back until
    the next one begins, and was drawn when it came, not when the next one did."""
    parts = []
    for part in held_part_apart(pending, chunk):
        if not pending:
            since = now_ns
        lines, redraws, pending = cut_pending(pending + part)
        if lines or redraws:
            parts.append((since, lines, redraws))
            since = now_ns
    return parts, pending, since


class HeldHead:
    """The start of a stream whose torchrun prefix the command line did not tell (torchrun
    started by a wrapper script, `run -- bash train.sh`): its first GUESS_LINES lines, or what
    came in its first GUESS_WAIT_S, are held back from the parsers while the prefix is guessed
    from them as `parse` guesses it from a file's head (parsers/template.py).  Each part keeps
    the time it was read."""

    def __init__(self) -> None:
        self.parts: list[tuple[int, bytes, bytes]] = []
        self.lines = 0
        self.since: float | None = None

    def hold(self, part: tuple[int, bytes, bytes]) -> bool:
        """Keep `part` (when read, lines, redraws); True once enough is held to guess."""
        if self.since is None:
            self.since = time.monotonic()
        self.parts.append(part)
        self.lines += part[1].count(b"\n")
        return self.lines >= GUESS_LINES

    def wait_s(self) -> float | None:
        """How much longer to hold what is held (None: nothing is)."""
        return None if self.since is None else max(0.0, self.since + GUESS_WAIT_S - time.monotonic())

    def template(self) -> str | None:
        try:
            from ridgescope.parsers.template import guess
            return guess(b"".join(lines for _, lines, _ in self.parts))
        except Exception:  # noqa: BLE001 - without a guess the stream is read as it is
            return None


def _not_a_framework() -> frozenset:
    from ridgescope.parsers.base import NOT_A_FRAMEWORK    # (the parsers load with the first pump)
    return NOT_A_FRAMEWORK


class PipeFrameworks:
    """The frameworks that one process's pipes showed, shared by its two pumps: a pipe that
    shows none may be read as one the other showed (`Dispatcher.adopt`; HF's Trainer prints its
    log dicts on stdout and draws its bar, which names nothing, on stderr); and what one pipe
    tells of the other's steps."""

    def __init__(self) -> None:
        self.shown: list[str] = []
        self.steps: dict[int, int] = {}
        """Each rank's latest step that a pipe gave: the step of an error that the other pipe
        tells with none (a traceback logged on stderr, the steps printed on stdout)."""
        self.agent_failures: list[dict] = []
        """torchrun's agent's word that a worker failed, logged on one pipe (stderr): the
        workers it may start again print their steps on the other, whose steps then restart."""
        self.training_banner = None
        """HF's training banner, logged on stderr, names the steps of the dicts on stdout."""
        try:
            from ridgescope.parsers.hf_epochs import TrainingBanner
            self.training_banner = TrainingBanner()
        except Exception:  # noqa: BLE001 - without it, the dicts of a run with no bar name no step
            pass

    def step_of(self, rank: int) -> int | None:
        """The latest step of `rank` that a pipe gave; of the furthest rank for an unplaced one."""
        if rank >= 0:
            return self.steps.get(rank)
        return max(self.steps.values(), default=None)


class StreamPump:
    """One stream of the job: passed through, parsed, its records handed to `on_record(rank,
    payload, ts_ns)`.  `local_ranks` (see ranks.py) gives the job's rank of a local one, once
    the stream shows torchrun's `--tee` prefixes; `nproc_per_node`, torchrun's, the job's ranks
    of the lines of `srun --label torchrun --tee` (see parsers/srun.py); `tee_prefix`, the
    prefix torchrun's `--role` or template gives, where not its default (parsers/template.py);
    `log_format`, the parser the user named (`run --log-format`), where not auto-detected."""

    def __init__(self, fd: int, out, stream: str, on_record, default_rank: int,
                 local_ranks: LocalRanks | None = None, nproc_per_node: int | None = None,
                 tee_prefix: TeePrefix | None = None, pipes: PipeFrameworks | None = None,
                 log_format: str | None = None):
        self.fd, self.out, self.stream = fd, out, stream
        self.log_format = log_format
        self.pipes = pipes
        self.on_record = on_record
        self.default_rank = default_rank
        self.local_ranks = local_ranks
        self.tee_prefix = tee_prefix
        self.tee_prefixed = False
        """Has a line begun with torchrun's prefix of a local rank (`[defaultN]:`, or
        `tee_prefix`'s): are the ranks the parsers give local ranks?"""
        self._drawn_ns: int | None = None
        """When the lines being parsed were read (None: at the stream's end, not live)."""
        self.lines = 0
        self.parse_errors = 0
        self.progress_records = 0
        self.framework = ""
        """The first framework other than the generic fallback that the parsers recognised."""
        self.nproc_per_node = nproc_per_node
        self.print_order = PrintOrder()
        self._spreads = True
        """False once a step was printed more times than the node has workers."""
        self._failures_seen = 0
        self._failure_told: dict | None = None
        """The agents' failures read on the other pipe, and the last that this one's parsers hold
        (PipeFrameworks): told once, not back and forth."""
        self._first: FirstPrints | None = FirstPrints() if default_rank < 0 else None
        """The stream's first records, held while it is not known whose prints they are."""
        self.dispatcher = self._dispatcher(tee_prefix)
        self._head = HeldHead() if tee_prefix is None and self.dispatcher is not None else None
        self.guessed = ""
        """The torchrun prefix template guessed from the stream's head, if one was."""
        self._thread = threading.Thread(target=self._run, name=f"ridgescope-{stream}",
                                        daemon=True)

    def start(self) -> "StreamPump":
        self._thread.start()
        return self

    def join(self, timeout_s: float | None = None) -> None:
        self._thread.join(timeout_s)

    def _dispatcher(self, tee_prefix: TeePrefix | None):
        try:
            from ridgescope.parsers import Dispatcher
            return Dispatcher(self.log_format, nproc_per_node=self.nproc_per_node, tee_prefix=tee_prefix,
                              training_banner=self.pipes.training_banner if self.pipes is not None else None)
        except Exception:  # noqa: BLE001 - without parsers the output still passes through
            return None

    def _run(self) -> None:
        clock = _parsers_clock()
        pending = b""
        since = 0
        while True:
            waits = [w for w in (self._head.wait_s() if self._head is not None else None,
                                 self._first.wait_s() if self._first is not None else None)
                     if w is not None]
            if waits and not select.select([self.fd], [], [], min(waits))[0]:
                if self._head is not None and self._head.wait_s() == 0:
                    self._release(clock)    # the head held long enough: nothing more came
                if self._first is not None and self._first.wait_s() == 0:
                    self._send_first(placed=False)     # no step printed twice in HOLD_S
                continue
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            now = time.time_ns()
            self.out.write(chunk)
            self.out.flush()
            parts, pending, since = cut_read(pending, since, chunk, now)
            for part in parts:
                if self._head is None:
                    self._take(clock, part)
                else:
                    self._note_banner(part[1])
                    if self._head.hold(part):
                        self._release(clock)
            if len(pending) > MAX_LINE:
                self._release(clock)
                self._parse(pending, 1)
                pending = b""
        self._release(clock)
        if pending:
            self._parse(pending, 1)
        self._flush()
        self._send_first(placed=False)
        os.close(self.fd)

    def _take(self, clock, part: tuple[int, bytes, bytes]) -> None:
        drawn_ns, lines, redraws = part
        if clock is not None:
            clock.now_ns = drawn_ns     # a bar's step ended when the bar drew it
        self._drawn_ns = drawn_ns
        if lines:
            self._parse(lines, lines.count(b"\n"))
        if redraws:
            self._read("feed_redraws", redraws)
        self._drawn_ns = None

    def _note_banner(self, lines: bytes) -> None:
        """Note HF's training banner in a held head at once: the process's other pipe may print
        the log dicts whose steps it names before this head is released (the Trainer logs it on
        stderr as training starts, and may print its first dict within the second)."""
        banner = self.pipes.training_banner if self.pipes is not None else None
        if banner is None or b" = " not in lines:
            return
        try:
            for line in lines.decode("utf-8", "replace").splitlines():
                banner.read(line)
        except Exception:  # noqa: BLE001 - the parser reads the banner when the head is released
            pass

    def _release(self, clock) -> None:
        """Read the held head with the prefix it shows, if it shows one, and what follows so."""
        head, self._head = self._head, None
        if head is None:
            return
        template = head.template()
        if template is not None:
            from ridgescope.parsers.template import TeePrefix
            self.tee_prefix = TeePrefix(template)
            self.dispatcher = self._dispatcher(self.tee_prefix)
            self.guessed = template
        for part in head.parts:
            self._take(clock, part)

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
        if args and not self.tee_prefixed and self.local_ranks is not None:
            self.tee_prefixed = tee_prefixed(args[0]) if self.tee_prefix is None else (
                self.tee_prefix.local and self.tee_prefix.found(args[0]))
        pipes = self.pipes
        if pipes is not None and pipes.shown and self.dispatcher.active is None:
            for name in pipes.shown:
                if self.dispatcher.adopt(name):
                    break
        if pipes is not None and len(pipes.agent_failures) > self._failures_seen:
            self._failures_seen = len(pipes.agent_failures)
            self._failure_told = self.dispatcher.restart_may_follow(pipes.agent_failures[-1])
        try:
            records = getattr(self.dispatcher, method)(*args)
        except Exception:  # noqa: BLE001 - parsers count garbage; this is the last guard
            self.parse_errors += 1
            return
        if pipes is not None:
            failed = self.dispatcher.pending_restart()
            if failed is not None and failed is not self._failure_told:
                self._failure_told = failed
                pipes.agent_failures.append(failed)
                self._failures_seen = len(pipes.agent_failures)
        self._emit(records)

    def _emit(self, records: list[dict]) -> None:
        """Hand each record on.  A progress record with no step time, read as it was printed,
        says when that was (`drawn_ns`): a loop that prints its step once as the step ends
        (`step 12 loss 2.3`, a JAX loop, say) is timed by its lines, as a bar's redraws are."""
        now, drawn = time.time_ns(), self._drawn_ns
        for record in records:
            rank = record.get("rank")
            placeable = False
            named = record.get("local_rank")    # torchrun's report or its agent's line names it
            if isinstance(named, int) and self.tee_prefixed and self.local_ranks is not None:
                if not isinstance(rank, int):   # (where the line names the job's rank too, it stays)
                    rank = self.local_ranks.job_rank(named)
                    record = dict(record, rank=rank)
            elif not isinstance(rank, int):
                rank, by_order = self._unlabelled_rank(record)
                if by_order:
                    record = dict(record, rank_from_print_order=True)
                    self._send_first(placed=True)
                placeable = record.get("kind") == "progress" and isinstance(record.get("step"), int)
            elif self.tee_prefixed and self.local_ranks is not None:
                rank = self.local_ranks.job_rank(rank)
                record = dict(record, rank=rank, local_rank=record["rank"])
            if drawn is not None and record.get("kind") == "progress" and "drawn_ns" not in record \
                    and "step_time_ms" not in record:
                record = dict(record, drawn_ns=drawn)
            self.progress_records += record.get("kind") == "progress"
            if not self.framework and record.get("framework") not in _not_a_framework():
                self.framework = str(record["framework"])
                if self.pipes is not None:
                    self.pipes.shown.append(self.framework)
            # an error's step, for the user; not a save's or an evaluation's, which the windows
            # place by when they were read (a step given on the other pipe may lag: windows.py)
            if record.get("step") is None and record.get("kind") == "error" and self.pipes is not None:
                step = self.pipes.step_of(rank)
                if step is not None:
                    record = dict(record, step=step, step_from="other_pipe")
            payload = {"record": record, "stream": self.stream}
            if self._first is not None and (self.tee_prefixed or not self._spreads):
                self._send_first(placed=False)     # its lines name their ranks, or spread none
            if self._first is None:
                self._hand_on(rank, payload, now)
            elif self._first.hold(rank, payload, now, placeable):
                self._send_first(placed=False)

    def _send_first(self, placed: bool) -> None:
        """Send the held first records (FirstPrints) and hold no more: `placed`, a step was
        printed twice, and each held progress record of a step, its first print, is the
        order-0 rank's; else they keep their ranks."""
        first, self._first = self._first, None
        for rank, payload, ts_ns, placeable in first.held if first is not None else ():
            if placed and placeable:
                rank = self._order_rank(0)
                payload = dict(payload, record=dict(payload["record"], rank_from_print_order=True))
            self._hand_on(rank, payload, ts_ns)

    def _hand_on(self, rank: int, payload: dict, ts_ns: int) -> None:
        """Hand one record on, noting a step's for the process's other pipe (PipeFrameworks)."""
        step = payload["record"].get("step")
        if self.pipes is not None and payload["record"].get("kind") == "progress" and isinstance(step, int):
            self.pipes.steps[rank] = step
        self.on_record(rank, payload, ts_ns)

    def _unlabelled_rank(self, record: dict) -> tuple[int, bool]:
        """(rank, whether it is a print order) of a record no prefix names the rank of: the
        stream's default rank, or, once a step has been printed twice in a stream of no torchrun
        prefix (every rank prints, and nothing labels the lines), the rank of its order among
        its step's prints (print_order.py): the Kth print is taken as local rank K's, a rank of
        this node's.  Not in a stream that printed a step more times than torchrun's flags say
        the node has workers: there the prints are not each a worker's."""
        if self.tee_prefixed or not self._spreads:
            return self.default_rank, False
        order = self.print_order.place(record)
        if order is not None and self.nproc_per_node is not None and order >= self.nproc_per_node:
            self._spreads = False
        if not self._spreads or not self.print_order.repeated or order is None:
            return self.default_rank, False
        return self._order_rank(order), True

    def _order_rank(self, order: int) -> int:
        """The rank of the Kth print of a step: local rank K of this node."""
        if self.local_ranks is not None:
            return self.local_ranks.job_rank(order)
        return max(self.default_rank, 0) + order

    @property
    def garbage(self) -> int:
        stats = getattr(self.dispatcher, "stats", None) or {}
        return int(stats.get("garbage", 0)) + self.parse_errors

    @property
    def unlabelled_bar_steps(self) -> int:
        """The furthest count of a bar with no label that gave no record (`Dispatcher`'s)."""
        try:
            return int(self.dispatcher.unlabelled_bar_steps()) if self.dispatcher is not None else 0
        except Exception:  # noqa: BLE001 - a hint only
            return 0

    @property
    def glued(self) -> int:
        """Lines that held several ranks' prints run together (cut apart: parsers/glued.py)."""
        stats = getattr(self.dispatcher, "stats", None) or {}
        return int(stats.get("glued", 0))
