"""DeepSpeed: log_dist step lines, ThroughputTimer, wall_clock_breakdown, the Flops Profiler's
summary, the comms logger's ops, DeepSpeed-Chat prints."""
from __future__ import annotations

import re

from .base import (CLOCK, READ_LINE, Parser, Pattern, is_decimal, is_digits, num, parse_timer_list, printable_ascii,
                   record, seconds_to_ms, timers_to_lanes, to_ms)
from .megatron import timer_records
from .scan import interesting

STEP = Pattern(r"\[Rank (\d++)\] step=(\d++), skipped=(\d++), lr=\[\s*+([-\d.eE+]++)")
THROUGHPUT = Pattern(
    r"(?:epoch=(\d++)/micro_step=(\d++)/global_step=(\d++)|(\d++)/(\d++)), "
    r"RunningAvgSamplesPerSec=([\d.]++), CurrSamplesPerSec=([\d.]++|inf)"
    r"(?:, MemAllocated=([\d.]++)GB, MaxMemAllocated=([\d.]++)GB)?")
BREAKDOWN = Pattern(r"(?:\[Rank (\d++)\] )?(?:rank=(\d++) )?time \(ms\)\s*+\|(.{0,4000}+)")
"""`wall_clock_breakdown`'s line: `[Rank 0] time (ms) | fwd: ...`, before DeepSpeed 0.10 `[Rank 0]
rank=0 time (ms) | forward: ...` (GPT-NeoX's logs)."""
CHAT_LAT = Pattern(
    r"Model Parameters: ([\d.]++) B, Latency: ([\d.]++)s, TFLOPs: ([\d.]++), Samples/sec: ([\d.]++)")
CHAT_STEP = Pattern(r"epoch: (\d++)\|step: (\d++)\|(.{0,1000}+)")
CHAT_E2E = Pattern(r"\|E2E latency=([\d.]++)s (.{0,1000}+)")
CHAT_PHASE = Pattern(r"(End-to-End|Generation|Training) {0,3}+=> Latency: ([\d.]++)s(.{0,400}+)")
"""DeepSpeed-Chat step 3's throughput since mid-2023, three lines after each step's line:
`End-to-End => Latency: 2.12s, TFLOPs: 5.23, Samples/sec: 1.89, Time/seq 0.53s, ...`,
`Generation => Latency: 1.59s, Per-token Latency 6.21 ms, ...`, `Training   => Latency: 0.42s, TFLOPs: ..`."""
_E2E_ITEM = Pattern(r"\|?\s*+([A-Za-z][\w ]{0,40}?)\s*+=\s*+([\d.]++)s?")
# PipelineEngine.train_batch, every steps_per_print steps on rank 0: the loss, any additional
# losses (`name: x`), and the mean time of the steps since the last such line
PIPE_STEP = Pattern(r"steps: (\d++) loss: ([-\d.eE+]++|nan|inf) (.{0,400}?)iter time \(s\): ([\d.]++) "
                    r"samples/sec: ([\d.]++|inf)")
EVAL_HDR = Pattern(r"\*{3,}+ Evaluating (\w++)(?:, Epoch (\d++)/(\d++))?")
PPL = Pattern(r"ppl: ([\d.]++|inf|nan)")
# What the block readers (see `Parser.readers`) match, from the line's start or the anchor on.
LATENCY_LINE = re.compile(r"Model Parameters: ([0-9.]++) B, Latency: ([0-9.]++)s, TFLOPs: ([0-9.]++), "
                          r"Samples/sec: ([0-9.]++)(,[ -~]*+)?")
LATENCY_RUN = re.compile(LATENCY_LINE.pattern + r"(?=\n|\Z)")
STEP_AT = re.compile(r"\[Rank ([0-9]++)\] step=([0-9]++), skipped=([0-9]++), lr=\[ *+([-0-9.eE+]++)"
                     r"(?:[,\]][ -~]*+)?")
THROUGHPUT_AT = re.compile(
    r"(?:epoch=([0-9]++)/micro_step=([0-9]++)/global_step=([0-9]++)|([0-9]++)/([0-9]++)), "
    r"RunningAvgSamplesPerSec=([0-9.]++), CurrSamplesPerSec=([0-9.]++|inf)"
    r"(?:, MemAllocated=([0-9.]++)GB, MaxMemAllocated=([0-9.]++)GB)?[ -~]*+")
