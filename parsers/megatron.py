"""Megatron-LM (and Megatron-DeepSpeed, GPT-NeoX) iteration lines, timers, validation, checkpoints.

Megatron-LM prints ` [2024-10-16 04:23:00] iteration        2/  500000 | ...` (0.17: the time to
the microsecond; older versions and Megatron-DeepSpeed without the date), and its timers either on
one line (`time (ms) | name: x | ...`) or, since 2022, as a block: a `(min, max) time across ranks
(ms):` (or `max time across ranks (ms):`; 0.17 logs it behind `INFO:megatron.core.timers:`) header,
then one `    name .....: (min, max)` (or `: max`) line per timer; with `--timing-log-option all`, a
`times across ranks (ms):` header, then each timer's `  name:` and one `     rank  1: 501.52` line
for each rank that ran it."""
from __future__ import annotations

from collections import deque

from .base import (OWN_TOTAL, Parser, Pattern, is_digits, num, parse_timer_list, parsed, record, timers_to_lanes,
                   to_int, to_ms)

# GPT-NeoX puts `samples/sec: 12.345 |` before `iteration`
ITER = Pattern(r"\s*+(?:\[[0-9:. -]{1,40}+\]\s*+)?(?:samples/sec: ([\d.]++) \|\s*+)?"
               r"iteration\s++(\d++)\s*+/\s*+(\d++)\s*+\|(.{0,4000}+)")
TIMER_BLOCK = Pattern(r"(?:[A-Z]{3,8}+:[\w.]{1,120}+:)?(\(min, max\) time|max time|times) across ranks \(ms\):\s*+")
BLOCK_TIMER = Pattern(r"\s++([A-Za-z][\w/.-]{0,120}+) \.*+: (?:\(([\d.]++), ([\d.]++)\)|([\d.]++))\s*+")
RANK_TIMER_NAME = Pattern(r"\s++([A-Za-z][\w/.-]{0,120}+):\s*+")
RANK_TIMER = Pattern(r"\s++rank\s++(\d{1,7}+): ([\d.]++)\s*+")
"""`--timing-log-option all`: a timer's name, then its time on each rank that ran it."""
TIMERS = Pattern(r"time \(ms\)\s*+\|(.{0,4000}+)")
LOADED_AT = Pattern(r"successfully loaded checkpoint from .{0,1000}? at iteration (\d++)")
_OWN_PHASE = frozenset({"phase"})
"""A validation line's `phase` is its split's: a `phase` among its values gives way."""
STRAGGLER = Pattern(r"\| MnRtt/Rnk: ([\d.]++)([mu]s)/(\d++) \| MxRtt/Rnk: ([\d.]++)([mu]s)/(\d++) \|.{0,1000}?"
                    r"\| MnDRtt/Rnk: ([\d.]++)([mu]s)/(\d++) \| MxDRtt/Rnk: ([\d.]++)([mu]s)/(\d++)")
"""Megatron's straggler detector (`--log-straggler`), after an iteration's timers: across all
ranks, the fastest and slowest one's forward time (`MnRtt`/`MxRtt`, the model's compute) and
batch fetch (`MnDRtt`/`MxDRtt`), each `value unit/rank`."""
GPU_EXTREME = Pattern(r"\| M([nx])(Pwr|Tmp|Utl|Clk|Etpt)/Rnk: ([\d.]++)(?:W|C|%|MHz|TF)/(\d++)")
"""The same report's GPU counters, each the lowest and highest across the ranks, and whose."""
GPU_NAMES = {"Pwr": "power_mw", "Tmp": "temp_c", "Utl": "util_pct", "Clk": "clock_mhz", "Etpt": "tflops"}
"""Power is NVML's milliwatts, which the report labels `W` (`MnPwr/Rnk: 601796W/8` on an H100)."""
BRIDGE_STEP = Pattern(r"Step Time : ([\d.]++)s GPU utilization: ([\d.]++) ?MODEL_TFLOP/s/GPU")
"""Megatron-Bridge's line by each iteration line it logs (`Step Time : 0.79s GPU utilization:
62.4MODEL_TFLOP/s/GPU`): its model TFLOP/s a GPU are the `tflops` of the iteration it times."""
# ` validation loss at iteration 100 | ...`, newer `... at iteration 2500 on 320-sample draw from
# validation set | ...` (or `on test set`), and `... at the end of training for test data | ...`;
# GPT-NeoX's ` validation results at iteration 100 | lm_loss value: 6.9E+00 | ...`
VALID = Pattern(r"\s*+validation (?:loss|results) at (?:iteration\s*+(\d++)(?: on ([^|]{1,200}+))?"
                r"|the end of training for (\w{1,40}+) data)\s*+\|(.{0,2000}+)")

