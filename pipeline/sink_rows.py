"""Envelope → ClickHouse row mapping for the sink (pure; one function per kind)."""
from __future__ import annotations

import json
import time

from ridgescope.schemas.kinds import LANES

LANE_COLUMNS = [f"{lane}_ms" for lane in LANES + ("idle",)]

COLUMNS = {
    "jobs": ["job", "host", "world_size", "cmd", "tags", "started_ns", "ended_ns", "exit_code",
             "updated_ns", "framework", "hosts", "scheduler_ids"],
    "progress": ["job", "rank", "host", "ts_ns", "seq", "kind", "step", "stream", "record"],
    "host_samples": ["job", "rank", "host", "ts_ns", "pid", "cpu_s", "read_bytes", "write_bytes",
                     "rss_bytes", "nprocs"],
    "gpu_samples": ["job", "rank", "host", "gpu_uuid", "ts_ns", "metrics"],
    "step_rank": ["job", "step", "rank", "host", "t0_ns", "t1_ns", "duration_ms", *LANE_COLUMNS,
                  "comm_wait_ms", "arrival_ns", "source", "inserted_ns"],
    "steps": ["job", "step", "ts_ns", "rank_count", "duration_ms", "baseline_ms", "slow", "cause",
              "culprit_rank", "excess_ms", "skew_ms", "confidence", "phase", *LANE_COLUMNS,
              "inserted_ns", "culprit_host"],
    "alerts": ["job", "step", "ts_ns", "cause", "culprit_rank", "excess_ms", "message",
               "inserted_ns"],
}


def alert_payload(verdict: dict) -> dict:
    """The alert for a slow step, with a one-line message a human can act on."""
    culprit = verdict["culprit_rank"]
    who = f"rank {culprit}" if culprit >= 0 else "no single rank"
    message = (f"step {verdict['step']} took {verdict['duration_ms']:.0f} ms, "
               f"{verdict['excess_ms']:.0f} ms over its {verdict['baseline_ms']:.0f} ms baseline: "
               f"{verdict['cause']} on {who}")
    if verdict.get("phase") == "eval":
        message += " (an evaluation ran in the step)"   # its lane is the evaluation's, not training's
    return {"step": verdict["step"], "cause": verdict["cause"], "culprit_rank": culprit,
            "excess_ms": verdict["excess_ms"], "message": message}


def dedup_token(table: str, offsets: dict[tuple[str, int], tuple[int, int]],
                digest: str) -> str:
    """insert_deduplication_token for the rows of ``table`` made from one batch, named by the
    Kafka offsets it covers ((topic, partition) -> (first, last)) and a digest of the batch's
    messages: a replay of the same batch is dropped by the table and by the rollups it feeds
    (migration 002).  The digest keeps apart batches at the same offsets of different topics'
    lives: the embedded broker starts every `up` at offset 0 while the store keeps the tokens
    of its last 1,000 inserts, so offsets alone dropped new jobs' rows as replays."""
    ranges = ",".join(f"{t}:{p}:{a}-{b}" for (t, p), (a, b) in sorted(offsets.items()))
    return f"{table}@{ranges}#{digest}"


def _job_extras(host: str, p: dict) -> list:
    """framework, hosts and scheduler ids of a jobs row (columns added by migration 002)."""
    hosts = [str(h) for h in p.get("hosts") or [host] if h]
    scheduler = {str(k): str(v) for k, v in (p.get("scheduler") or {}).items()}
    return [str(p.get("framework") or ""), hosts, scheduler]


def _culprit_host(p: dict) -> str:
    culprit = p.get("culprit_rank", -1)
    for row in p.get("ranks") or []:
        if row.get("rank") == culprit:
            return str(row.get("host") or "")
    return str(p.get("culprit_host") or "")


def _lanes(lanes_ms: dict) -> list[float]:
    return [float(lanes_ms.get(col[:-3], 0.0)) for col in LANE_COLUMNS]


def _step_rank(job: str, host: str, row: dict, now: int) -> list:
    return [job, row["step"], row["rank"], row.get("host", host), row["t0_ns"], row["t1_ns"],
            row["duration_ms"], *_lanes(row["lanes_ms"]), row.get("comm_wait_ms", 0.0),
            row["arrival_ns"], row["source"], now]


def add(tables: dict[str, list], msg: dict) -> None:
    """Append the rows one envelope produces to ``tables`` (table name → rows)."""
    kind, job, rank, host, ts, p = (msg["kind"], msg["job"], msg["rank"], msg["host"],
                                    msg["ts_ns"], msg["p"])
    now = time.time_ns()
    rows = tables.setdefault
    if kind == "step":
        rows("steps", []).append([
            job, p["step"], ts, p["rank_count"], p["duration_ms"], p["baseline_ms"], p["slow"],
            p["cause"], p["culprit_rank"], p["excess_ms"], p["skew_ms"], p["confidence"],
            p["phase"], *_lanes(p["lanes_ms"]), now, _culprit_host(p)])
        for row in p.get("ranks") or []:
            rows("step_rank", []).append(_step_rank(job, host, row, now))
    elif kind == "step_rank":
        rows("step_rank", []).append(_step_rank(job, host, dict(p, rank=rank), now))
    elif kind == "alert":
        rows("alerts", []).append([job, p["step"], ts, p["cause"], p["culprit_rank"],
                                   p["excess_ms"], p["message"], now])
    elif kind == "progress":
        record = p["record"]
        step = record.get("step")
        rows("progress", []).append([
            job, rank, host, ts, msg["seq"], str(record.get("kind", "")),
            step if isinstance(step, int) else -1, p.get("stream", ""),
            json.dumps(record, default=str)])
    elif kind == "host_sample":
        rows("host_samples", []).append([job, rank, host, ts, p["pid"], float(p["cpu_s"]),
                                         p["read_bytes"], p["write_bytes"], p["rss_bytes"],
                                         p["nprocs"]])
    elif kind == "gpu_sample":
        rows("gpu_samples", []).append([job, rank, host, p["gpu_uuid"], ts,
                                        {k: float(v) for k, v in p["metrics"].items()}])
    elif kind == "job_start":
        rows("jobs", []).append([job, host, p["world_size"], " ".join(p["cmd"]),
                                 dict(p.get("tags") or {}), ts, 0, -1, ts,
                                 *_job_extras(host, p)])
    elif kind == "job_end":
        # A whole row again: the jobs table keeps the newest row per job.
        rows("jobs", []).append([job, host, p["world_size"], " ".join(p.get("cmd") or []),
                                 dict(p.get("tags") or {}), p.get("started_ns") or 0, ts,
                                 p["exit_code"], ts, *_job_extras(host, p)])
