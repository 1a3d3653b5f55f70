"""Shared helpers for the log parsers: records, numbers, units, timers -> lanes, tqdm bars."""
from __future__ import annotations

import re
import threading

import regex

# Every pattern of a parser is a `Pattern`, which matches under LIMIT.timeout: this many
# seconds on long lines (a TimeoutError counts as garbage), none on short ones.
TIMEOUT = 0.02
SHORT_LINE = 512
"""Lines up to this long are matched with no time-out (see LIMIT)."""


class _Limit(threading.local):
    """The regex time-out of the line being parsed, per thread (each stream has its own).

    Every pattern is possessive or bounded, so a short line cannot make one backtrack for long;
    the time-out guards the long lines.  Passing ``timeout=`` to `regex` costs ~4 us a call, more
    than the match itself, so the dispatcher turns it off for short lines (``None``)."""
    timeout: float | None = TIMEOUT


LIMIT = _Limit()


class _Clock(threading.local):
    """When the text being parsed was read, per thread: the log probe sets it for each read; a
    file read later has none.  A bar's record then carries when its step was first drawn, which
    is when the step ended: a bar that prints no step time still times its steps."""
    now_ns: int | None = None


CLOCK = _Clock()


class Unclocked:
    """`with Unclocked():` parses with no clock, and sets the clock back after."""

    def __enter__(self) -> None:
        self.saved = CLOCK.now_ns
        CLOCK.now_ns = None

    def __exit__(self, *exc: object) -> None:
        CLOCK.now_ns = self.saved


def _ascii_digits(pattern: str) -> str:
    """`pattern` with `\\d` as `[0-9]` (`0-9` within a set): a log's numbers are ASCII, and
    `int()` cannot read every digit that `regex`'s Unicode `\\d` takes (Unicode 16's Gurung
    Khema digits, say, which Python 3.11's tables predate)."""
    out: list[str] = []
    in_set, i, n = False, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            pair = pattern[i:i + 2]
            out.append(("0-9" if in_set else "[0-9]") if pair == "\\d" else pair)
            i += 2
            continue
        if c == "[" and not in_set:
            in_set = True
            out.append(c)
            i += 1
            for literal in ("^", "]"):          # `[^]...]`, `[]...]`: a literal `]` first
                if pattern[i:i + 1] == literal:
                    out.append(literal)
                    i += 1
            continue
        if c == "]" and in_set:
            in_set = False
        out.append(c)
        i += 1
    return "".join(out)


class Pattern:
    """One pattern, two engines.  A short ASCII line (no time-out set, see LIMIT) is matched by
    the stdlib `re` twin, compiled with re.ASCII; any other text by `regex`, under the time-out.

    Why: on short lines `re` runs these patterns 1.5-3x faster than `regex` (measured: 0.44 vs
    1.39 us for the meter head, 4.2 vs 10.8 us for the `key=value` scan), and the two agree
    there: on ASCII text, `regex`'s Unicode classes (\\d, \\w, \\s, \\b, case folding) take
    the same characters as `re`'s ASCII ones (tests compare both on the corpus and on
    generated text).  Long lines and non-ASCII text keep `regex` and its time-out; its `\\d`
    is ASCII too (`_ascii_digits`), so that a number is read alike whatever else the line holds."""

    __slots__ = ("pattern", "_re", "_regex")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._re = re.compile(pattern, flags | re.ASCII)
        self._regex = regex.compile(_ascii_digits(pattern), flags)

    def search(self, text: str, pos: int = 0):
        timeout = LIMIT.timeout
        if timeout is None and text.isascii():
            return self._re.search(text, pos)
        return self._regex.search(text, pos, timeout=timeout)

    def match(self, text: str, pos: int = 0):
        timeout = LIMIT.timeout
        if timeout is None and text.isascii():
            return self._re.match(text, pos)
        return self._regex.match(text, pos, timeout=timeout)

    def fullmatch(self, text: str):
        timeout = LIMIT.timeout
        if timeout is None and text.isascii():
            return self._re.fullmatch(text)
        return self._regex.fullmatch(text, timeout=timeout)

    def finditer(self, text: str):
        timeout = LIMIT.timeout
        if timeout is None and text.isascii():
            return self._re.finditer(text)
        return self._regex.finditer(text, timeout=timeout)

    def sub(self, repl: str, text: str) -> str:
        timeout = LIMIT.timeout
        if timeout is None and text.isascii():
            return self._re.sub(repl, text)
        return self._regex.sub(repl, text, timeout=timeout)


