"""Back-fill old training logs into the store: `ridgescope ingest FILE... --job NAME`.

Each file is parsed as one stream, exactly as the log probe of `ridgescope run` parses a job's
stdout (a process's stdout and stderr files given together as its two pipes: `pipe_pairs`), and
its records travel the same way: `job_start`, one `progress` message per record
(with its rank), and one `job_end` per rank, through the broker to the pipeline, so that the
job's steps are judged and stored like those of a job run under RidgeScope.

Times come from the log where it prints them (ISO 8601 and `[2024-01-02 03:04:05,678]`-style
prefixes, Hugging Face's example scripts' `01/02/2024 03:04:05` and Rich's `[01/02/24 03:04:05]`,
ctime dates, the time of day alone where a log prints no date (`clock_stamps.py`), glog's and absl's
`I1130 18:28:04.930220 ...] `, Detectron2's and PaddleDetection's `[11/30 19:38:55 d2.engine]` and
`stern --timestamps=short`'s `01-10 10:00:03` in the year the file was written, MLPerf `time_ms`, or
else a Unix time printed in the record itself, such as MLPerf BERT's `{'training_steps': 2, ...,
'timestamp': 1593108597.22}`: `log_time_s`). A record on a line without a timestamp is placed after
the last time printed before it, on any line (an `nvidia-smi` header's date, an MLPerf `:::MLLOG`
event), by the step times printed since (`ts_source: estimated`). A log that prints no timestamp at
all gets times synthesised from its cumulative step times, ending at the file's modification time,
and its records say `ts_unknown: true`. When a progress line has a timestamp but no step time, the
step time is the time since the previous progress line of that rank (`step_time_from_ts: true`), if
the timestamps have sub-second precision or the two lines are 20 s apart or more.  A bar's steps
(tqdm's, which print the time elapsed and no step time) are timed so by the elapsed time they draw
(`step_time_from_elapsed: true`).  A log that prints every N steps moves its rank's clock by N step
times from one line to the next.

The job's world size is what the logs print of it (Megatron-LM's `using world size: 64`,
DeepSpeed's `dist_world_size=8`, Lightning's `MEMBER: 1/16`, NCCL's init lines, torchtitan's
device mesh, Megatron-Bridge's batch sizes and parallel layout; see `world_size.py`), or
`--world-size`, or else the ranks the logs show: most frameworks print their steps from one
rank, which is not the job's size.
"""
from __future__ import annotations

import argparse
import calendar
import os
import re
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ridgescope.cli import log_dirs, node_logs, overlap, pipe_pairs, world_size
from ridgescope.cli.clock_stamps import CLOCK_BEFORE_DATE, CLOCK_ONLY, ClockDays, time_of_day
from ridgescope.cli.cmd_parse import (add_prefix_template, note, placed_nodes, prefix_templates, tee_prefix,
                                      workers_per_node)
from ridgescope.cli.log_blocks import (CUT_SHORT, STERN_SHORT, collector_format, collector_of, cut_short,
                                      open_log)
from ridgescope.cli.cmd_run import parse_tags
from ridgescope.cli.common import add_stack_args, settings_from
from ridgescope.parsers import FORMATS, UNLABELLED_BAR, Dispatcher
from ridgescope.parsers.base import NOT_A_FRAMEWORK
from ridgescope.parsers.mindspore import stated_rank
from ridgescope.parsers.template import TeePrefix
from ridgescope.probes.output_files import MPIRUN_RANK_FILE
from ridgescope.probes.print_order import PrintOrder
from ridgescope.probes.publisher import Publisher
from ridgescope.schemas import envelope
from ridgescope.schemas.kinds import TOPIC_FOR_KIND

LOG_TOPIC = TOPIC_FOR_KIND["progress"]
MAX_BACKLOG = 50_000
"""Messages handed to the publisher but not yet delivered; past this, ingest waits."""
HEAD = 200
"""Timestamps are looked for in the first characters of a line only: they are prefixes."""

_ISO = re.compile(r"(?<!\d)(\d{4})[-/](\d\d)[-/](\d\d)[ T,](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?"
                  r"(?:\s?(Z|UTC|[+-]\d\d:?\d\d)(?![\d:]))?(?![\d:])")
# Python logging's `datefmt="%m/%d/%Y %H:%M:%S"`, which Hugging Face's example scripts (and the
# many trainers that copy them) set: `12/06/2024 10:00:00 - INFO - __main__ - ...`, and Rich's
# logging handler's `[%x %X]`, `[12/06/26 10:00:00]` (a year of two digits: this century's).
# Month first, as they write it, unless the first number is no month (`31/01/2024`: the day first).
_SLASH_DATE = re.compile(r"(?<![\d/])(\d\d)/(\d\d)/(\d{4}|\d\d) (\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(?![\d:])")
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug",
                                       "Sep", "Oct", "Nov", "Dec"), start=1)}