_RANK_TIMES = 1 << 20
"""The most (rank, timer) times kept of one block of every rank's times: 20 timers of 50k ranks."""
_KEPT_ITERATIONS = 1024
"""Iteration lines kept for the straggler reports that come after them (a few iterations)."""
_HELD_REPORTS = 64
"""Straggler reports kept while their iteration's line has not come (a garbled log: any number)."""
_BLOCK_TIMERS = 128
"""A timer block keeps at most this many timers (Megatron logs about 20; a garbled log, any)."""

_MAP = {
    "elapsed time per iteration (ms)": "step_time_ms",
    "learning rate": "lr",
    "lm loss": "loss",
    "grad norm": "grad_norm",
    "loss scale": "loss_scale",
    "consumed samples": "consumed_samples",
    "consumed tokens": "consumed_tokens",
    "global batch size": "global_batch_size",
    "number of skipped iterations": "skipped_iterations",
    "number of nan iterations": "nan_iterations",
    "throughput per gpu (tflop/s/gpu)": "tflops",
    "tflops": "tflops",
    "tokens per gpu per second (tgs)": "tokens_per_s_per_gpu",
    "tokens per gpu (tokens/s/gpu)": "tokens_per_s_per_gpu",
    "tokens per second per gpu (tok/s/gpu)": "tokens_per_s_per_gpu",
    "samples per second": "samples_per_s",
    "mem usages": "mem_usage",
    "lm_loss": "loss",
}
_FLOPS = {"TFLOPS": 1.0, "GFLOPS": 1e-3, "MFLOPS": 1e-6, "PFLOPS": 1e3}
"""GPT-NeoX's `approx flops per GPU: 123.4TFLOPS`, in its unit of the moment, as TFLOP/s."""
_FIRST_OF = {
    "throughput per gpu (tflop/s/gpu)": "tflops",
    "compute per gpu (tflop/s/gpu)": "compute_tflops",
    "tokens/s/gpu inst/harmonic mean": "tokens_per_s_per_gpu",
    "tokens per gpu (tokens/s/gpu)": "tokens_per_s_per_gpu",
    "max mem usage/usage_ratio": "mem_gb",
}
"""Fields whose value is the iteration's own number followed by a mean or a ratio: Primus'
`throughput per GPU (TFLOP/s/GPU): 322.5/320.6` and `tokens/s/GPU inst/harmonic mean:
9640.7/9629.8` (this iteration's, then the run's), `compute per GPU (TFLOP/s/GPU): 496.3 (avg
496.1)` (the rate over kernel time alone, not the wall clock's `tflops`), `max mem
usage/usage_ratio: 12.34GB/45.6%`."""
_LEAD = Pattern(r"\s*+([\d.]++(?:[eE][+-]?\d++)?)")


def parse_fields(text: str) -> tuple[dict, dict]:
    fields: dict = {}
    losses: dict = {}
    for part in text.split("|", 48)[:48]:
        k, sep, val = part.rpartition(":")
        if not sep or len(k) > 90:
            continue
        key = k.strip().lower()
        v = num(val)
        if v is None:
            first = _FIRST_OF.get(key)
            if first is not None:
                m = _LEAD.match(val)
                if m is not None and (first != "mem_gb" or val[m.end():m.end() + 2] == "GB"):
                    fields[first] = num(m.group(1))
                continue
            if key == "approx flops per gpu":
                printed = val.strip()
                scale = _FLOPS.get(printed[-6:])
                v = num(printed[:-6]) if scale else None
                if v is not None and scale is not None:
                    fields["tflops"] = round(v * scale, 6)
            continue
        name = _MAP.get(key)
        if name:
            fields[name] = int(v) if name in ("consumed_samples", "consumed_tokens", "global_batch_size",
                                              "skipped_iterations", "nan_iterations") else v
        elif key.endswith("loss"):
            losses[key] = v
        else:
            fields[key.replace(" ", "_")] = v
    if "loss" not in fields and losses:
        fields["loss"] = next(iter(losses.values()))
    if losses:
        fields["losses"] = losses
    return fields, losses