# A logger's bracketed source location (`[train.py:88]`, `[examples/vit:445:train_fn]`,
# `[torch_checkpoint_engine.py:33:commit]`): where the line was logged, not what it says.
SOURCE_LOCATION = Pattern(r"\[[\w-]{0,200}+[./][\w./-]{0,200}+:\d++(?::\w{1,200}+)?\]")


NOT_A_FRAMEWORK = frozenset({None, "", "generic", "nccl"})
"""Records' `framework`s that name no training framework: the generic fallback's, and NCCL's
(the library a job's first lines come from with NCCL_DEBUG=INFO, before its framework's)."""

READ_LINE = 2048
"""Block readers and runs (see `Parser`) take lines shorter than this; `feed` the others."""

# Lines are cut to this many characters before any pattern sees them.
MAX_LINE = 16384

ANSI = regex.compile(r"\x1b(?:\[[0-9;?]*+[ -/]*+[@-~]|[()][0-9A-Za-z]|[=>78DEHM])")
CONTROL = regex.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
BACKSPACES = regex.compile(r"\x08++(?=\r|\Z)")
printable_ascii = re.compile(r"[ -~]*+").fullmatch
"""(text, start, end): is text[start:end] printable ASCII?  (For the block readers.)"""


def record(kind: str, framework: str, rank: int | None, step: int | None, **fields) -> dict:
    rec = {"kind": kind, "rank": rank, "step": step, "framework": framework}
    for k, v in fields.items():
        if v is not None:
            rec[k] = v
    return rec


OWN_TOTAL = frozenset({"step", "total_steps"})
OWN_EPOCH_COUNTS = frozenset({"step", "epoch", "iter_in_epoch", "iters_per_epoch", "metrics"})
OWN_BAR = frozenset({"total_steps", "elapsed_s", "drawn_ns"})
"""The keys of `parsed` that the parsers set from a line's shape: its step, and a `step N/T`
line's total, an `[epoch] [i/of]` line's counts, a bar's total and clock (a loop's postfix
`total=3` is no step count)."""


def parsed(fields: dict, own: frozenset) -> dict:
    """`fields` read from a line's `key: value` text, less the keys its parser sets from the
    line's shape (`own`): an `epoch: 5` in the text of `Epoch: [1] [ 20/200]` is no second epoch
    (given twice, `record` raised, and the line was lost)."""
    return fields if own.isdisjoint(fields) else {k: v for k, v in fields.items() if k not in own}


def num(text: str | float | None) -> float | None:
    """A printed number ('1,234', '6.0E+00', '97%') as float; None for nan/inf/N/A or junk.
    A number already read (a printed dict's value) passes as itself, if finite."""
    if text is None:
        return None
    try:
        v = float(text)
        if v - v == 0.0:          # finite
            return v
        return None
    except ValueError:
        if not isinstance(text, str):
            return None
    t = text.strip().rstrip("%").replace(",", "")
    if not t or len(t) > 40:
        return None
    try:
        v = float(t)
    except ValueError:
        return None
    if v != v or v in (float("inf"), float("-inf")):
        return None
    return v


def is_decimal(text: str) -> bool:
    """What the patterns' possessive `[\\d.]++` takes as a whole token, in ASCII: a non-empty run of
    digits and dots (the fast paths reject anything else and leave it to the regex path)."""
    return text != "" and text.isascii() and not text.strip("0123456789.")


def is_digits(text: str) -> bool:
    """A non-empty run of ASCII digits (`\\d++` on the ASCII lines the fast paths accept)."""
    return text.isdigit() and text.isascii()


def to_int(text: str | None) -> int | None:
    v = num(text)
    if v is None or v != int(v):
        return None
    return int(v)


