"""A synthetic fleet of training jobs with known properties, for tests, the demo and benches.

``fleet()`` describes the jobs (JobSpec); ``rows(spec)`` turns one job into the rows the sink
would insert (table → rows, columns as in ridgescope.pipeline.sink_rows.COLUMNS).  The same seed
always gives the same rows, so a test states what the store must answer and never stores data.

Known properties of the default fleet of 30 jobs (names ``job-01`` … ``job-30``):

- every job: 8 ranks on 2 hosts (4 ranks each), except ``job-03``: 32 ranks on 4 hosts;
  lanes per step ≈ input 20, transfer 10, compute 600, communication 150, idle 20 ms (±2 %),
  a 1,000 ms checkpoint every 100 steps;
- ``job-12`` is ``job-11`` with a communication lane 10 % slower, and nothing else changed;
- ``job-05`` checkpoints every 50 steps at 8,000 ms (amortised 160 ms per step for 200 steps);
- ``job-08`` is input-bound: 400 ms input per step, 40 % GPU utilisation, and its slow steps
  are input-caused;
- ``node-07`` is the straggler host: every job on it has 6 extra slow steps whose culprit is a
  rank on node-07;
- ``job-03``'s slow steps at steps 33, 77, 120 and 181 have rank 17 as culprit;
- ``job-01``'s three slowest steps are 10 (input, +900 ms), 20 (communication, +700 ms) and
  30 (compute, +500 ms);
- tags: ``team=llm`` for jobs 1–20, ``team=vision`` for 21–30; ``model=70b`` odd, ``7b`` even;
- job i starts at ``start_ns + (i - 1) × 12 h``, so two jobs a day.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

from ridgescope.pipeline.sink_rows import COLUMNS

LANE_NAMES = ("input", "transfer", "compute", "communication", "checkpoint", "idle")
FRAMEWORKS = ("megatron", "deepspeed", "hf_trainer", "lightning", "torchtitan")
STRAGGLER_HOST = "node-07"
HOURS = 3600 * 10**9
DAY_NS = 24 * HOURS


@dataclass
class SlowStep:
    step: int
    cause: str
    culprit_rank: int
    excess_ms: float


@dataclass
class JobSpec:
    name: str
    index: int
    framework: str
    world_size: int
    hosts: list[str]
    tags: dict[str, str]
    start_ns: int
    steps: int
    lanes_ms: dict[str, float]
    checkpoint_every: int
    checkpoint_ms: float
    gpu_util: float
    noise_seed: int
    slow: list[SlowStep] = field(default_factory=list)

    @property
    def ranks_per_host(self) -> int:
        return self.world_size // len(self.hosts)

    def host_of(self, rank: int) -> str:
        return self.hosts[rank // self.ranks_per_host]

    def is_checkpoint(self, step: int) -> bool:
        return step % self.checkpoint_every == 0


def fleet(n_jobs: int = 30, steps: int = 200, start_ns: int = 0, seed: int = 1234,
          n_hosts: int = 12) -> list[JobSpec]:
    """The default fleet (see the module docstring); needs n_jobs ≥ 12 for every property."""
    rng = random.Random(seed)
    pool = [f"node-{i:02d}" for i in range(1, n_hosts + 1)]
    specs = []
    for i in range(1, n_jobs + 1):
        n_job_hosts = 4 if i == 3 else 2
        hosts = [pool[(2 * (i - 1) + k) % len(pool)] for k in range(n_job_hosts)]
        lanes = {"input": 20.0, "transfer": 10.0, "compute": 600.0, "communication": 150.0,
                 "checkpoint": 0.0, "idle": 20.0}
        spec = JobSpec(
            name=f"job-{i:02d}", index=i, framework=FRAMEWORKS[i % len(FRAMEWORKS)],
            world_size=32 if i == 3 else 8, hosts=hosts,
            tags={"team": "llm" if i <= 20 else "vision", "model": "70b" if i % 2 else "7b"},
            start_ns=start_ns + (i - 1) * 12 * HOURS, steps=steps, lanes_ms=lanes,
            checkpoint_every=100, checkpoint_ms=1000.0, gpu_util=90.0,
            noise_seed=rng.randrange(1 << 30))
        if spec.name == "job-05":
            spec.checkpoint_every, spec.checkpoint_ms = 50, 8000.0
        if spec.name == "job-08":
            spec.lanes_ms["input"] = 400.0
            spec.gpu_util = 40.0
        cause = "input" if spec.name == "job-08" else "compute"
        if STRAGGLER_HOST in hosts:
            culprit = hosts.index(STRAGGLER_HOST) * spec.ranks_per_host + 1
            spec.slow += [SlowStep(s, cause, culprit, 300.0 + 10 * k)
                          for k, s in enumerate((15, 45, 75, 105, 135, 165))]
        spec.slow += [SlowStep(60, "input", 0, 250.0), SlowStep(90, "input", 0, 260.0)]
        if spec.name == "job-01":
            spec.slow += [SlowStep(10, "input", 2, 900.0), SlowStep(20, "communication", 5, 700.0),
                          SlowStep(30, "compute", 6, 500.0)]
        if spec.name == "job-03":
            spec.slow += [SlowStep(s, "compute", 17, 400.0) for s in (33, 77, 120, 181)]
        spec.slow = [s for s in spec.slow if s.step <= steps]
        specs.append(spec)
    by_name = {s.name: s for s in specs}
    if "job-11" in by_name and "job-12" in by_name:
        a, b = by_name["job-11"], by_name["job-12"]
        b.noise_seed = a.noise_seed          # the same noise, so only communication differs
        b.hosts, b.world_size = list(a.hosts), a.world_size
        b.slow = [SlowStep(s.step, s.cause, s.culprit_rank, s.excess_ms) for s in a.slow]
        b.lanes_ms = dict(a.lanes_ms, communication=a.lanes_ms["communication"] * 1.10)
    return specs


def step_lanes(spec: JobSpec) -> list[dict[str, float]]:
    """The lanes (ms) of every step of the job, slow steps and checkpoints included."""
    rng = random.Random(spec.noise_seed)
    slow = {s.step: s for s in spec.slow}
    out = []
    for step in range(1, spec.steps + 1):
        noise = [1 + rng.uniform(-0.02, 0.02) for _ in LANE_NAMES]
        lanes = {lane: spec.lanes_ms[lane] * f for lane, f in zip(LANE_NAMES, noise)}
        if spec.is_checkpoint(step):
            lanes["checkpoint"] += spec.checkpoint_ms
        if step in slow:
            lanes[slow[step].cause] += slow[step].excess_ms
        out.append(lanes)
    return out


def rows(spec: JobSpec, inserted_ns: int = 1) -> dict[str, list[list]]:
    """Every row the sink would write for this job, keyed by table."""
    rng = random.Random(spec.noise_seed ^ 0x5EED)
    slow = {s.step: s for s in spec.slow}
    out: dict[str, list[list]] = {t: [] for t in COLUMNS}
    base_lanes = sum(spec.lanes_ms.values())
    t = spec.start_ns
    for step, lanes in enumerate(step_lanes(spec), start=1):
        duration = sum(lanes.values())
        t0, t = t, t + int(duration * 1e6)
        verdict = slow.get(step)
        culprit = verdict.culprit_rank if verdict else -1
        culprit_host = spec.host_of(culprit) if verdict else ""
        phase = "checkpoint" if spec.is_checkpoint(step) else "steady"
        out["steps"].append([
            spec.name, step, t, spec.world_size, duration, base_lanes,
            bool(verdict), verdict.cause if verdict else "", culprit,
            verdict.excess_ms if verdict else 0.0, verdict.excess_ms * 0.9 if verdict else 1.0,
            0.9, phase, *(lanes[k] for k in LANE_NAMES), inserted_ns, culprit_host])
        if verdict:
            out["alerts"].append([spec.name, step, t, verdict.cause, culprit, verdict.excess_ms,
                                  f"step {step}: {verdict.cause} on rank {culprit}",
                                  inserted_ns])
        for rank in range(spec.world_size):
            rank_lanes = dict(lanes)
            wait = 0.0
            if verdict and rank != culprit:
                # A victim: it finished its own work early and waited in the all-reduce.
                rank_lanes[verdict.cause] -= verdict.excess_ms
                rank_lanes["communication"] += verdict.excess_ms
                wait = verdict.excess_ms
            out["step_rank"].append([
                spec.name, step, rank, spec.host_of(rank), t0, t, duration,
                *(rank_lanes[k] for k in LANE_NAMES), wait, t - int(wait * 1e6), "hooks",
                inserted_ns])
            if step % 10 == 0:
                util = max(0.0, min(100.0, spec.gpu_util + rng.uniform(-3, 3)))
                out["gpu_samples"].append([
                    spec.name, rank, spec.host_of(rank), f"GPU-{spec.name}-{rank}", t,
                    {"gpu_util": util, "mem_used_gb": 40.0}])
            if step % 20 == 0:
                out["host_samples"].append([
                    spec.name, rank, spec.host_of(rank), t, 1000 + rank, step * 0.8,
                    step * 10**6, step * 10**5, 8 * 10**9, 5])
        if step % 10 == 0:
            record = {"kind": "step", "step": step, "loss": round(2.0 - step / 1000, 4)}
            out["progress"].append([spec.name, 0, spec.hosts[0], t, step, "step", step,
                                    "stdout", json.dumps(record)])
    cmd = f"torchrun --nnodes {len(spec.hosts)} train.py --job {spec.name}"
    out["jobs"].append([spec.name, spec.hosts[0], spec.world_size, cmd, dict(spec.tags),
                        spec.start_ns, t, 0, t, spec.framework, list(spec.hosts),
                        {"slurm_job_id": str(100000 + spec.index)}])
    return out


def fleet_rows(specs: list[JobSpec], inserted_ns: int = 1) -> dict[str, list[list]]:
    merged: dict[str, list[list]] = {t: [] for t in COLUMNS}
    for spec in specs:
        for table, table_rows in rows(spec, inserted_ns).items():
            merged[table].extend(table_rows)
    return merged