class MegatronParser(Parser):
    name = "megatron"

    def __init__(self) -> None:
        self.last_step: dict = {}
        self.last_time: dict = {}
        self.open: dict = {}
        """rank -> the `TimerBlock` of timers being read"""
        self.printed: deque = deque(maxlen=_KEPT_ITERATIONS)
        """(rank, step) of the stream's last iteration lines, in the order printed"""
        self.printed_before = 0
        """Iteration lines printed before those in `printed`"""
        self.reports: dict = {}
        """reporting rank -> straggler reports read"""
        self.held: deque = deque()
        """(index, slowest ranks) of straggler reports read before their iteration's line"""
        self.model_tflops: tuple[float, float] | None = None
        """Megatron-Bridge's (model TFLOP/s a GPU, step time in s) for the next iteration line,
        from rank 0's line.  Another rank prints the iteration, and its line may come first:
        the next iteration takes the rate only where its own time agrees (to the 10 ms the
        step time is printed to)."""

    def detect(self, line: str) -> bool:
        """An iteration line; also Megatron-Bridge's line before it, and a timer block's header,
        which a resumed run prints before its first iteration (its `load-checkpoint` time)."""
        return ("iteration" in line and ITER.match(line) is not None) or "MODEL_TFLOP/s/GPU" in line \
            or TimerBlock.opened_by(line) is not None

    def _iteration(self, printed_step: str, total: str, text: str, rank,
                   samples_per_s: str | None = None) -> list[dict]:
        step = int(printed_step)
        self.last_step[rank] = step
        if len(self.printed) == self.printed.maxlen:
            self.printed_before += 1
        self.printed.append((rank, step))
        fields, _ = parse_fields(text)
        if samples_per_s is not None:
            fields.setdefault("samples_per_s", num(samples_per_s))
        if self.model_tflops is not None:
            tflops, step_s = self.model_tflops
            self.model_tflops = None
            ms = fields.get("step_time_ms")
            if isinstance(ms, (int, float)) and abs(step_s * 1000 - ms) <= 5.0:
                fields.setdefault("tflops", tflops)
        self.last_time[rank] = fields.get("step_time_ms")
        out = [record("progress", self.name, rank, step, total_steps=int(total), **parsed(fields, OWN_TOTAL))]
        while self.held and self.held[0][0] < self.printed_before + len(self.printed):
            out.append(self._report(*self.held.popleft()))
        return out

    def _straggler_report(self, rank, report: dict) -> list[dict]:
        """Rank 0 reports once an iteration line is due (every log interval), but it need not
        print that line: the last rank does, and the two run apart by a few iterations (a
        pipeline's first stage runs ahead of its last).  The k-th report is the k-th iteration
        line's, and goes with its rank; one read before its line waits for it."""
        index = self.reports.get(rank, 0)
        self.reports[rank] = index + 1
        if index < self.printed_before + len(self.printed):
            return [self._report(index, report)]
        if len(self.held) < _HELD_REPORTS:
            self.held.append((index, report))
        return []

    def _report(self, index: int, report: dict) -> dict:
        at = index - self.printed_before
        owner, step = self.printed[at] if at >= 0 else (None, None)
        return record("timing", self.name, owner, step, **report)

    def fast(self, line: str) -> list[dict] | None:
        """` iteration N/ T | key: value | ...` and `time (ms) | name: x | ...` without a regex,
        for an unprefixed printable line; None where the regex path might differ."""
        if "NCCL" in line or len(line) > 4000:
            return None
        if "iteration" in line:
            s = line.lstrip(" \t")
            if s[:1] == "[":        # ` [2024-10-16 04:23:00] iteration ...`
                close = s.find("]", 2, 42)
                if close < 0 or s[1:close].strip("0123456789:. -"):
                    return None
                s = s[close + 1:].lstrip(" \t")
            if s[:9] != "iteration":
                return None
            rest = s[9:]
            s = rest.lstrip(" \t")
            if len(s) == len(rest):
                return None
            a, sep, rest = s.partition("/")
            b, sep2, text = rest.partition("|")
            a, b = a.rstrip(" \t"), b.strip(" \t")
            if not (sep and sep2 and is_digits(a) and is_digits(b)):
                return None
            return self._iteration(a, b, text, None)
        i = line.find("time (ms)")
        if i < 0:
            return None
        s = line[i + 9:].lstrip(" \t")
        if s[:1] != "|":
            return None
        return timer_records(self.name, None, self.last_step.get(None), parse_timer_list(s[1:]),
                             self.last_time.get(None)) or None

    def parse(self, line: str, rank: int | None) -> list[dict]:
        recs = read_timer_line(self.open, line, rank, self._close_block)
        return self._line(line, rank) if recs is None else recs

    def _close_block(self, rank) -> list[dict]:
        """The records of a timer block: the timers of the slowest rank (what the step waits
        for; `lanes_across_ranks`: whichever rank that was), for `(min, max)` blocks those of the
        fastest (their gap: the imbalance), and for blocks of every rank's times each lane's
        slowest rank.  The blocks before the first iteration time no step
        (`startup-library-setup`, `model-and-optimizer-setup`) but for a resumed run's
        `load-checkpoint`."""
        block = self.open.pop(rank)
        step = self.last_step.get(rank)
        recs = timer_records(self.name, rank, step, block.timers, self.last_time.get(rank),
                             timers_min_ms=block.mins or None, lanes_across_ranks=True)
        if rank not in self.last_time:      # before training: setup times, a resume's load
            return [r for r in recs if r["kind"] == "checkpoint"]
        slowest = block.slowest_ranks()
        if slowest and recs and recs[0]["step_time_ms"] is not None:
            recs.append(record("timing", self.name, rank, step, slowest_ranks=slowest))
        return recs

    def flush(self) -> list[dict]:
        out = []
        for rank in list(self.open):
            out += self._close_block(rank)
        out += [record("timing", self.name, None, None, **report) for _, report in self.held]
        self.held.clear()
        return out

    def _line(self, line: str, rank) -> list[dict]:
        if "iteration" in line:
            m = ITER.match(line)
            if m:
                return self._iteration(m.group(2), m.group(3), m.group(4), rank, m.group(1))
        if "loaded checkpoint" in line:     # the events read it; its load time comes next, at its step
            m = LOADED_AT.search(line)
            if m:
                self.last_step[rank] = int(m.group(1))
            return []
        if "Rtt/Rnk" in line:
            m = STRAGGLER.search(line)
            if m:
                report = {"slowest_ranks": {"compute": _extremes(*m.groups()[:6]),
                                            "input": _extremes(*m.groups()[6:])}}
                gpu = _gpu_extremes(line)
                if gpu:
                    report["gpu_extremes"] = gpu
                return self._straggler_report(rank, report)
        if "MODEL_TFLOP/s/GPU" in line:
            m = BRIDGE_STEP.search(line)
            if m:
                tflops, step_s = num(m.group(2)), num(m.group(1))
                self.model_tflops = (tflops, step_s) if tflops is not None and step_s is not None else None
            return []
        if "validation loss at" in line or "validation results at" in line:
            m = VALID.match(line)
            if m:
                iteration, draw, split, text = m.groups()
                fields, _ = parse_fields(text)
                for k in list(fields):
                    if k.endswith("loss_value") and "loss" not in fields:
                        fields["loss"] = fields[k]
                    elif k.endswith(("loss_ppl", "loss_ppl_value")):
                        fields["ppl"] = fields[k]
                step = to_int(iteration) if iteration else self.last_step.get(rank)
                test = split == "test" or (draw is not None and draw.rstrip().endswith("test set"))
                return [record("eval", self.name, rank, step, phase="test" if test else "validation",
                               **parsed(fields, _OWN_PHASE))]
        if "time (ms)" in line:
            m = TIMERS.search(line)
            if m:
                return timer_records(self.name, rank, self.last_step.get(rank), parse_timer_list(m.group(1)),
                                     self.last_time.get(rank))
        return []


