"""DeepSpeed: log_dist step lines, ThroughputTimer, wall_clock_breakdown, DeepSpeed-Chat prints."""
from __future__ import annotations

import regex

from .base import LIMIT, Parser, num, record, to_ms
from .megatron import timer_records

STEP = regex.compile(r"\[Rank (\d++)\] step=(\d++), skipped=(\d++), lr=\[\s*+([-\d.eE+]++)")
THROUGHPUT = regex.compile(
    r"(?:epoch=(\d++)/micro_step=(\d++)/global_step=(\d++)|(\d++)/(\d++)), "
    r"RunningAvgSamplesPerSec=([\d.]++), CurrSamplesPerSec=([\d.]++|inf)"
    r"(?:, MemAllocated=([\d.]++)GB, MaxMemAllocated=([\d.]++)GB)?")
BREAKDOWN = regex.compile(r"(?:\[Rank \d++\] )?time \(ms\)\s*+\|(.{0,4000}+)")
CHAT_LAT = regex.compile(
    r"Model Parameters: ([\d.]++) B, Latency: ([\d.]++)s, TFLOPs: ([\d.]++), Samples/sec: ([\d.]++)")
CHAT_STEP = regex.compile(r"epoch: (\d++)\|step: (\d++)\|(.{0,1000}+)")
CHAT_E2E = regex.compile(r"\|E2E latency=([\d.]++)s (.{0,1000}+)")
_E2E_ITEM = regex.compile(r"\|?\s*+([A-Za-z][\w ]{0,40}?)\s*+=\s*+([\d.]++)s?")
EVAL_HDR = regex.compile(r"\*{3,}+ Evaluating (\w++)(?:, Epoch (\d++)/(\d++))?")
PPL = regex.compile(r"ppl: ([\d.]++|inf|nan)")
REWARD = regex.compile(r"chosen_last_scores \(higher is better\) : ([-\d.]++), acc \(higher is better\) : ([\d.]++)")


class DeepSpeedParser(Parser):
    name = "deepspeed"
    yields_to = frozenset({"megatron"})

    def __init__(self) -> None:
        self.last_step: dict = {}
        self.latency_count: dict = {}
        self.eval_epoch: dict = {}

    def detect(self, line: str) -> bool:
        return ("[deepspeed]" in line or "RunningAvgSamplesPerSec" in line or "ds_config" in line
                or ("[Rank " in line and "step=" in line) or "Model Parameters:" in line
                or line.startswith("ppl:") or "chosen_last_scores" in line
                or "DeepSpeed" in line and "info" in line.lower())

    def parse(self, line: str, rank: int | None) -> list[dict]:
        if "step=" in line and "[Rank" in line:
            m = STEP.search(line, timeout=LIMIT.timeout)
            if m:
                step = int(m.group(2))
                r = rank if rank is not None else int(m.group(1))
                self.last_step[rank] = step
                return [record("progress", self.name, r, step, lr=num(m.group(4)),
                               skipped_steps=int(m.group(3)))]
        if "SamplesPerSec=" in line:
            m = THROUGHPUT.search(line, timeout=LIMIT.timeout)
            if m:
                step = int(m.group(3) or m.group(5))
                epoch = m.group(1) or m.group(4)
                return [record("progress", self.name, rank, step, epoch=int(epoch) if epoch else None,
                               samples_per_s=num(m.group(7)), avg_samples_per_s=num(m.group(6)),
                               mem_gb=num(m.group(8)), max_mem_gb=num(m.group(9)),
                               micro_step=int(m.group(2)) if m.group(2) else None)]
        if "time (ms)" in line:
            m = BREAKDOWN.search(line, timeout=LIMIT.timeout)
            if m:
                return timer_records(self.name, rank, self.last_step.get(rank), m.group(1))
        if "Latency:" in line:
            m = CHAT_LAT.search(line, timeout=LIMIT.timeout)
            if m:
                n = self.latency_count.get(rank, 0) + 1
                self.latency_count[rank] = n
                return [record("progress", self.name, rank, n, step_inferred=True,
                               params_b=num(m.group(1)), step_time_ms=to_ms(num(m.group(2)), "s"),
                               tflops=num(m.group(3)), samples_per_s=num(m.group(4)))]
        if "|step:" in line:
            m = CHAT_STEP.match(line, timeout=LIMIT.timeout)
            if m:
                step = int(m.group(2)) + 1      # printed 0-based
                self.last_step[rank] = step
                vals = {}
                for part in m.group(3).split("|")[:16]:
                    k, _, v = part.partition(":")
                    v = num(v)
                    if v is not None:
                        vals[k.strip()] = v
                return [record("progress", self.name, rank, step, epoch=int(m.group(1)),
                               loss=vals.get("act_loss"), losses=vals or None)]
        if "E2E latency=" in line:
            m = CHAT_E2E.search(line, timeout=LIMIT.timeout)
            if m:
                timers = {}
                extra = {}
                for part in m.group(2).split("|")[:16]:
                    im = _E2E_ITEM.match(part, timeout=LIMIT.timeout)
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
            m = EVAL_HDR.search(line, timeout=LIMIT.timeout)
            if m:
                ep = int(m.group(2)) if m.group(2) else None
                self.eval_epoch[rank] = ep
                return [record("eval", self.name, rank, self.last_step.get(rank), phase="start",
                               metric=m.group(1), epoch=ep)]
        if line.startswith("ppl:"):
            m = PPL.match(line, timeout=LIMIT.timeout)
            if m:
                return [record("eval", self.name, rank, self.last_step.get(rank), phase="result",
                               ppl=num(m.group(1)), epoch=self.eval_epoch.get(rank))]
        if "chosen_last_scores" in line:
            m = REWARD.search(line, timeout=LIMIT.timeout)
            if m:
                return [record("eval", self.name, rank, self.last_step.get(rank), phase="result",
                               chosen_score=num(m.group(1)), accuracy=num(m.group(2)),
                               epoch=self.eval_epoch.get(rank))]
        return []