_SECONDS = {"ms": 1.0, "msec": 1.0, "s": 1000.0, "sec": 1000.0, "secs": 1000.0, "seconds": 1000.0,
            "second": 1000.0, "us": 0.001, "min": 60000.0, "m": 60000.0, "h": 3600000.0}


def to_ms(value: float | None, unit: str | None, default_unit: str = "s") -> float | None:
    if value is None:
        return None
    factor = _SECONDS.get((unit or default_unit).lower())
    if factor is None:
        return None
    if factor == 1000.0:
        return seconds_to_ms(value)
    return round(value * factor, 6)


_MS_OF: dict[float, float] = {}
"""Seconds -> ms, for the values seen so far (a log prints the same few times again and again)."""


def seconds_to_ms(seconds: float) -> float:
    """`round(seconds * 1000, 6)`, remembered per value: `round` to 6 digits formats the number
    and reads it back (~0.5 us, a tenth of some progress lines' cost).  Zero is not remembered,
    so that -0.0 keeps its sign."""
    ms = _MS_OF.get(seconds)
    if ms is None:
        ms = round(seconds * 1000.0, 6)
        if seconds and len(_MS_OF) < 4096:
            _MS_OF[seconds] = ms
    return ms


# Frameworks print "GB"/"MB" for binary units as often as not; mem_gb follows the printed
# number for G units and treats M units as 1/1024 G.
_MEM = {"kb": 1 / 1048576, "kib": 1 / 1048576, "mb": 1 / 1024, "mib": 1 / 1024, "gb": 1.0,
        "gib": 1.0, "tb": 1024.0, "tib": 1024.0}


def to_gb(value: float | None, unit: str | None, default_unit: str = "gb") -> float | None:
    """Memory in G units as printed (GiB and GB alike)."""
    if value is None:
        return None
    factor = _MEM.get((unit or default_unit).lower())
    if factor is None:
        return None
    return round(value * factor, 6)


# ---------------------------------------------------------------- timers -> lanes
_COMM_WORDS = ("all-reduce", "allreduce", "all_reduce", "all-gather", "allgather", "all_gather",
               "reduce-scatter", "reduce_scatter", "grads-sync", "-send", "-recv", "send-", "recv-",
               "_send", "_recv", "comm", "broadcast")
_INPUT_NAMES = {"batch-generator", "batch_generator", "data", "data-loader", "dataloader",
                "data_loading", "dtd", "get-batch", "batch-gen"}
_CKPT_NAMES = {"save-checkpoint", "load-checkpoint", "save_checkpoint", "load_checkpoint",
               "checkpoint"}


def timers_to_lanes(timers: dict[str, float]) -> dict[str, float]:
    """Map framework timer names (Megatron, DeepSpeed wall_clock_breakdown) onto our lanes.

    Only timers whose meaning is clear contribute, and nested timers are not counted twice:
    Megatron `forward-backward` covers `forward-compute`/`backward-compute`, `batch-generator`
    and `all-grads-sync`, `optimizer` covers `optimizer-*`, DeepSpeed `backward` covers
    `backward_inner` + `backward_allreduce`.
    """
    lanes: dict[str, float] = {}

    def add(lane: str, v: float) -> None:
        lanes[lane] = round(lanes.get(lane, 0.0) + v, 6)

    names = set(timers)
    ds_style = any(n.startswith(("forward_", "backward_", "step_", "fwd", "bwd")) or n in
                   ("forward", "backward", "step", "backward_inner", "backward_allreduce")
                   for n in names)
    for name, v in timers.items():
        n = name.lower()
        if n in _INPUT_NAMES:
            add("input", v)
        elif n in _CKPT_NAMES:
            add("checkpoint", v)
        elif ds_style and n.replace("_microstep", "") in ("forward", "fwd", "step", "backward_inner",
                                                          "bwd_inner"):
            add("compute", v)
        elif ds_style and n.replace("_microstep", "") in ("backward", "bwd"):
            if not any(x.replace("_microstep", "") in ("backward_inner", "bwd_inner") for x in names):
                add("compute", v)
        elif ds_style and n.replace("_microstep", "") in ("backward_allreduce", "bwd_allreduce",
                                                          "optimizer_allgather"):
            add("communication", v)
        elif n == "forward-backward":
            add("compute", v)
        elif n in ("forward-compute", "backward-compute"):
            if "forward-backward" not in names:
                add("compute", v)
        elif n == "optimizer":
            add("compute", v)
        elif n.startswith("optimizer-"):
            if "optimizer" not in names and "comm" not in n and "all-gather" not in n:
                add("compute", v)
        elif n == "all-grads-sync":
            add("communication", v)
        elif any(w in n for w in _COMM_WORDS):
            # Megatron nests per-kind grad sync timers inside `all-grads-sync`: count the outer one
            if "all-grads-sync" in names and n.endswith(("grads-all-reduce", "grads-reduce-scatter")):
                continue
            add("communication", v)
    if "forward-backward" in names and "compute" in lanes:
        # Megatron's schedule, timed as `forward-backward`, fetches each micro-batch inside its
        # forward steps (`batch-generator`) and, since its gradient reduction moved into the
        # schedule's end (2023, `all-grads-sync`), reduces the gradients there too
        inside = sum(timers[n] for n in ("batch-generator", "all-grads-sync") if n in timers)
        lanes["compute"] = round(max(lanes["compute"] - inside, 0.0), 6)
    return lanes