# The engine's configuration, printed at start: `[config.py:1003:print]   gradient_accumulation_steps .. 2`
GAS = Pattern(r"(?:^|\] )\s*+gradient_accumulation_steps \.{1,80}+ (\d{1,6}+)\s*+$")
PROFILE_HEAD = "Profile Summary at step "
"""The Flops Profiler's summary (`flops_profiler` in the config) starts with this, then the step."""
_PROFILE_TIMES = {"fwd latency": "fwd", "bwd latency": "bwd", "step latency": "step", "iter latency": "iter"}
_FLOPS_AS_T = {"T": 1.0, "G": 1e-3, "M": 1e-6, "K": 1e-9, "": 1e-12, "m": 1e-15, "u": 1e-18}
"""The profiler prints a number with a unit prefix of its choice: `81.9 TFLOPS`, `581.26 us`."""
_PROFILE_RATES = ("tflops", "fwd_tflops", "samples_per_s")
COMM_OP = "comm op: "
"""The comms logger's line of one op (`"comms_logger": {"enabled": true, "verbose": true}`, logged
by rank 0 at level info): `[Rank 0] comm op: all_reduce | time (ms): 125.72 | msg size: 2.25 KB |
algbw (Gbps): 0.00 | busbw (Gbps): 0.00`; with `debug`, `all_reduce | [Caller Func: ..]` as the name."""
_SIZE_UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40, "PB": 1 << 50}
"""The comms logger's message sizes (`convert_size`: powers of 1024, `0B` for none)."""
REWARD = Pattern(r"chosen_last_scores \(higher is better\) : ([-\d.]++), acc \(higher is better\) : ([\d.]++)")


_BUFFERED_STEPS = 64
"""How far the breakdown lines (stdout, block-buffered into a pipe: 8 KiB, some 50 lines) may lag
DeepSpeed's `step=N` (stderr, the logger) before the two counts tell of a resumed run."""


def _bytes_of(size: str) -> int | None:
    """A message size as the comms logger prints it (`2.25 KB`, `4.0 B`, `0B`) in bytes; None
    for any other text."""
    size = size.strip()
    value, _, unit = size.rpartition(" ") if " " in size else (size[:-1], "", size[-1:])
    count = num(value)
    if count is None or count < 0 or unit not in _SIZE_UNITS:
        return None
    return int(count * _SIZE_UNITS[unit])


def _over_time(held: list, i: int, total: float | None) -> float | None:
    """A rate over a step's micro-batches (item i of each), each weighed by its time."""
    if not total:
        return None
    acc = 0.0
    for h in held:
        if h[i] is None:
            return None
        acc += h[i] * h[1]
    return round(acc / total, 6)


