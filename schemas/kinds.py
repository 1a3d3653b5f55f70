"""Payload schemas of each message kind, and the Kafka topics they travel on.

A spec maps a payload field to ``(accepted types, required)``.  Raw kinds come from the probes
on the nodes; derived kinds are produced by the pipeline.
"""
from __future__ import annotations

LANES = ("input", "transfer", "compute", "communication", "checkpoint")
"""The five lanes of a step; ``idle`` is whatever none of them covers."""

CAUSES = LANES + ("unknown",)

_NUM = (int, float)
_OPT_STR = (str, type(None))

PAYLOAD_SPECS: dict[str, dict[str, tuple[tuple[type, ...], bool]]] = {
    # --- raw, from the probes -------------------------------------------------------------
    # One summary per rank per step from the framework hook probe.  ``spans`` are
    # [phase, start_ns, end_ns] with phase in probes.phases.PHASE_LANE; ``buckets`` are the DDP
    # gradient buckets as [index, ready_ns, done_ns].
    "step_spans": {
        "step": ((int,), True),
        "t0_ns": ((int,), True),
        "t1_ns": ((int,), True),
        "spans": ((list,), True),
        "buckets": ((list,), True),
        "world_size": ((int,), True),
        "source": ((str,), False),
    },
    # A parsed stdout record (see ridgescope.parsers); ``record`` carries its fields.
    "progress": {
        "record": ((dict,), True),
        "stream": ((str,), False),
        # the rank's steps are timed from its other pipe (probes/step_streams.py)
        "timed_elsewhere": ((bool,), False),
    },
    # Per-process-tree CPU and I/O counters of one rank (cumulative), from /proc.
    "host_sample": {
        "pid": ((int,), True),
        "cpu_s": (_NUM, True),
        "read_bytes": ((int,), True),
        "write_bytes": ((int,), True),
        "rss_bytes": ((int,), True),
        "nprocs": ((int,), True),
    },
    # One GPU's counters over an interval; filled in by the GPU probe.
    "gpu_sample": {
        "gpu_uuid": ((str,), True),
        "metrics": ((dict,), True),
    },
    "job_start": {
        "world_size": ((int,), True),
        "cmd": ((list,), True),
        "tags": ((dict,), False),
        "hosts": ((list,), False),
        "scheduler": ((dict,), False),
        "framework": ((str,), False),
    },
    # Sent by `ridgescope run` when the command exits: closes every open window of the job.
    "job_end": {
        "exit_code": ((int,), True),
        "world_size": ((int,), True),
        "cmd": ((list,), False),
        "tags": ((dict,), False),
        "started_ns": ((int,), False),
        "hosts": ((list,), False),
        "scheduler": ((dict,), False),
        "framework": ((str,), False),
    },
    # --- derived, from the pipeline ---------------------------------------------------------
    "step_rank": {
        "step": ((int,), True),
        "t0_ns": ((int,), True),
        "t1_ns": ((int,), True),
        "duration_ms": (_NUM, True),
        "lanes_ms": ((dict,), True),
        "comm_wait_ms": (_NUM, False),
        "arrival_ns": ((int,), True),
        "world_size": ((int,), True),
        "lane_baseline_ms": ((dict,), False),
        "cpu_s": (_NUM, False),
        "write_bytes": ((int,), False),
        "source": ((str,), True),
    },
    "step": {
        "step": ((int,), True),
        "rank_count": ((int,), True),
        "duration_ms": (_NUM, True),
        "baseline_ms": (_NUM, True),
        "slow": ((bool,), True),
        "cause": ((str,), True),
        "culprit_rank": ((int,), True),
        "excess_ms": (_NUM, True),
        "lanes_ms": ((dict,), True),
        "skew_ms": (_NUM, True),
        "confidence": (_NUM, True),
        "phase": ((str,), True),
        # The per-rank step_rank rows behind the verdict, with their communication wait.
        "ranks": ((list,), False),
    },
    "alert": {
        "step": ((int,), True),
        "cause": ((str,), True),
        "culprit_rank": ((int,), True),
        "excess_ms": (_NUM, True),
        "message": ((str,), True),
    },
}

# Topics.  Raw topics are keyed "job/rank" so each rank stays in order; derived ones by job.
RAW_TOPICS = ("rs.raw.hook", "rs.raw.log", "rs.raw.host", "rs.raw.gpu")
TOPIC_FOR_KIND = {
    "step_spans": "rs.raw.hook",
    "job_start": "rs.raw.hook",
    "job_end": "rs.raw.hook",
    "progress": "rs.raw.log",
    "host_sample": "rs.raw.host",
    "gpu_sample": "rs.raw.gpu",
}
STEP_RANK_TOPIC = "rs.step_rank"
STEPS_TOPIC = "rs.steps"
ALERTS_TOPIC = "rs.alerts"
DEAD_LETTER_TOPIC = "rs.dead_letter"
RECORDS_TOPIC = "rs.records"
"""Raw records that go to the store as they are (progress, host and GPU samples, job rows)."""
