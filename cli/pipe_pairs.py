"""One process's stdout and stderr saved to two files, read as the log probe reads its two pipes.

Slurm's `--output`/`--error` (`train-%j.out`, `train-%j.err`) and torchrun's `--log-dir` with
`--redirects 3` (`.../attempt_0/3/stdout.log`, `.../attempt_0/3/stderr.log`) split each process's
pipes into two files.  Some frameworks split what they print the same way: HF's Trainer draws
its bar (no label) and logs its training banner on stderr, and prints its log dicts on stdout.
Read alone, the bar names no framework and the dicts name no step.  Given both files, `parse`
and `ingest` read them as one process's pipes: they share what each shows (`PipeFrameworks`:
the framework, HF's banner), the stderr file first, since what it logs (the banner, the bar)
numbers the stdout file's dicts.  Which of the two times each rank's steps is decided as live
(`probes/step_streams.py`), with both files known (`mark_timed_elsewhere`).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Callable

from ridgescope.cli import overlap
from ridgescope.cli.log_blocks import head_blocks
from ridgescope.parsers import Dispatcher
from ridgescope.parsers.hf import HFTrainerParser
from ridgescope.parsers.hf_epochs import TrainingBanner
from ridgescope.parsers.hf_run_end import RunEnd, read_ahead
from ridgescope.probes.logprobe import PipeFrameworks
from ridgescope.probes.step_streams import carries_step_time

_COMPRESSED = (".gz", ".bz2", ".xz")
_PBS_OUT = re.compile(r"(.+)\.o(\d+(?:\[\d*\])?(?:\.\d+)?)")
"""PBS's and Grid Engine's stdout file, `NAME.oJOBID` (an array job's `.o4242.3`, `.o4242[]`)."""


def stderr_name(name: str) -> str | None:
    """The name of the stderr file that goes with a stdout file's name: `stdout` -> `stderr`
    (the last one: torchrun's `stdout.log`, `train_stdout.txt`), `.out` -> `.err` (Slurm's
    `%j.out`, LSF's), `.oJOBID` -> `.eJOBID` (PBS's and Grid Engine's `train.o4242`), a
    compression suffix kept; None for another name."""
    base, packed = name, ""
    for suffix in _COMPRESSED:
        if name.endswith(suffix):
            base, packed = name[:-len(suffix)], suffix
    at = base.rfind("stdout")
    if at >= 0:
        return base[:at] + "stderr" + base[at + 6:] + packed
    if base.endswith(".out") and len(base) > 4:
        return base[:-4] + ".err" + packed
    m = _PBS_OUT.fullmatch(base)
    if m:
        return f"{m.group(1)}.e{m.group(2)}{packed}"
    return None


@dataclass
class Pipes:
    """A process's two files: what their pumps share."""
    stdout: str
    stderr: str
    frameworks: PipeFrameworks = field(default_factory=PipeFrameworks)


def pair_files(paths: list[str]) -> dict[str, Pipes]:
    """path -> its Pipes, for each file given together with its other pipe's (in one
    directory); a file given twice is paired once at most."""
    where = {os.path.realpath(p): p for p in paths if p != "-"}
    pairs: dict[str, Pipes] = {}
    for path in paths:
        if path == "-" or path in pairs:
            continue
        name = stderr_name(os.path.basename(path))
        if name is None:
            continue
        other = where.get(os.path.realpath(os.path.join(os.path.dirname(path), name)))
        if other is not None and other != path and other not in pairs:
            pairs[path] = pairs[other] = Pipes(path, other)
    return pairs


def reading_order(paths: list[str], pairs: dict[str, Pipes]) -> list[str]:
    """The files in the order given, but each pair once, its stderr file just before its stdout
    file."""
    order: list[str] = []
    read: set[str] = set()
    for path in paths:
        pipes = pairs.get(path)
        if pipes is None:
            order.append(path)
        elif path == pipes.stdout and path not in read:
            read.add(path)
            order += [pipes.stderr, pipes.stdout]
    return order


def tell(pairs: dict[str, Pipes], say: Callable[[str], None]) -> None:
    for path, pipes in pairs.items():
        if path == pipes.stdout:
            say(f"{pipes.stdout} and {pipes.stderr}: one process's stdout and stderr, read "
                f"together (stderr first)")


def framework_shown(path: str, dispatcher: Dispatcher) -> str | None:
    """The first framework that the file's head (`head_blocks`: its first 64 MiB) shows, read
    by `dispatcher` up to where it names one."""
    for block in head_blocks(path):
        dispatcher.feed_chunk(block)
        if dispatcher.framework is not None:
            return dispatcher.framework
    dispatcher.flush()
    return dispatcher.framework


def dispatcher(path: str, pipes: Pipes | None, fresh: Callable[..., Dispatcher]) -> Dispatcher:
    """The Dispatcher that reads `path`: `fresh(path, banner=None)` builds one.  A file of its
    own that holds HF's summary dict gets a training banner that knows how its run ended
    (`_run_end_banner`).  Where the file is one of a process's two, it shares the training
    banner the other logs, and the stderr file is read from its first line as the framework
    the stdout file shows, where that framework draws on stderr what names it on stdout
    (`Dispatcher.adopt`: HF's bar), as the log probe does live."""
    if pipes is None:
        return fresh(path, _run_end_banner(path))
    disp = fresh(path, pipes.frameworks.training_banner)
    if path == pipes.stderr:
        _note_shown(pipes, fresh)
        for name in pipes.frameworks.shown:
            if disp.adopt(name):
                break
    return disp


def _run_end_banner(path: str) -> TrainingBanner | None:
    """For a file of its own that holds HF's summary dict, a training banner that knows how its
    run ended (`hf_run_end`: with no bar and no banner, the summary's runtime and speed number
    the dicts); None for any other, or a file that cannot be read ahead."""
    if path == "-":
        return None
    try:
        ahead = read_ahead(head_blocks(path))
    except OSError:
        return None
    if ahead is None:
        return None
    banner = TrainingBanner()
    banner.run_end = RunEnd(ahead)
    return banner


def _note_shown(pipes: Pipes, fresh: Callable[..., Dispatcher]) -> None:
    """Note the framework the stdout file shows, read ahead by a Dispatcher of its own, and, for
    HF's Trainer, how its run ended (`hf_run_end`: where no banner was logged, with the bar's
    total, it numbers the dicts).  A file that cannot be read shows none here, and gives its
    error where it is read."""
    banner = pipes.frameworks.training_banner
    try:
        shown = framework_shown(pipes.stdout, fresh(pipes.stdout))
        if shown == HFTrainerParser.name and banner is not None:
            ahead = read_ahead(head_blocks(pipes.stdout))
            if ahead is not None:
                banner.run_end = RunEnd(ahead)
    except OSError:
        return
    if shown is not None and shown != "generic" and shown not in pipes.frameworks.shown:
        pipes.frameworks.shown.append(shown)


def steps_by_process(results, pairs: dict[str, Pipes]) -> list[tuple[str, set]]:
    """(name, its (rank, step) pairs) of each file read for `overlap.overlaps`, a process's two
    files as one: both pipes give its steps (the bar's and the log dicts'), which is no clash."""
    out: list[tuple[str, set]] = []
    at: dict[int, int] = {}
    for r in results:
        steps = overlap.rank_steps(r.items)
        pipes = pairs.get(r.path)
        if pipes is None:
            out.append((r.path, steps))
        elif id(pipes) in at:
            out[at[id(pipes)]][1].update(steps)
        else:
            at[id(pipes)] = len(out)
            out.append((f"{pipes.stdout} (with {pipes.stderr})", steps))
    return out


DERIVED_TIMES = ("step_time_from_ts", "step_time_from_elapsed")
"""Step times that `ingest` worked out from when lines were printed, not the framework's own."""


def _steps_by_rank(items) -> dict:
    """rank -> the items of its step records (progress or timing, with a step)."""
    out: dict = {}
    for it in items:
        if it.record.get("kind") in ("progress", "timing") and isinstance(it.record.get("step"), int):
            out.setdefault(it.rank, []).append(it)
    return out


def _own_time(record: dict) -> bool:
    return carries_step_time(record) and not any(record.get(flag) for flag in DERIVED_TIMES)


def mark_timed_elsewhere(results: dict, pairs: dict[str, Pipes]) -> None:
    """For each pair read (`results`: path -> its FileResult), the step records of one file per
    rank make no window (`Item.timed_elsewhere`), as `StepStreams` decides live: a file whose
    records carry the framework's own step time times the rank, else the stderr file (read
    first, as the first to give a step is live); a log dict numbered beside the other pipe's
    bar (`timed_by_bar`) never does."""
    for pipes in {id(p): p for p in pairs.values()}.values():
        files = [_steps_by_rank(results[path].items) for path in (pipes.stderr, pipes.stdout)
                 if path in results]
        if len(files) < 2:
            continue
        for rank in set(files[0]) | set(files[1]):
            steps = [[it for it in by_rank.get(rank, ()) if not it.record.get("timed_by_bar")]
                     for by_rank in files]
            owner = next((i for i, its in enumerate(steps) if any(_own_time(it.record) for it in its)),
                         next((i for i, its in enumerate(steps) if its), 0))
            for i, by_rank in enumerate(files):
                for it in by_rank.get(rank, ()):
                    it.timed_elsewhere = i != owner or bool(it.record.get("timed_by_bar"))