def phase_lanes(timers: dict[str, float], lane_of: dict[str, str]) -> dict[str, float]:
    """The lanes of a step whose phases a framework times one after another (verl's, NeMo RL's,
    slime's): each phase's time in its lane; a phase no lane names (rewards, an engine's wake)
    adds to none."""
    lanes: dict[str, float] = {}
    for phase, ms in timers.items():
        lane = lane_of.get(phase)
        if lane is not None:
            lanes[lane] = round(lanes.get(lane, 0.0) + ms, 6)
    return lanes


def parse_timer_list(text: str) -> dict[str, float]:
    """'forward-compute: 340.72 | backward-compute: 176.25 | ...' -> {name: ms}."""
    timers: dict[str, float] = {}
    for part in text.split("|", 64)[:64]:
        k, sep, val = part.rpartition(":")
        name = k.strip()
        if sep and 0 < len(name) <= 80 and name[0].isalpha():
            v = num(val)
            if v is not None:
                timers[name] = v
    return timers


# ---------------------------------------------------------------- tqdm-style bars
_BAR_TIMES = (r"\[(?P<elapsed>[\d:]{1,12}+)(?:<(?P<remain>[\d:?]{1,12}+))?"
              r"(?:,\s*+(?P<rate>[\d.]{1,20}+)(?P<unit>s/[A-Za-z]{1,16}+|[A-Za-z]{1,16}+/s))?"
              r"(?P<post>[^\]]{0,2000}+)\]?")
"""A bar's tail: `[elapsed<remaining, rate, postfix]`, the same whatever its head draws.  The
rate is in tqdm's `unit` (`it` unless the loop names another: `unit="batch"`), per second, or
seconds per unit where under one a second (`1.52s/it`): a slow step's."""
BAR = Pattern(
    r"(?P<pct>\d{1,3}+)%\|[^|\n]{0,200}+\|\s{0,8}+(?P<n>\d++)/(?P<total>\d++|\?)\s{0,4}+" + _BAR_TIMES)
_POST_ITEM = Pattern(r"\s*+([A-Za-z_][\w/ .-]{0,60}?)=\s*+([^,\]]{1,40}+)")


def hms_to_s(text: str | None) -> float | None:
    if not text or "?" in text:
        return None
    total = 0.0
    try:
        for part in text.split(":"):
            total = total * 60 + int(part)
    except ValueError:
        return None
    return total


NO_TOTAL_BAR = Pattern(r"\|[^|\n]{0,200}+\|\s{0,8}+(?P<n>\d++)/(?P<total>\?)\s{0,4}+" + _BAR_TIMES)
"""A bar drawn with tqdm's `{l_bar}{bar}|` format over an iterable with no length, which has no
percentage: Lightning's `Epoch 0: |          | 8/? [00:01<00:00,  7.92it/s, train_loss=1.14]`."""