_CTIME = re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct"
                    r"|Nov|Dec) {1,2}(\d{1,2}) (\d\d):(\d\d):(\d\d)(?: [A-Z]{3,5})? (\d{4})\b")
_EPOCH_MS = re.compile(r'"time_ms":\s?(\d{13})\b')
# glog's and absl's prefix (JAX and TensorFlow trainers, CLU, MaxText): `I1130 18:28:04.930220
# 139737532708544 logging_writer.py:48] `, a thread's id and the source after the time; no year.
# PyTorch's C++ logger (its NCCL watchdog): `[E901 05:20:03.118859045 ProcessGroupNCCL.cpp:1746] `,
# the month not padded, no thread, the source maybe a path.
_GLOG = re.compile(r"(?<![\w.])[IWEF](\d{1,2})(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{1,9})(?: +\d+)? [\w./-]+:\d+\] ")
# Detectron2's and PaddleDetection's logger prefix: `[11/30 19:38:55 d2.utils.events]: `,
# `[11/30 19:38:55] ppdet.engine INFO: ` (month first, no year, whole seconds)
_MONTH_DAY = re.compile(r"(?<![\w/.:])\[(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d)[\] ]")
# `ts`'s default clock (moreutils), the syslog's: `Dec 03 02:09:56 ` at a line's start, no year
_MONTH_NAME_DAY = re.compile(r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([ 0-3]\d) (\d\d):(\d\d):(\d\d)"
                             r"(?:\.(\d{1,9}))? ")
# `stern --timestamps=short`'s stamp behind its `[NAMESPACE ]POD CONTAINER `: `01-10 10:00:03 `, no year
_STERN_SHORT = re.compile(STERN_SHORT.decode())
_CLOCK = re.compile(r"\d\d:\d\d:\d\d")
"""The time of day that every shape above but `time_ms` prints."""
_DAY_NS = 86_400 * 1_000_000_000
_SECOND_NS = 1_000_000_000
_COARSE_GAP_NS = 20 * _SECOND_NS
"""Two progress lines stamped to the whole second this far apart or more give the steps between
them a time: the stamps' cut (under a second each) is 5% of it at most (fairseq, MMEngine and
Detectron2 stamp whole seconds and print every 20-100 steps)."""
_RANK_IN_NAME = re.compile(r"rank[_-]?(\d{1,6})(?!\d)", re.IGNORECASE)


def line_timestamp(head: str, written_ns: int | None = None) -> tuple[int, bool] | None:
    """(epoch ns, sub-second precision) of the timestamp a line starts with, if any.

    Times without a zone are taken as UTC: an old log rarely says where it ran.  glog's,
    Detectron2's and `stern --timestamps=short`'s prefixes print no year: it is the year of
    `written_ns` (when the log was last written), or the one before where that would put the
    line after it."""
    if "time_ms" in head:
        m = _EPOCH_MS.search(head)
        if m:
            return int(m.group(1)) * 1_000_000, True
    if ":" not in head or _CLOCK.search(head) is None:
        return None     # (each shape below prints one: a line of chatter costs one search, not five)
    m = _ISO.search(head)
    if m:
        y, mo, d, hh, mi, ss, frac, zone = m.groups()
        found = _calendar_time((y, mo, d, hh, mi, ss), frac)
        if found is None or not zone or zone in ("Z", "UTC"):
            return found
        sign = -1 if zone[0] == "+" else 1
        digits = zone[1:].replace(":", "")
        return found[0] + sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60) * 1_000_000_000, found[1]
    if "/" in head:
        m = _SLASH_DATE.search(head)
        if m:
            first, second, y, hh, mi, ss, frac = m.groups()
            mo, d = (second, first) if int(first) > 12 else (first, second)
            return _calendar_time((y if len(y) == 4 else "20" + y, mo, d, hh, mi, ss), frac)
    m = _CTIME.search(head)
    if m:
        mon, d, hh, mi, ss, y = m.groups()
        try:
            secs = calendar.timegm((int(y), _MONTHS[mon], int(d), int(hh), int(mi), int(ss)))
        except (ValueError, OverflowError):
            return None
        return secs * 1_000_000_000, False
    if written_ns is not None and head[:3] in _MONTHS:
        m = _MONTH_NAME_DAY.match(head)
        if m:
            mon, d, hh, mi, ss, frac = m.groups()
            found = _yearless_time((_MONTHS[mon], d, hh, mi, ss, *((frac,) if frac else ())), written_ns)
            return (found[0], bool(frac)) if found else None
    if written_ns is not None and "] " in head:
        m = _GLOG.search(head)
        if m:
            return _yearless_time(m.groups(), written_ns)
    if written_ns is not None and "[" in head:
        m = _MONTH_DAY.search(head)
        if m:
            found = _yearless_time(m.groups(), written_ns)
            return (found[0], False) if found else None
    if written_ns is not None:
        m = _STERN_SHORT.match(head)
        if m:
            found = _yearless_time(m.groups()[1:], written_ns)     # (after stern's prefix)
            return (found[0], False) if found else None
    return None