def read_timer_line(blocks: dict, line: str, rank, close) -> list[dict] | None:
    """A line's part in a parser's timer blocks (`blocks`: rank -> `TimerBlock`): [] where it
    opens or adds to one; where it ends one, that block's records, `close(rank)` (the dispatcher
    then reads the line as any other); None where it is no part of one."""
    block = blocks.get(rank)
    if block is not None:
        return [] if block.add(line) else close(rank)
    block = TimerBlock.opened_by(line)
    if block is not None:
        blocks[rank] = block
        return []
    return None


class TimerBlock:
    """A timer block being read: each timer's time on the slowest rank (`timers`) and, where the
    block prints them, on the fastest (`mins`) and on each rank (`per_rank`)."""

    def __init__(self, header: str) -> None:
        self.timers: dict = {}
        self.mins: dict | None = {} if header[0] == "(" or header == "times" else None
        self.per_rank: dict | None = {} if header == "times" else None
        self.name: str | None = None
        self.kept = 0

    @staticmethod
    def opened_by(line: str) -> TimerBlock | None:
        """The block whose header `line` is (`(min, max) time across ranks (ms):` and its
        kin), else None."""
        if "across ranks (ms):" not in line:
            return None
        m = TIMER_BLOCK.fullmatch(line)
        return TimerBlock(m.group(1)) if m else None

    def add(self, line: str) -> bool:
        """Read one line of the block; False where it is no line of it (the block has ended)."""
        if self.per_rank is None:
            m = BLOCK_TIMER.fullmatch(line)
            if m is None:
                return False
            name, low, high, only = m.groups()
            self._time(name, num(high if only is None else only), num(low))
            return True
        m = RANK_TIMER.fullmatch(line)
        if m is not None and self.name is not None:
            rank, v = int(m.group(1)), num(m.group(2))
            if v is not None and self.kept < _RANK_TIMES:
                self.kept += 1
                self.per_rank.setdefault(rank, {})[self.name] = v
                low = self.mins.get(self.name, v) if self.mins is not None else v
                self._time(self.name, max(v, self.timers.get(self.name, v)), min(v, low))
            return True
        m = RANK_TIMER_NAME.fullmatch(line)
        if m is None or not line.startswith("  ") or line.startswith("     "):
            return False
        self.name = m.group(1) if m.group(1) in self.timers or len(self.timers) < _BLOCK_TIMERS else None
        return True

    def _time(self, name: str, high: float | None, low: float | None) -> None:
        if high is not None and (name in self.timers or len(self.timers) < _BLOCK_TIMERS):
            self.timers[name] = high
            if self.mins is not None and low is not None:
                self.mins[name] = low

    def slowest_ranks(self) -> dict | None:
        """Each lane's slowest and fastest rank, from every rank's timers (as Megatron's
        straggler report names them): which rank held the step up, from stdout alone."""
        if not self.per_rank or len(self.per_rank) < 2:
            return None
        lanes = {rank: _own_lanes(timers) for rank, timers in self.per_rank.items()}
        out = {}
        for lane in sorted({lane for ranks in lanes.values() for lane in ranks}):
            times = {rank: ranks.get(lane, 0.0) for rank, ranks in lanes.items()}
            slow, fast = max(times, key=lambda r: times[r]), min(times, key=lambda r: times[r])
            out[lane] = {"rank": slow, "ms": times[slow], "fastest_rank": fast, "fastest_ms": times[fast]}
        return out