NO_CELLS_BAR = Pattern(r"(?P<pct>\d{1,3}+)% (?P<n>\d++)/(?P<total>\d++) " + _BAR_TIMES)
"""A tqdm bar drawn with `ncols=0` (EasyLM's `trange(..., ncols=0)`): its percentage, count and
times with no cells, `train:  75% 3/4 [00:00<00:00, 14.0it/s, loss=1.7]`."""


def parse_bar(segment: str) -> dict | None:
    """Parse one tqdm/Lightning bar redraw; None when the segment is not a bar."""
    if "%|" in segment:
        m = BAR.search(segment)
    elif "/? [" in segment:
        m = NO_TOTAL_BAR.search(segment)
    elif "% " in segment and ("/s" in segment or "s/" in segment):
        m = NO_CELLS_BAR.search(segment)
    else:
        return None
    if not m:
        return None
    total = m.group("total")
    return _bar_of(segment, m, int(total) if total != "?" else None)


def _bar_of(segment: str, m, total: int | None) -> dict:
    """The redraw a bar pattern's match found in `segment`: its count, total, label, times and
    postfix items."""
    bar = {"n": int(m.group("n")), "total": total,
           "desc": segment[:m.start()].strip().rstrip(":").strip(),
           "elapsed_s": hms_to_s(m.group("elapsed")), "end": m.end()}
    rate = num(m.group("rate"))
    if rate:
        bar["it_per_s"] = round(1.0 / rate, 6) if m.group("unit").startswith("s/") else rate
    bar["post"] = postfix_items(m.group("post"))
    return bar


UNSIZED_BAR = Pattern(
    r"(?<![\w.])(?P<n>\d{1,12}+)(?P<name>[A-Za-z]{1,16}+) \[(?P<elapsed>[\d:]{1,12}+),\s{1,8}+"
    r"(?:(?P<rate>[\d.]{1,20}+)|\?)(?P<unit>s/(?P=name)|(?P=name)/s)(?P<post>[^\]]{0,2000}+)\]?")


def unsized_bar_like(text: str) -> bool:
    """Might `text` hold a bar with no total (or one drawn with no cells)?  Its count's unit,
    then ` [` and the time elapsed (`00:10`, `1:02:03`), then a rate.  (Without a regex: an
    MXNet line, `Epoch[0] Batch [0-20]	Speed: 31830.13 samples/sec`, is none.)"""
    if "/s" not in text and "s/" not in text:
        return False
    at = text.find(" [")
    while at >= 0:
        if text[at + 2:at + 3].isdigit() and ":" in text[at + 3:at + 5]:
            return True
        at = text.find(" [", at + 2)
    return False


def parse_unsized_bar(segment: str) -> dict | None:
    """One redraw of a tqdm bar that knows no total (over an iterable with no length: a streaming
    dataset's loader), `train: 45it [00:10,  4.50it/s, loss=2.3]` (or in the loop's own unit:
    `45batch [00:10,  1.52s/batch]`), as `parse_bar` gives a bar, its total None; None when the
    segment is not one, or counts scaled (`unit_scale`: `1.2kit`)."""
    if not unsized_bar_like(segment):
        return None
    m = UNSIZED_BAR.search(segment)
    return None if m is None else _bar_of(segment, m, None)


def postfix_items(text: str) -> dict:
    """A tqdm postfix's `name=value` items (`, loss=2.31, lr=0.1`), the values as printed."""
    post = {}
    for item in text.split(",")[:40]:
        pm = _POST_ITEM.match(item)
        if pm:
            post[pm.group(1).strip()] = pm.group(2).strip()
    return post


# Ultralytics' own bar (8.4 on; before, tqdm's): `  2/5  0G  6.04  4.152  4.327  4  128: 50%
# ━━━━━━────── 1/2 2.4s/it 0.7s<2.4s`, a rate in it/s or s/it (none on the first frame), times in
# seconds below a minute and `m:ss` or `h:mm:ss` above.  Redrawn with `\r` even into a pipe.
ULTRALYTICS_BAR = Pattern(
    r"(?P<pct>\d{1,3}+)% [\u2500-\u257f]{1,60}+ (?P<n>\d++)/(?P<total>\d++) "
    r"(?:(?P<rate>[\d.]{1,20}+)(?P<unit>it/s|s/it))? ?(?P<elapsed>[\d.:]{1,12}+)s?(?:<[\d.:]{1,12}+s?)?$")