def _calendar_time(parts: tuple, frac: str | None) -> tuple[int, bool] | None:
    """(epoch ns, sub-second precision) of year, month, day, hours, minutes, seconds as printed,
    in UTC; None where they name no time."""
    y, mo, d, hh, mi, ss = (int(p) for p in parts)
    if not (1 <= mo <= 12 and 1 <= d <= 31 and hh < 24):
        return None
    try:
        secs = calendar.timegm((y, mo, d, hh, mi, ss))
    except (ValueError, OverflowError):
        return None
    return secs * 1_000_000_000 + (int(frac.ljust(9, "0")[:9]) if frac else 0), bool(frac)


def _yearless_time(parts: tuple, written_ns: int) -> tuple[int, bool] | None:
    """month, day, hours, minutes, seconds (and a fraction): in the year of `written_ns`, or
    the one before where that would put them after it."""
    mo, d, hh, mi, ss = (int(p) for p in parts[:5])
    if not (1 <= mo <= 12 and 1 <= d <= 31 and hh < 24):
        return None
    frac_ns = int(parts[5].ljust(9, "0")[:9]) if len(parts) > 5 else 0
    year = time.gmtime(written_ns // 1_000_000_000).tm_year
    for y in (year, year - 1):
        try:
            ns = calendar.timegm((y, mo, d, hh, mi, ss)) * 1_000_000_000 + frac_ns
        except (ValueError, OverflowError):
            return None
        if ns <= written_ns + _DAY_NS:
            return ns, True
    return None


def record_time(rec: dict) -> tuple[int, bool] | None:
    """(epoch ns, sub-second precision) of the Unix time a record printed itself, if any."""
    t = rec.get("log_time_s")
    if not isinstance(t, float):
        return None
    whole = int(t)      # apart: t * 1e9 as a float would lose the last digits
    return whole * 1_000_000_000 + round((t - whole) * 1e9), t != whole


@dataclass
class Item:
    """A record, or with `record` None a clock: a line that printed a time and no record."""
    rank: int
    record: dict | None
    own_ts: int | None
    precise: bool
    stream: str = ""
    ts: int = 0
    source: str = "unknown"
    timed_elsewhere: bool = False
    """The process's other pipe times the rank's steps (`pipe_pairs.mark_timed_elsewhere`): this
    makes no window."""


@dataclass
class FileResult:
    path: str
    lines: int = 0
    records: int = 0
    garbage: int = 0
    timeouts: int = 0
    framework: str | None = None
    items: list = field(default_factory=list)
    timestamps: str = "none"
    world_size: int = 0
    """The job's size as the log printed it (`world_size.py`), or the ranks its launcher's labels
    show, where more; 0 where it printed neither."""


def rank_in_path(path: str) -> int | None:
    """The rank a log's path names: `train_rank3.log`, Open MPI's `mpirun --output-filename DIR`,
    `DIR/1/rank.3/stdout`, or torchrun's `--log-dir` with `--redirects`,
    `LOG_DIR/RUN_ID/attempt_0/3/stdout.log` (its local rank: the job's rank on one node); None
    where it names none."""
    p = Path(path)
    m = _RANK_IN_NAME.search(p.name) or MPIRUN_RANK_FILE.search(p.as_posix())
    if m:
        return int(m.group(1))
    place = log_dirs.torchrun_place(path)
    return place[1] if place else None


def ranks_in_paths(paths: list[str], pattern: str) -> list[int | None]:
    """Each file's rank as `--rank-in-path` finds it in its path: the first group of `pattern`
    (srun's `-o out-%t.log` names its task, the rank, with a bare number that no default can
    tell from a date or a job id).  Raises ValueError for a bad pattern or a path it misses."""
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"--rank-in-path {pattern!r}: {exc}") from None
    if regex.groups < 1:
        raise ValueError(f"--rank-in-path {pattern!r}: no group to read the rank from")
    ranks: list[int | None] = []
    for path in paths:
        m = regex.search(path)
        if m is None or not (m.group(1) or "").isdigit():
            raise ValueError(f"{path}: --rank-in-path {pattern!r} finds no rank in its path")
        ranks.append(int(m.group(1)))
    return ranks