def _own_lanes(timers: dict) -> dict:
    """One rank's lanes, to compare it with the others: its compute is the work it ran itself
    (its forward steps less the batch fetch inside them, its backward steps, its optimizer), not
    `forward-backward`, which also holds its waits for the other ranks."""
    lanes = timers_to_lanes(timers)
    if "forward-compute" in timers:
        forward = max(timers["forward-compute"] - timers.get("batch-generator", 0.0), 0.0)
        lanes["compute"] = round(forward + timers.get("backward-compute", 0.0) + timers.get("optimizer", 0.0), 6)
    return lanes


def _gpu_extremes(line: str) -> dict:
    """{counter: {min, min_rank, max, max_rank}} of the report's GPU counters; none that read 0
    on every rank (no GPU, or a counter NVML does not give)."""
    out: dict = {}
    for m in GPU_EXTREME.finditer(line):
        which, name, value, rank = m.groups()
        v = num(value)
        if v is not None:
            side = "min" if which == "n" else "max"
            out.setdefault(GPU_NAMES[name], {}).update({side: v, f"{side}_rank": int(rank)})
    return {k: v for k, v in out.items() if v.get("min") or v.get("max")}


def _extremes(low: str, low_unit: str, low_rank: str, high: str, high_unit: str, high_rank: str) -> dict:
    return {"rank": int(high_rank), "ms": to_ms(num(high), high_unit),
            "fastest_rank": int(low_rank), "fastest_ms": to_ms(num(low), low_unit)}


_BETWEEN_STEPS = frozenset({"evaluate", "save-checkpoint", "load-checkpoint", "save-checkpoint-non-persistent"})
"""Megatron's timers of what runs between two iterations, with the iteration timer stopped:
outside the time it prints for either."""


def timer_records(framework: str, rank, step, timers: dict, step_time_ms=None, lanes: dict | None = None,
                  **extra) -> list[dict]:
    """The timers printed after an iteration line belong to that iteration: the record carries
    its step time too, so that a stdout-only window can take its lanes from the timers (`lanes`
    where the framework's timers mean other lanes than Megatron's).  Not a block of timers of
    what ran between iterations alone (an evaluation, a save): those are not the step's lanes."""
    if not timers:
        return []
    between = all(name in _BETWEEN_STEPS for name in timers)
    out = [record("timing", framework, rank, step, timers_ms=timers,
                  lanes_ms=timers_to_lanes(timers) if lanes is None else lanes,
                  step_time_ms=step_time_ms if step is not None and not between else None, **extra)]
    for name, v in timers.items():
        if name in ("save-checkpoint", "load-checkpoint"):
            out.append(record("checkpoint", framework, rank, step,
                              action="save" if name.startswith("save") else "load", duration_ms=v))
    return out