ULTRALYTICS_MARKS = ("% \u2501", "% \u2500")
"""What starts the bar's fields: its percentage, then its first cell, filled or not."""


def parse_ultralytics_bar(segment: str) -> dict | None:
    """Parse one redraw of Ultralytics' bar into what `parse_bar` gives for tqdm; None when the
    segment is not one."""
    s = segment.rstrip()
    m = ULTRALYTICS_BAR.search(s)
    if m is None:
        return None
    elapsed = m.group("elapsed")
    bar = {"n": int(m.group("n")), "total": int(m.group("total")),
           "desc": s[:m.start()].strip().rstrip(":").strip(),
           "elapsed_s": hms_to_s(elapsed) if ":" in elapsed else num(elapsed),
           "end": m.end(), "post": {}}
    rate = num(m.group("rate"))
    if rate:
        bar["it_per_s"] = round(1.0 / rate, 6) if m.group("unit").startswith("s/") else rate
    return bar


# Rich progress bars (Lightning's RichProgressBar): `Epoch 2/9  ━━━━╺━━━ 120/500 0:00:31 •
# 0:01:38 3.87it/s v_num: 0 train_loss: 1.234`, colours stripped.  Redrawn with `\r` on a
# terminal; in a pipe Rich prints only the final state, once.  The total is `--` when unknown.
RICH_BAR = Pattern(
    r"(?P<desc>[^\u2500-\u257f]{0,80}+)[\u2500-\u257f ]{1,400}+(?P<n>\d++)/(?P<total>\d++|--)"
    r" (?P<elapsed>[\d:]{1,12}+) \u2022 (?:[-\d:]{1,12}+) (?P<rate>[\d.]{1,20}+)it/s(?P<post>.{0,2000}+)")
RICH_METRIC = Pattern(r"([A-Za-z_][\w/.-]{0,60}+): (\S{1,40}+)")
"""One `name: value` of the metrics column, which may wrap onto lines of its own."""


def parse_rich_bar(segment: str) -> dict | None:
    """Parse one Rich bar redraw into what `parse_bar` gives for tqdm; None when it is not one."""
    if "\u2022" not in segment or "it/s" not in segment:
        return None
    m = RICH_BAR.match(segment.strip())
    if not m:
        return None
    total = m.group("total")
    return {"n": int(m.group("n")), "total": int(total) if total != "--" else None,
            "desc": m.group("desc").strip(), "elapsed_s": hms_to_s(m.group("elapsed")),
            "end": len(segment), "it_per_s": num(m.group("rate")),
            "post": rich_metrics(m.group("post"))}


def rich_metrics(text: str) -> dict:
    return {mm.group(1): mm.group(2) for mm in RICH_METRIC.finditer(text[:2000])}


EVAL_WORDS = ("valid", "Valid", "eval", "Eval", "test", "Test", "Predict", "predict", "Sanity")