def megatron_prints_last(result: FileResult) -> bool:
    """Are a file's records its job's last rank's?  Megatron-LM prints its iterations, timers and
    validation from its last rank (`print_rank_last`), so where no line of a Megatron log says
    its rank (torchrun or srun passing the lines on unlabelled), its steps are the last rank's,
    once the job's size is known.  Not where any record names its rank (Megatron-DeepSpeed's
    `[Rank 0] step=..` lines): there the log's ranks are not all one."""
    return (result.framework == "megatron" and result.world_size > 1
            and all(it.record.get("rank") is None for it in result.items))


def read_file(path: str, log_format: str | None, prefix: TeePrefix | None = None,
              node: node_logs.NodeLog | None = None, rank: int | None = None,
              pipes: pipe_pairs.Pipes | None = None) -> FileResult:
    """`node`: where the file sits in the job, where it is one node's log (`--node-logs`).
    Records without a launcher prefix belong to `rank` where the caller knows the file's rank
    (`log_dirs.job_ranks`), else to the rank the file's path names, else to the rank that a
    MindSpore worker's line says the cluster gave it (`mindspore.stated_rank`: msrun's
    `worker_N.log`; not where the file says several, as msrun's `--join` output does), else to
    rank 0 (see `megatron_prints_last`, and `spread_repeated_steps` for a log that prints each
    step once per rank).  `pipes`: the file is one of a process's two pipes, read after its
    stderr file."""
    result = FileResult(path)
    layout = world_size.MegatronLayout()

    def fresh(path: str, banner=None) -> Dispatcher:
        return Dispatcher(log_format, workers_per_node(path), prefix, training_banner=banner)
    disp = pipe_pairs.dispatcher(path, pipes, fresh)
    named = rank if rank is not None else rank_in_path(path)
    fallback = (named or 0) if node is None else node.base
    said_ranks: set[int] = set()
    items = result.items
    name = f"ingest:{Path(path).name}"
    collected = collector_of(path)      # (stdin: told by its first line)
    told = path != "-"
    if collected is not None:
        note(f"{path}: {collected.says}")
    stream = sys.stdin.buffer if path == "-" else open_log(path)
    end_ns = time.time_ns() if path == "-" else os.stat(path).st_mtime_ns
    clocks, clocked, dated = ClockDays(end_ns), [], None
    try:
        for raw in stream:
            if not told and raw.strip():
                told, collected = True, collector_format(raw)
                if collected is not None:
                    note(f"{path}: {collected.says}")
            when = None
            if collected is not None and collected.key is not None:     # the collector's JSON
                text, when = collected.text(raw)
                if text is None:
                    continue        # (a Docker line that goes on in the next entry)
                raw = text.encode("utf-8", "surrogateescape")
            stamp, of_day = None, None
            if raw[:1] not in (b"\n", b"") or when:
                head = when or raw[:HEAD].decode("utf-8", "replace")
                stamp = line_timestamp(head, end_ns)
                if stamp is not None and dated is None:
                    dated = stamp[0]    # the first date printed: the clock-only lines ran up to it
                of_day = None if dated is not None else time_of_day(head)
                if of_day is not None:
                    stamp = clocks.place(of_day[0]), of_day[1]
            if collected is not None and collected.key is None:
                raw = collected.block(raw)
                if not raw:
                    continue        # (a CRI part: its line goes on in the next entry)
            if world_size.may_state_it(raw):
                text = raw.decode("utf-8", "replace")
                result.world_size = max(result.world_size, world_size.printed_world_size(text) or 0)
                layout.read(text)
            if node is None and raw[:1] == b"[":
                result.world_size = max(result.world_size, world_size.labelled_ranks(raw))
            if named is None and node is None:
                said = stated_rank(raw)
                if said is not None:
                    said_ranks.add(said)
                    fallback = said if len(said_ranks) == 1 else 0
            recs = disp.feed(raw)
            if node is not None:
                recs = [node_logs.as_job_rank(rec, node) for rec in recs]
            first = len(items)
            for rec in recs:
                rank = rec.get("rank")
                own = stamp or record_time(rec)
                items.append(Item(rank if isinstance(rank, int) and rank >= 0 else fallback,
                                  rec, own[0] if own else None, bool(own and own[1]), name))
            if stamp and not recs:
                add_clock(items, Item(fallback, None, stamp[0], stamp[1], name))
            if of_day is not None:      # (a line with no record: its clock, last in `items`)
                clocked.extend(items[first:] if recs else items[-1:])
        for rec in disp.flush():
            rec = node_logs.as_job_rank(rec, node)
            rank = rec.get("rank")
            items.append(Item(rank if isinstance(rank, int) and rank >= 0 else fallback, rec,
                              None, False, name))
        if cut_short(stream):
            note(f"{path}: {CUT_SHORT}")
        shift = clocks.shift_ns(dated)
        for item in clocked:
            if item.own_ts is not None:
                item.own_ts += shift
        if clocked:
            note(f"{path}: {CLOCK_ONLY if dated is None else CLOCK_BEFORE_DATE}")
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    drawn = disp.unlabelled_bar_steps()
    if drawn and not any(item.record is not None and item.record["kind"] == "progress" for item in items):
        note(f"{path}: {UNLABELLED_BAR.format(drawn=drawn)}")
    stats = disp.stats
    result.lines, result.records = stats["lines"], stats["records"]
    result.garbage, result.timeouts = stats["garbage"], stats["timeouts"]
    # as the log probe names it: the first framework other than the generic fallback and NCCL
    # that gave a record (MMEngine's and timm's lines, say, are read by the generic parser)
    result.framework = disp.framework or next(
        (it.record["framework"] for it in items if it.record is not None
         and it.record.get("framework") not in NOT_A_FRAMEWORK), None)
    if (named is None or node is not None) and result.framework != "megatron":
        spread_repeated_steps(items, fallback, node.workers if node is not None else None)
    result.timestamps = place_in_time(items, end_ns)
    result.items = [it for it in items if it.record is not None]
    result.world_size = max(result.world_size, layout.size(),
                            world_size.from_records(it.record for it in result.items))
    if node is None and named is None and megatron_prints_last(result):
        for it in result.items:
            it.rank = result.world_size - 1
    return result