class DeepSpeedParser(Parser):
    name = "deepspeed"
    yields_to = frozenset({"megatron"})
    readers: tuple = ("_latency_at", "_step_at", "_throughput_at", "_chat_step_at")
    runs: tuple = (("M", "_latency_run"),)

    def __init__(self) -> None:
        self.last_step: dict = {}
        self.breakdowns: dict = {}  # rank -> the step of its last `wall_clock_breakdown` line
        self.zero_timers: dict = {}
        """rank -> ZeRO's optimizer timers (`optimizer_allgather`, `optimizer_gradients`,
        `optimizer_step`), printed before the breakdown of the step they ran in"""
        self.latency_count: dict = {}
        self.gas = 1
        """Micro-batches per optimizer step (`gradient_accumulation_steps` of the printed config)."""
        self.micro: dict = {}       # rank -> the micro-batches' latencies of the step in progress
        self.eval_epoch: dict = {}
        self.chat_timing: dict = {}
        """rank -> DeepSpeed-Chat's step timing read from its `End-to-End =>` line, until the
        `Training =>` line that ends it"""
        self.profiles: dict = {}
        """rank -> the Flops Profiler's summary read so far, until its step's breakdown line"""
        self.comm_totals: dict = {}
        """(rank, the op's logged name) -> the time the comms logger printed last (see `_comm_op`)"""
        self.comms: dict = {}
        """rank -> the comms logger's ops since the rank's last `step=N` line"""
        self.comm_through: dict = {}
        """rank -> the step of its last `step=N` line, whose ops were given"""

    def detect(self, line: str) -> bool:
        return ("[deepspeed]" in line or "RunningAvgSamplesPerSec" in line or "ds_config" in line
                or ("[Rank " in line and ("step=" in line or "] time (ms)" in line or "] rank=" in line))
                or "Model Parameters:" in line or "|Gather latency=" in line
                or (line.startswith("epoch: ") and "|step: " in line)
                or ("| PPO Epoch: " in line and line.startswith("Epoch: ")) or line.startswith("End-to-End => ")
                or line.startswith("ppl:") or "chosen_last_scores" in line
                or ("iter time (s): " in line and "steps: " in line)
                or "DeepSpeed" in line and "info" in line.lower())

    def owns(self, line: str) -> bool:
        """DeepSpeed's fp16 loss scaler's messages (`Grad overflow on iteration 12`, `No Grad
        overflow for 500 iterations`, `Increasing dynamic loss scale from ..`, `Overflow
        detected. Skipping step. ..`): the event parser reads the skipped steps from them, and
        no other parser reads more (the generic one took `iteration 12` for a step, with no
        field to give it, at ~30 us a line)."""
        return ("Grad overflow" in line or "Overflow detected" in line or "dynamic loss scale from" in line
                or COMM_OP in line)

    def _step(self, g, rank) -> list[dict]:
        step = int(g[1])
        r = rank if rank is not None else int(g[0])
        self.last_step[rank] = step
        # printed before the step's breakdown line: the next one is step N, unless stdout's
        # buffer holds that line back, by less than _BUFFERED_STEPS
        if step > 0 and abs(self.breakdowns.get(rank, 0) - (step - 1)) > _BUFFERED_STEPS:
            self.breakdowns[rank] = step - 1
        comms = self._comms(rank, step) if rank in self.comms else []
        return comms + [record("progress", self.name, r, step, lr=num(g[3]), skipped_steps=int(g[2]))]

    def _comm_op(self, line: str, rank) -> list[dict]:
        """One op of the comms logger, held with the rank's others until its next `step=N` line
        (the same logger's, so never out of order with it; the breakdown lines are printed to
        stdout, which a pipe buffers).  DeepSpeed prints each op name's running total as its time
        (`timers(log_name).elapsed(reset=False)`, and the timer is never reset: in the capture
        all_reduce's times go 121.54, 122.65, 125.72, ...), so an op took the rise from the time
        printed before under its name; a time below that is a new process's first op.  The
        printed bandwidths are of the running total, and are not read."""
        at = line.find(COMM_OP)
        tag = line[:at].rpartition("[Rank ")[2].partition("]")[0]
        parts = line[at + len(COMM_OP):].split(" | ")
        i = next((k for k, part in enumerate(parts) if part.startswith("time (ms): ")), 0)
        if i == 0 or i + 1 >= len(parts) or not parts[i + 1].startswith("msg size: "):
            return []
        total, size = num(parts[i][11:]), _bytes_of(parts[i + 1][10:])
        if total is None or total < 0 or size is None:
            return []
        name = " | ".join(parts[:i])
        before = self.comm_totals.get((rank, name), 0.0)
        self.comm_totals[(rank, name)] = total
        took = total - before if total >= before else total
        op = parts[0].strip()
        held = self.comms.setdefault(rank, {"rank": int(tag) if is_digits(tag) and len(tag) <= 7 else None,
                                            "comm_ms": {}, "comm_count": {}, "comm_bytes": {}})
        held["comm_ms"][op] = round(held["comm_ms"].get(op, 0.0) + took, 6)
        held["comm_count"][op] = held["comm_count"].get(op, 0) + 1
        held["comm_bytes"][op] = held["comm_bytes"].get(op, 0) + size
        return []

    def _comms(self, rank, step: int) -> list[dict]:
        """The ops held for `rank` as one timing record of `step` (`source: "comms_logger"`): per
        op, its time (`comm_ms`), count and bytes, over the `steps` since the rank's `step=N` line
        before (every `steps_per_print`); ops before the first such line (the engine's first
        broadcasts) are of the step it names.  Unlabelled: the `[Rank N]` that logged them."""
        held = self.comms.pop(rank)
        before = self.comm_through.get(rank)
        self.comm_through[rank] = step
        r = rank if rank is not None else (held["rank"] if held["rank"] is not None else 0)
        steps = step - before if before is not None and step - before > 1 else None
        return [record("timing", self.name, r, step, source="comms_logger", steps=steps, comm_ms=held["comm_ms"],
                       comm_count=held["comm_count"], comm_bytes=held["comm_bytes"])]

    def _throughput(self, g, rank) -> list[dict]:
        step = int(g[2] or g[4])
        epoch = g[0] or g[3]
        return [record("progress", self.name, rank, step, epoch=int(epoch) if epoch else None,
                       samples_per_s=num(g[6]), avg_samples_per_s=num(g[5]),
                       mem_gb=num(g[7]), max_mem_gb=num(g[8]),
                       micro_step=int(g[1]) if g[1] else None)]

    def _latency(self, g, rank) -> list[dict]:
        if self.gas > 1:
            return self._micro_batch(rank, num(g[0]), num(g[1]), num(g[2]), num(g[3]))
        n = self.latency_count.get(rank, 0) + 1
        self.latency_count[rank] = n
        return [record("progress", self.name, rank, n, step_inferred=True,
                       params_b=num(g[0]), step_time_ms=to_ms(num(g[1]), "s"),
                       tflops=num(g[2]), samples_per_s=num(g[3]))]

    def _micro_batch(self, rank, params_b, seconds, tflops, samples_per_s) -> list[dict]:
        """DeepSpeed-Chat prints its latency line once per micro-batch: under gradient
        accumulation, one record per optimizer step, timed by its micro-batches together."""
        held = self.micro.setdefault(rank, [])
        held.append((params_b, seconds, tflops, samples_per_s))
        return self._step_of_micro_batches(rank) if len(held) >= self.gas else []

    def _step_of_micro_batches(self, rank) -> list[dict]:
        held = self.micro.pop(rank)
        n = self.latency_count.get(rank, 0) + 1
        self.latency_count[rank] = n
        times = [h[1] for h in held]
        total = None if None in times else sum(times)
        return [record("progress", self.name, rank, n, step_inferred=True, micro_batches=len(held),
                       params_b=held[-1][0], step_time_ms=to_ms(total, "s"),
                       tflops=_over_time(held, 2, total), samples_per_s=_over_time(held, 3, total))]

    def flush(self) -> list[dict]:
        """A step whose micro-batches the log ends in the middle of, a DeepSpeed-Chat step
        timing whose last line the log lacks, a Flops Profiler summary no breakdown followed, and
        the comms logger's ops after a rank's last `step=N` line (a checkpoint's, the summary's
        barriers), as the step after it."""
        return ([r for rank in list(self.micro) for r in self._step_of_micro_batches(rank)]
                + [r for rank in list(self.chat_timing) for r in self._chat_timing(rank)]
                + [r for rank in list(self.profiles) for r in self._profile(rank)]
                + [r for rank in list(self.comms) for r in self._comms(rank, self.comm_through.get(rank, -1) + 1)])

    def _breakdown(self, rank_tag: str | None, timers: dict, rank) -> list[dict]:
        """`wall_clock_breakdown`: a line of micro timers after each micro-batch, and one of the
        step's timers (`fwd`, `bwd`, `bwd_allreduce`, `step`: the micro-batches' sums) at each
        accumulation boundary.  The step's line gives the record; its step is the count of
        such lines, since DeepSpeed 0.17 and later print no step line at their default log
        level.  A `step=N` line far from the count says the run was resumed (see `_step`).
        The line is printed as the step ends, and carries no step time: read live (the log
        probe's clock), it says when its step ended (`drawn_ns`, as a bar's redraw does)."""
        if not timers or all(k.endswith("_microstep") for k in timers):
            return []
        if all(k.startswith("optimizer_") for k in timers):
            self.zero_timers[rank] = timers     # ZeRO's, inside the `step` of the line that follows
            return []
        profiled = self._profile(rank) if self.profiles else []
        n = self.breakdowns.get(rank, 0) + 1
        self.breakdowns[rank] = n
        lanes = timers_to_lanes(timers)
        zero = self.zero_timers.pop(rank, None)
        if zero is not None:
            gather = zero.get("optimizer_allgather", 0.0)
            if lanes.get("compute", 0.0) >= gather > 0 and timers.get("step", 0.0) >= gather:
                lanes["compute"] = round(lanes["compute"] - gather, 6)
                lanes["communication"] = round(lanes.get("communication", 0.0) + gather, 6)
            timers = {**timers, **zero}
        recs = timer_records(self.name, rank if rank is not None or rank_tag is None else int(rank_tag),
                             n, timers, lanes=lanes)
        for r in recs:
            r["step_inferred"] = True
            if CLOCK.now_ns is not None:
                r["drawn_ns"] = CLOCK.now_ns
        return profiled + recs

    def _profile_line(self, line: str, rank) -> list[dict]:
        """A line of the Flops Profiler's summary, printed by rank 0 where the step it profiles
        (`profile_step` + 1, as `step=N` counts) ends, before the step's breakdown line:
        `Profile Summary at step 6:`, then `name:   value` lines.  The latencies (`fwd`, `bwd`,
        `step`, `iter`: their sum) and rates are held until the step's breakdown line.  Under
        gradient accumulation every micro-batch of that step prints a summary, the earlier ones
        `at step 5` with the micro-batch's times alone: each summary replaces the one held."""
        s = line.strip()
        if s.startswith(PROFILE_HEAD):
            printed = s[len(PROFILE_HEAD):].rstrip(":")
            if is_digits(printed) and len(printed) <= 12:
                self.profiles[rank] = {"step": int(printed), "timers_ms": {}}
            return []
        held = self.profiles.get(rank)
        if held is None:
            return []
        name, _, printed = s.rpartition(":")
        value, _, unit = printed.strip().partition(" ")
        v = num(value)
        if v is None:
            return []
        if name in _PROFILE_TIMES and unit in ("s", "ms", "us"):
            held["timers_ms"][_PROFILE_TIMES[name]] = to_ms(v, unit)
        elif name == "samples/second" and not unit:
            held["samples_per_s"] = v
        elif name.startswith(("FLOPS per GPU = ", "fwd FLOPS per GPU = ")) and unit.endswith("FLOPS") \
                and unit[:-5] in _FLOPS_AS_T:
            held["tflops" if name[0] == "F" else "fwd_tflops"] = round(v * _FLOPS_AS_T[unit[:-5]], 9)
        return []

    def _profile(self, rank) -> list[dict]:
        """The held Flops Profiler summary of `rank`, as a timing record of its step (none held,
        or one with no value read: []).  No lanes: the step's breakdown line gives them.  An
        unlabelled summary is rank 0's, which alone prints it."""
        held = self.profiles.pop(rank, None)
        if held is None:
            return []
        rates = {name: held[name] for name in _PROFILE_RATES if name in held}
        if not (held["timers_ms"] or rates):
            return []
        return [record("timing", self.name, 0 if rank is None else rank, held["step"], source="flops_profiler",
                       timers_ms=held["timers_ms"] or None, **rates)]

    def _pipe_step(self, g, rank) -> list[dict]:
        """PipelineEngine's line: its step time is the mean of the steps since the last one
        (`steps_per_print`), as Megatron's is over its log interval."""
        step = int(g[0])
        self.last_step[rank] = step
        losses = {}
        words = g[2].split()
        for name, value in zip(words[::2], words[1::2]):
            v = num(value)
            if name.endswith(":") and v is not None:
                losses[name[:-1]] = v
        return [record("progress", self.name, rank, step, loss=num(g[1]), step_time_ms=to_ms(num(g[3]), "s"),
                       samples_per_s=num(g[4]), losses=losses or None)]

    def _chat_step(self, epoch: str, printed_step: str, text: str, rank) -> list[dict]:
        step = int(printed_step) + 1      # printed 0-based
        self.last_step[rank] = step
        vals = {}
        for part in text.split("|")[:16]:
            k, _, printed = part.partition(":")
            name, v = k.strip(), num(printed)
            if v is not None and name.endswith("loss"):     # (`ppo_ep: 1`, the PPO epoch, is none)
                vals[name] = v
        return [record("progress", self.name, rank, step, epoch=int(epoch),
                       loss=vals.get("act_loss"), losses=vals or None)]

    def _ppo_step(self, line: str, rank) -> list[dict]:
        """DeepSpeed-Chat step 3 since mid-2023: `Epoch: 0 | Step: 10 | PPO Epoch: 1 | Actor Loss:
        0.12 | Critic Loss: 0.45 | Unsupervised Loss: 0.0`, some versions with `Total Steps: N`
        after the step and `Advantage: x | Return: y` at the end.  The step is printed 0-based."""
        vals = {}
        for part in line.split(" | ")[:16]:
            name, _, printed = part.partition(": ")
            vals[name.strip()] = printed.strip()
        printed_step, epoch = vals.get("Step", ""), vals.get("Epoch", "")
        if not (is_digits(printed_step) and is_digits(epoch)):
            return []
        out = self._chat_timing(rank)      # a step's timing whose `Training =>` line never came
        step = int(printed_step) + 1
        self.last_step[rank] = step
        total = vals.get("Total Steps", "")
        losses = {key: num(vals.get(name)) for key, name in (
            ("actor_loss", "Actor Loss"), ("critic_loss", "Critic Loss"), ("unsupervised_loss", "Unsupervised Loss"))}
        metrics = {key: num(vals.get(name)) for key, name in (("advantage", "Advantage"), ("return", "Return"))}
        return out + [record("progress", self.name, rank, step, epoch=int(epoch),
                             total_steps=int(total) if is_digits(total) else None,
                             loss=losses["actor_loss"],
                             losses={k: v for k, v in losses.items() if v is not None} or None,
                             metrics={k: v for k, v in metrics.items() if v is not None} or None)]

    def _chat_phase(self, phase: str, seconds: str, rest: str, rank) -> list[dict]:
        """One of the three lines of a DeepSpeed-Chat step's timing (see CHAT_PHASE): the
        end-to-end time is the step's, generation and training its compute; one timing record,
        given at the third line."""
        ms = to_ms(num(seconds), "s")
        if phase == "End-to-End":      # (its rates: `, TFLOPs: 5.23, Samples/sec: 1.89, ...`)
            fields = {name.strip(" ,"): printed for name, _, printed in
                      (part.partition(": ") for part in rest.split(", ")[:12])}
            out = self._chat_timing(rank)
            self.chat_timing[rank] = {"step": self.last_step.get(rank), "step_time_ms": ms, "timers_ms": {},
                                      "tflops": num(fields.get("TFLOPs")), "samples_per_s": num(fields.get("Samples/sec"))}
            return out
        held = self.chat_timing.get(rank)
        if held is None or ms is None:
            return []
        held["timers_ms"]["generate_time" if phase == "Generation" else "training_time"] = ms
        return self._chat_timing(rank) if phase == "Training" else []

    def _chat_timing(self, rank) -> list[dict]:
        """The held DeepSpeed-Chat step timing of `rank`, as its record (none held: [])."""
        held = self.chat_timing.pop(rank, None)
        if held is None:
            return []
        compute = sum(held["timers_ms"].values())
        return [record("timing", self.name, rank, held["step"], step_time_ms=held["step_time_ms"],
                       timers_ms=held["timers_ms"] or None, lanes_ms={"compute": round(compute, 3)} if compute else None,
                       tflops=held["tflops"], samples_per_s=held["samples_per_s"])]

    def _chat_step_line(self, line: str, rank) -> list[dict] | None:
        """DeepSpeed-Chat step 3 `epoch: E|step: S|name: x|...` as the regex path reads it, or
        None where that path would take another branch or reject the line."""
        if ("NCCL" in line or ("step=" in line and "[Rank" in line) or "SamplesPerSec=" in line
                or "time (ms)" in line or "Latency:" in line):
            return None
        e, sep, rest = line[7:].partition("|step: ")
        st, sep2, text = rest.partition("|")
        if not (sep and sep2 and is_digits(e) and is_digits(st)):
            return None
        return self._chat_step(e, st, text[:1000], rank)

    def _chat_step_at(self, text: str, start: int, end: int, rank) -> list[dict] | None:
        if not text.startswith("epoch: ", start, end) or not printable_ascii(text, start, end):
            return None
        return self._chat_step_line(text[start:end], rank)

    def _latency_fast(self, pa: str, pb: str, pc: str, pd: str, rank=None) -> list[dict] | None:
        """What `_latency` builds from four runs of ASCII digits and dots, spelled out; None
        where `num` would decide otherwise ('1.2.3', or 400 digits: inf)."""
        try:
            a, b, c, d = float(pa), float(pb), float(pc), float(pd)
        except ValueError:
            return None
        t = a + b + c + d
        if t - t != 0.0:
            return None
        if self.gas > 1:
            return self._micro_batch(rank, a, b, c, d)
        n = self.latency_count.get(rank, 0) + 1
        self.latency_count[rank] = n
        return [{"kind": "progress", "rank": rank, "step": n, "framework": "deepspeed",
                 "step_inferred": True, "params_b": a, "step_time_ms": seconds_to_ms(b),
                 "tflops": c, "samples_per_s": d}]

    @staticmethod
    def _other_branch(text: str, start: int, end: int) -> bool:
        """Would `fast` take the line down a branch other than the reader's?"""
        return (text.startswith(("epoch: ", "Model Parameters: "), start, end)
                or text.find("NCCL", start, end) >= 0)

    @staticmethod
    def _latency_defers(tail: str | None) -> bool:
        """Would `fast` leave a latency line with this tail to the full path?  So is one where
        a second latency line runs on (two prints glued, see `glued.py`): the full path cuts
        them apart, where a run would read the two as one step."""
        return tail is not None and tail != "" and ("NCCL" in tail or "SamplesPerSec=" in tail or "time (ms)" in tail
                               or ("step=" in tail and "[Rank" in tail) or "Model Parameters: " in tail)

    def _latency_at(self, text: str, start: int, end: int, rank) -> list[dict] | None:
        if not text.startswith("Model Parameters: ", start, end):
            return None
        m = LATENCY_LINE.fullmatch(text, start, end)
        if m is None:
            return None
        a, b, c, d, tail = m.groups()
        return None if self._latency_defers(tail) else self._latency_fast(a, b, c, d, rank)

    def _latency_run(self, text: str, pos: int, end: int) -> tuple[int, int, list]:
        """`_latency_at` on each line of a run of unprefixed latency lines (see `Parser.runs`)."""
        out: list = []
        n = 0
        match, defers, build = LATENCY_RUN.match, self._latency_defers, self._latency_fast
        while pos < end:
            m = match(text, pos, end)
            if m is None:
                break
            line_end = m.end()
            if line_end - pos >= READ_LINE:
                break
            a, b, c, d, tail = m.groups()
            recs = None if tail and defers(tail) else build(a, b, c, d)
            if recs is None:
                break
            out += recs
            n += 1
            pos = line_end + 1
        return pos, n, out

    def _step_at(self, text: str, start: int, end: int, rank) -> list[dict] | None:
        at = text.find("[Rank ", start, end)        # the first, as `fast` reads it
        if at < 0:
            return None
        m = STEP_AT.fullmatch(text, at, end)
        if m is None or not printable_ascii(text, start, at) or self._other_branch(text, start, end):
            return None
        return self._step(m.groups(), rank)

    def _throughput_at(self, text: str, start: int, end: int, rank) -> list[dict] | None:
        j = text.find(", RunningAvgSamplesPerSec=", start, end)
        if j < 0:
            return None
        head = text.rfind(" ", start, j) + 1 or start
        m = THROUGHPUT_AT.fullmatch(text, head, end)
        if m is None or not printable_ascii(text, start, head) or self._other_branch(text, start, end) \
                or (text.find("step=", start, end) >= 0 and text.find("[Rank", start, end) >= 0):
            return None
        if m[1] is None and not interesting(text[start:end]):
            return []       # `N/M, RunningAvg...` alone holds no keyword: `feed` drops it
        return self._throughput(m.groups()[:9], rank)

    def fast(self, line: str) -> list[dict] | None:
        """The common DeepSpeed lines without a regex, for an unprefixed printable line:
        DeepSpeed-Chat `Model Parameters: .. B, Latency: ..s, TFLOPs: .., Samples/sec: ..`,
        log_dist `[Rank N] step=N, skipped=N, lr=[x` and the ThroughputTimer line.  Each is
        taken only where the regex path would take the same branch and the same match; any
        doubt returns None and the caller takes the full path."""
        if line[:7] == "epoch: ":
            return self._chat_step_line(line, None)
        if "NCCL" in line:
            return None
        rank_step = "step=" in line and "[Rank" in line
        if line[:18] == "Model Parameters: ":
            if rank_step or "SamplesPerSec=" in line or "time (ms)" in line or line.find("Model Parameters: ", 18) > 0:
                return None     # (the last: two prints glued, which the full path cuts apart)
            a, sep, rest = line[18:].partition(" B, Latency: ")
            b, sep2, rest = rest.partition("s, TFLOPs: ")
            c, sep3, rest = rest.partition(", Samples/sec: ")
            d = rest.partition(",")[0]
            if not (sep and sep2 and sep3 and a and b and c and d):
                return None
            digits = a + b + c + d
            if not digits.isascii() or digits.strip("0123456789."):
                return None
            return self._latency_fast(a, b, c, d)
        if rank_step:
            i = line.find("[Rank ")
            if i < 0:
                return None
            r, sep, rest = line[i + 6:].partition("] step=")
            if not (sep and is_digits(r)):
                return None
            st, sep, rest = rest.partition(", skipped=")
            if not (sep and is_digits(st)):
                return None
            sk, sep, rest = rest.partition(", lr=[")
            if not (sep and is_digits(sk)):
                return None
            lr = rest.lstrip(" \t").partition(",")[0].partition("]")[0]
            if lr == "" or not lr.isascii() or lr.strip("-0123456789.eE+"):
                return None
            return self._step((r, st, sk, lr), None)
        j = line.find(", RunningAvgSamplesPerSec=")
        if j < 0:
            return None
        head = line[:j].rpartition(" ")[2]
        if head[:6] == "epoch=":
            e, sep, rest = head[6:].partition("/micro_step=")
            mi, sep2, gs = rest.partition("/global_step=")
            if not (sep and sep2 and is_digits(e) and is_digits(mi) and is_digits(gs)):
                return None
            g = [e, mi, gs, None, None]
        else:
            a, sep, b = head.partition("/")
            if not (sep and is_digits(a) and is_digits(b)):
                return None
            g = [None, None, None, a, b]
        avg, sep, rest = line[j + 26:].partition(", CurrSamplesPerSec=")
        if not (sep and is_decimal(avg)):
            return None
        cur, sep, tail = rest.partition(",")
        if not (is_decimal(cur) or cur == "inf"):
            return None
        mem = mx = None
        if sep:
            tail = sep + tail
            if tail[:15] == ", MemAllocated=":
                mem, sep, rest = tail[15:].partition("GB, MaxMemAllocated=")
                mx, sep2, _ = rest.partition("GB")
                if not (sep and sep2 and is_decimal(mem) and is_decimal(mx)):
                    return None
        g += [avg, cur, mem, mx]
        return self._throughput(g, None)

    def parse(self, line: str, rank: int | None) -> list[dict]:
        if COMM_OP in line:
            return self._comm_op(line, rank)
        if "step=" in line and "[Rank" in line:
            m = STEP.search(line)
            if m:
                return self._step(m.groups(), rank)
        if "SamplesPerSec=" in line:
            m = THROUGHPUT.search(line)
            if m:
                return self._throughput(m.groups(), rank)
        if "time (ms)" in line:
            m = BREAKDOWN.search(line)
            if m:
                return self._breakdown(m.group(1) or m.group(2), parse_timer_list(m.group(3)), rank)
        if "Latency:" in line:
            m = CHAT_LAT.search(line)
            if m:
                return self._latency(m.groups(), rank)
        if "iter time (s): " in line:
            m = PIPE_STEP.search(line)
            if m:
                return self._pipe_step(m.groups(), rank)
        if "|step:" in line:
            m = CHAT_STEP.match(line)
            if m:
                return self._chat_step(m.group(1), m.group(2), m.group(3), rank)
        if "| PPO Epoch: " in line and line.startswith("Epoch: "):
            return self._ppo_step(line, rank)
        if "=> Latency: " in line:
            m = CHAT_PHASE.match(line)
            if m:
                return self._chat_phase(m.group(1), m.group(2), m.group(3), rank)
        if "E2E latency=" in line:
            m = CHAT_E2E.search(line)
            if m:
                timers = {}
                extra = {}
                for part in m.group(2).split("|")[:16]:
                    im = _E2E_ITEM.match(part)
                    if im:
                        name = im.group(1).strip()
                        if "SamplesPerSec" in name:
                            extra[name] = num(im.group(2))
                        else:
                            timers[name.lower().replace(" ", "_")] = to_ms(num(im.group(2)), "s")
                lanes = {}
                compute = sum(v for k, v in timers.items() if k in ("generate_time", "training_time") and v)
                if compute:
                    lanes["compute"] = round(compute, 3)
                return [record("timing", self.name, rank, self.last_step.get(rank),
                               step_time_ms=to_ms(num(m.group(1)), "s"), timers_ms=timers, lanes_ms=lanes,
                               samples_per_s=extra.get("CurSamplesPerSec"))]
        if "Evaluating" in line:
            m = EVAL_HDR.search(line)
            if m:
                ep = int(m.group(2)) if m.group(2) else None
                self.eval_epoch[rank] = ep
                return [record("eval", self.name, rank, self.last_step.get(rank), phase="start",
                               metric=m.group(1), epoch=ep)]
        if line.startswith("ppl:"):
            m = PPL.match(line)
            if m:
                return [record("eval", self.name, rank, self.last_step.get(rank), phase="result",
                               ppl=num(m.group(1)), epoch=self.eval_epoch.get(rank))]
        if "gradient_accumulation_steps" in line:
            m = GAS.search(line)
            if m and int(m.group(1)) > 0:
                self.gas = int(m.group(1))
            return []
        if "chosen_last_scores" in line:
            m = REWARD.search(line)
            if m:
                return [record("eval", self.name, rank, self.last_step.get(rank), phase="result",
                               chosen_score=num(m.group(1)), accuracy=num(m.group(2)),
                               epoch=self.eval_epoch.get(rank))]
        if rank in self.profiles or PROFILE_HEAD in line:
            return self._profile_line(line, rank)
        return []