class Parser:
    """One framework's line parser. Subclasses set `name` and implement `parse`."""

    name = "base"
    # Records of this parser are dropped once one of these frameworks was seen on the stream
    # (e.g. DeepSpeed's own step line inside a Megatron-DeepSpeed job repeats the iteration).
    yields_to: frozenset = frozenset()
    # Names of methods `(text, start, end, rank) -> records | None` that read the printable-ASCII
    # line text[start:end] of a decoded block in place (its launcher prefix, which gave `rank`,
    # already skipped), and answer exactly what `feed` would for the whole line (its pre-check
    # included), or None to leave the line to `feed`.  `feed_chunk` calls them for the active
    # parser's common lines: a stdlib `re` match (three times faster than `regex` for these,
    # ~0.5 us) reads the numbers in C, where `fast` splits the line in Python.
    readers: tuple = ()
    # (first character, method name) of methods `(text, pos, end) -> (pos, lines, records)` that
    # read, from `pos` on, the run of unprefixed lines of one common shape, all starting with
    # that character (one `re` match a line, up to its newline), and answer for each what the
    # shape's reader would; they stop at the first other line (`(pos, 0, [])` when that is the
    # first), and never raise.  For the shapes that make up most of a stream: no call per line
    # into the reader, and no search for the line's end.  A line that starts with another
    # character costs them nothing.
    runs: tuple = ()
    # The generic parser's readers of shapes that a framework could claim (printed dicts):
    # `(text, start, end, rank, claimed)`, where `claimed(line)` says whether `feed` would give
    # the line to another parser.  Used while no framework is active.
    fallback_readers: tuple = ()
    # Does `detect` read state from the lines it is shown (HF's banner, Keras's `Epoch N/M`)?
    # Then the dispatcher shows it every line it would, even one whose shape it knows that no
    # `detect` claims (`Dispatcher._claimant`).  Every other `detect` only answers, and its
    # answer does not hang on the values of the line's digits.
    detect_reads: bool = False

    def detect(self, line: str) -> bool:
        """A strong sign that the stream is written by this framework."""
        return False

    def parse(self, line: str, rank: int | None) -> list[dict]:
        return []

    def flush(self) -> list[dict]:
        return []

    def owns(self, line: str) -> bool:
        """Is this a line of the framework's own shape that gives no record by design (LitGPT's
        accumulating micro-batches), which no other parser should read instead?"""
        return False

    def note_restart(self, rank, step: int) -> None:
        """A line said that `rank`'s run (re)started at `step` (its restart record), whichever
        parser reads the stream then: one that counts from the run's start (ms-swift's mean
        step since training began) counts from there."""

    def adopt(self) -> bool:
        """Take a stream that shows no framework because the same process's other pipe showed
        this one; True where this framework draws on one pipe what it prints on the other (the
        Trainer's bar on stderr, unlabelled, and its log dicts on stdout)."""
        return False

    def inherit_bars(self, bars: dict) -> list[dict]:
        """Called as this parser claims a stream that no framework had: `bars` holds, per rank,
        the finished redraws and the latest one of the unlabelled bar most like a training's
        (`loopbars.UnlabelledBars.claim`).  A framework whose training bar has no label takes
        it as its own and gives the records of its steps so far."""
        return []

    def take_over(self, before: Parser) -> None:
        """Called as this parser takes the stream from `before`: a framework built on another
        (NeMo on Lightning) keeps what the other has read of the lines they share (a bar's step
        not yet given), so that no step is lost or given twice."""

    def place_events(self, recs: list[dict], rank) -> list[dict]:
        """The event records (see `events.py`) of one line of this parser's stream, given their
        step; a parser that knows a better step than the events' last one may set it here, or
        hold records back until it does (and give them later with its own)."""
        return recs


class BarTracker:
    """Holds the latest redraw of each bar and emits it once the bar moves past that step."""

    def __init__(self) -> None:
        self.held: dict[tuple, dict] = {}

    def update(self, key: tuple, bar: dict) -> dict | None:
        old = self.held.get(key)
        mark_drawn(bar, old)
        self.held[key] = bar
        if old is not None and old["n"] > 0 and not same_step(old, bar):
            return old
        return None

    def peek(self, key: tuple) -> dict | None:
        return self.held.get(key)

    def drain(self) -> list[dict]:
        out = [b for b in self.held.values() if b["n"] > 0]
        self.held.clear()
        return out


def same_step(before: dict, bar: dict) -> bool:
    """Do two redraws of a bar draw the same step?  The same count in another epoch is another
    step: a console that is no terminal gets only the last redraw of each epoch's Rich bar
    (`Epoch 0/9 ... 938/938`, then `Epoch 1/9 ... 938/938`)."""
    return before["n"] == bar["n"] and before.get("epoch") == bar.get("epoch")


def mark_drawn(bar: dict, before: dict | None) -> None:
    """Note on ``bar`` when its step was first drawn (CLOCK, where set): now, or when ``before``,
    an earlier redraw of the same step, was."""
    now = CLOCK.now_ns
    if now is not None:
        same = before is not None and same_step(before, bar)
        bar["drawn_ns"] = before.get("drawn_ns", now) if same and before is not None else now


def drawn(bar: dict) -> dict:
    """The `drawn_ns` field of a record made from ``bar``, if the bar has one."""
    return {"drawn_ns": bar["drawn_ns"]} if "drawn_ns" in bar else {}