def spread_repeated_steps(items: list[Item], base: int, workers: int | None = None) -> None:
    """Where a step was printed twice by lines that name no rank, the Kth print of each step goes
    to rank `base + K` (`probes/print_order.py`), and each such progress or timing record says
    `rank_from_print_order`.  Not where that would put a print on a step of a rank that a line
    names (every rank's lines labelled, and their bars not): those would clash.  A line that
    names its rank on other steps (DeepSpeed's `[Rank 0] step=0` before each node's bar) is
    no clash.  `workers`: the ranks of a node's log (`--node-logs`), which more prints than
    that would run past."""
    named = {(it.rank, it.record["step"]) for it in items if it.record is not None
             and it.record.get("kind") == "progress" and it.record.get("rank") is not None}
    order = PrintOrder()
    placed = [(it, k) for it in items if it.record is not None and it.record.get("rank") is None
              for k in (order.place(it.record),) if k is not None]
    if not order.repeated or (workers is not None and max(k for _, k in placed) >= workers):
        return
    moves = [(it, base + k) for it, k in placed]
    if any((rank, it.record["step"]) in named for it, rank in moves):
        return
    for it, rank in moves:
        it.rank = rank
        it.record["rank_from_print_order"] = True


def add_clock(items: list[Item], clock: Item) -> None:
    """Keep the first and the last clock of each run of lines with no record between them: the
    first bounds the records before it, the last anchors those after it."""
    if len(items) >= 2 and items[-1].record is None and items[-2].record is None:
        items[-1] = clock
    else:
        items.append(clock)


def _step_ms(rec: dict | None) -> float:
    if rec is None or rec.get("kind") != "progress":
        return 0.0
    value = rec.get("step_time_ms")
    return float(value) if isinstance(value, (int, float)) and value > 0 else 0.0


def _ran_ms(items: list[Item]) -> list[float]:
    """For each item, how long its rank ran up to it by its record's step time: that time, times
    the steps since the rank's last record that gave one (a log that prints every N steps
    prints the mean of those N, or the last one's time: either way N steps ran)."""
    last: dict[int, int] = {}
    out: list[float] = []
    for it in items:
        ms = _step_ms(it.record)
        step = it.record.get("step") if ms else None
        if isinstance(step, int):
            prev = last.get(it.rank)
            if prev is not None and step > prev:
                ms *= step - prev
            last[it.rank] = step
        out.append(ms)
    return out


def times_from_elapsed(items: list[Item]) -> None:
    """Step times from the time elapsed that a bar prints (tqdm's `[03:45<...]`, in whole
    seconds), for a bar's steps that print no step time of their own: as for whole-second
    timestamps, the mean step between two of a rank's records at least 20 s apart
    (`step_time_from_elapsed`).  A bar that starts again (Lightning's and Ignite's, each epoch)
    starts anew: its time goes back, or its count in the epoch moved on by other than the step.
    Where a run prints its steps more often than that, the steps between get no time of their
    own: the record 20 s on has their mean."""
    since: dict[int, tuple[int, float, object]] = {}
    for it in items:
        rec = it.record
        if rec is None or rec.get("kind") != "progress":
            continue
        step, elapsed, in_epoch = rec.get("step"), rec.get("elapsed_s"), rec.get("iter_in_epoch")
        if not isinstance(step, int) or elapsed.__class__ not in (int, float):
            continue
        prev = since.get(it.rank)
        if prev is None or step <= prev[0] or elapsed < prev[1] or (
                isinstance(in_epoch, int) and isinstance(prev[2], int) and in_epoch - prev[2] != step - prev[0]):
            since[it.rank] = (step, elapsed, in_epoch)
        elif (elapsed - prev[1]) * _SECOND_NS >= _COARSE_GAP_NS:
            if "step_time_ms" not in rec:
                rec["step_time_ms"] = round((elapsed - prev[1]) * 1000 / (step - prev[0]), 3)
                rec["step_time_from_elapsed"] = True
            since[it.rank] = (step, elapsed, in_epoch)


def place_in_time(items: list[Item], end_ns: int) -> str:
    """Give every item a time (see the module's docstring); returns how the file's records were
    timed: 'printed', 'partly printed, the rest estimated', 'estimated from the times other
    lines print' (lines with no record) or 'unknown'."""
    # Step times from printed timestamps, where a progress line has them but no step time.
    last_progress: dict[int, tuple[int, int, bool]] = {}
    for it in items:
        rec = it.record
        if rec is None or rec.get("kind") != "progress" or not isinstance(rec.get("step"), int):
            continue
        if it.own_ts is not None:
            prev = last_progress.get(it.rank)
            if "step_time_ms" not in rec and prev and rec["step"] > prev[0] and it.own_ts > prev[1] and (
                    it.precise and prev[2] or it.own_ts - prev[1] >= _COARSE_GAP_NS):
                rec["step_time_ms"] = round((it.own_ts - prev[1]) / 1e6 / (rec["step"] - prev[0]), 3)
                rec["step_time_from_ts"] = True
            last_progress[it.rank] = (rec["step"], it.own_ts, it.precise)
        else:
            last_progress.pop(it.rank, None)

    times_from_elapsed(items)

    # Each rank's clock runs on its printed step times; printed timestamps anchor the clocks.
    cum: dict[int, int] = {}
    base: dict[int, tuple[int, int]] = {}  # rank -> (anchor generation, its clock at the anchor)
    anchor_ts, gen = None, 0
    pending: list[tuple[Item, int]] = []  # (item, its rank's clock) before the first anchor
    printed = 0
    for it, ran_ms in zip(items, _ran_ms(items)):
        rank = it.rank
        clock = cum.get(rank, 0) + int(ran_ms * 1e6)
        cum[rank] = clock
        if it.own_ts is not None and not it.precise and anchor_ts is not None \
                and it.own_ts <= anchor_ts < it.own_ts + _SECOND_NS:
            # a time to the second that the finer one before it already says (Megatron's
            # straggler report after its iteration's line): no new anchor, which would take
            # the rank's clock back by up to a second
            it.own_ts = None
        if it.own_ts is not None:
            printed += it.record is not None
            if anchor_ts is None:
                for early, early_clock in pending:
                    early.ts = it.own_ts - (cum.get(early.rank, 0) - early_clock)
                    early.source = "estimated"
                pending.clear()
            anchor_ts, gen = it.own_ts, gen + 1
            base[rank] = (gen, clock)
            it.ts, it.source = it.own_ts, "log"
        elif anchor_ts is None:
            pending.append((it, clock))
        else:
            anchor_gen, at = base.get(rank, (None, 0))
            if anchor_gen != gen:
                at = clock - int(ran_ms * 1e6)
                base[rank] = (gen, at)
            it.ts, it.source = anchor_ts + (clock - at), "estimated"
    if pending:  # no timestamp anywhere: the log ends at the file's modification time
        last = max(cum.values(), default=0)
        for it, clock in pending:
            it.ts = end_ns - (last - clock)
            it.source = "unknown"
    # Keep each rank's times strictly increasing, so that its windows are well formed, and so
    # that merging the files by time keeps each rank's records in the order it printed them.  A
    # printed time earlier than the rank's last is read as no time (a clock stepped back, a
    # coarser stamp): the rank's own order is the truth.
    latest: dict[int, int] = {}
    records = 0
    for it in items:
        if it.record is None:
            continue
        records += 1
        prev = latest.get(it.rank)
        if prev is not None and (it.ts < prev or (it.ts == prev and it.source != "log")):
            it.ts, it.source = prev + 1000, "estimated"
        latest[it.rank] = max(it.ts, prev or it.ts)
        it.record["ts_source"] = it.source
        if it.source == "unknown":
            it.record["ts_unknown"] = True
    if not records:
        return "none"
    if printed == records:
        return "printed"
    if anchor_ts is None:
        return "unknown"
    if printed:
        return "partly printed, the rest estimated"
    return "estimated from the times other lines print"


def _exit_code(items: list[Item]) -> int:
    for it in items:
        code = it.record.get("exitcode")
        if it.record.get("kind") == "error" and isinstance(code, int) and code != 0:
            return code
    return 0


def register(parser: argparse.ArgumentParser) -> None:
    add_stack_args(parser)
    parser.add_argument("files", nargs="+", metavar="FILE", help="log file(s); '-' reads stdin")
    parser.add_argument("--job", required=True, help="the job name the records are stored under")
    parser.add_argument("--tag", action="append", default=[], metavar="KEY=VALUE",
                        help="a tag stored with the job; repeatable")
    parser.add_argument("--log-format", choices=sorted(FORMATS), default=None,
                        help="force one parser instead of auto-detection (tqdm: a loop whose bar has no label)")
    parser.add_argument("--world-size", type=int, default=0,
                        help="ranks of the job (default: as the logs print it, else the ranks "
                             "found in them)")
    parser.add_argument("--host", default="",
                        help="host name stored with the records (default: none)")
    parser.add_argument("--rank-in-path", default=None, metavar="REGEX",
                        help="each FILE is one rank's log, its rank the first group of REGEX in "
                             "its path: srun -o 'out-%%t.log' gives 'out-(\\d+)\\.log' "
                             "(default: a path's 'rank3', or torchrun --log-dir's place)")
    add_prefix_template(parser)
    node_logs.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    try:
        tags = parse_tags(args.tag)
        settings = settings_from(args)
    except ValueError as exc:
        print(f"ridgescope ingest: {exc}", file=sys.stderr)
        return 2
    if args.node_logs and args.rank_in_path:
        print("ridgescope ingest: --node-logs and --rank-in-path: a file is a node's log or a "
              "rank's, not both", file=sys.stderr)
        return 2
    results = []
    templates = prefix_templates(args, note)
    nodes = placed_nodes(args, "ingest", templates)
    if isinstance(nodes, int):
        return nodes
    try:
        ranks = [None] * len(args.files) if args.node_logs else ranks_in_paths(
            args.files, args.rank_in_path) if args.rank_in_path else log_dirs.job_ranks(
            args.files, args.nproc_per_node, note)
    except ValueError as exc:
        print(f"ridgescope ingest: {exc}", file=sys.stderr)
        return 2
    placed = {path: (node, template, rank)
              for path, node, template, rank in zip(args.files, nodes, templates, ranks)}
    pairs = pipe_pairs.pair_files(args.files)
    pipe_pairs.tell(pairs, note)
    for path in pipe_pairs.reading_order(args.files, pairs):
        node, template, rank = placed[path]
        try:
            results.append(read_file(path, args.log_format, tee_prefix(template), node, rank,
                                     pairs.get(path)))
        except OSError as exc:
            print(f"ridgescope ingest: {path}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    pipe_pairs.mark_timed_elsewhere({r.path: r for r in results}, pairs)
    for r in results:
        print(f"[ridgescope] {r.path}: {r.lines} lines, {r.records} records, {r.garbage} garbage "
              f"({r.timeouts} timeouts); framework {r.framework or 'none'}; timestamps "
              f"{r.timestamps}", file=sys.stderr)
        untimed = untimed_steps(r)
        if untimed:
            note(f"{r.path}: {untimed}")
    if not args.node_logs:
        for warning in overlap.overlaps(pipe_pairs.steps_by_process(results, pairs)):
            note(f"warning: {warning}")
    items = sorted((it for r in results for it in r.items), key=lambda it: it.ts)
    if not items:
        print(f"ridgescope ingest: no records in {', '.join(args.files)}: nothing sent",
              file=sys.stderr)
        return 1
    return publish(args, settings, tags, results, items)


def untimed_steps(result: FileResult) -> str | None:
    """Why none of a log's steps will show in `steps` and `explain`, where that is so: its lines
    print no step time, and no timestamps (or none fine enough) to time them by.  Its records are
    stored all the same: a user who finds no steps should not have to guess why."""
    steps = [it.record for it in result.items if it.record is not None
             and it.record.get("kind") in ("progress", "timing") and isinstance(it.record.get("step"), int)]
    if not steps or any(rec.get("step_time_ms") for rec in steps) or any(
            it.timed_elsewhere for it in result.items):     # (its process's other pipe times them)
        return None
    why = ("the log no timestamps to time them by" if result.timestamps == "unknown" else
           "the log's timestamps are too coarse or too few to time them by (whole seconds time steps 20 s apart)")
    return (f"its {len(steps)} step records print no step time, and {why}: they are stored (the "
            "progress table), but `steps` and `explain` will show none of its steps")


def publish(args, settings, tags: dict, results: list[FileResult], items: list[Item]) -> int:
    job, host = args.job, args.host
    ranks = sorted({it.rank for it in items})
    world = args.world_size or max([len(ranks)] + [r.world_size for r in results])
    cmd = ["ridgescope", "ingest", *args.files]
    framework = next((r.framework for r in results if r.framework), "")
    started, ended = items[0].ts, items[-1].ts
    data_dir = Path(settings.data_dir)
    publisher = Publisher(settings.broker or None,
                          spool_path=data_dir / "spool" / f"{socket.gethostname()}.spool").start()
    seq = iter(range(1, 1 << 62))

    def backlog() -> int:
        st = publisher.stats
        return st.published - st.delivered - st.dropped

    def send(kind: str, rank: int, payload: dict, ts_ns: int) -> None:
        if backlog() > MAX_BACKLOG:  # a long log: let the publisher catch up, unless it is stuck
            delivered, stalled = publisher.stats.delivered, time.monotonic() + 30
            while backlog() > MAX_BACKLOG // 2 and time.monotonic() < stalled:
                time.sleep(0.05)
                if publisher.stats.delivered != delivered:
                    delivered, stalled = publisher.stats.delivered, time.monotonic() + 30
        data = envelope.encode(envelope.make(kind, job, rank, host, ts_ns, next(seq), payload))
        # job_end travels on the log topic, behind the rank's records, so it is read after them.
        topic = LOG_TOPIC if kind == "job_end" else TOPIC_FOR_KIND[kind]
        publisher.publish(topic, f"{job}/{rank}".encode(), data)

    send("job_start", -1, {"world_size": world, "cmd": cmd, "tags": tags,
                           "framework": framework}, started)
    for it in items:
        payload = {"record": it.record, "stream": it.stream, "world_size": world}
        if it.timed_elsewhere:
            payload["timed_elsewhere"] = True
        send("progress", it.rank, payload, it.ts)
    code = _exit_code(items)
    # every rank of the job ended, those that printed nothing too: the pipeline judges the last
    # steps when it has heard the end of all the ranks it expects
    for rank in sorted(set(ranks) | set(range(world))):
        send("job_end", rank, {"exit_code": code, "world_size": world, "cmd": cmd, "tags": tags,
                               "started_ns": started, "framework": framework}, ended)
    stats = publisher.close(max(10.0, len(items) / 2000))
    lines = sum(r.lines for r in results)
    garbage = sum(r.garbage for r in results)
    report = (f"[ridgescope] job {job}: {len(items)} records from {lines} lines ({garbage} garbage) "
              f"of {len(ranks)} rank(s) of {world}; delivered {stats.delivered}")
    if stats.undelivered:
        report += (f"; NOT delivered: {stats.undelivered} ({stats.spooled} spooled for the next "
                   f"run, {stats.dropped} dropped): {stats.last_error}")
    print(report, file=sys.stderr, flush=True)
    retention_days = int(os.environ.get("RIDGESCOPE_RAW_RETENTION_DAYS", "30") or 30)
    if time.time_ns() - started > retention_days * 86400 * 1_000_000_000:
        print(f"[ridgescope] note: this log starts {(time.time_ns() - started) // 86_400_000_000_000}"
              f" days ago, before the store's raw retention ({retention_days} days): its "
              f"progress rows will be dropped by the store's TTL; steps, step_rank and jobs "
              f"rows are kept for the derived retention", file=sys.stderr)
    return 1 if stats.undelivered else 0

