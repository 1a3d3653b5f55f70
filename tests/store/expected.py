"""What the store must answer for the synthetic fleet, computed in Python from its rows."""
from __future__ import annotations

from collections import Counter, defaultdict

from ridgescope.pipeline.sink_rows import COLUMNS


def records(fleet_rows: dict, table: str) -> list[dict]:
    return [dict(zip(COLUMNS[table], row)) for row in fleet_rows[table]]


def per_job_means(fleet_rows: dict, column: str) -> dict[str, float]:
    sums, counts = defaultdict(float), Counter()
    for r in records(fleet_rows, "steps"):
        sums[r["job"]] += r[column]
        counts[r["job"]] += 1
    return {job: sums[job] / counts[job] for job in sums}


def per_job_share(fleet_rows: dict, column: str) -> dict[str, float]:
    num, den = defaultdict(float), defaultdict(float)
    for r in records(fleet_rows, "steps"):
        num[r["job"]] += r[column]
        den[r["job"]] += r["duration_ms"]
    return {job: num[job] / den[job] for job in num}


def culprit_hosts(fleet_rows: dict) -> Counter:
    return Counter(r["culprit_host"] for r in records(fleet_rows, "steps")
                   if r["slow"] and r["culprit_host"])


def per_host_means(fleet_rows: dict, column: str) -> dict[str, float]:
    sums, counts = defaultdict(float), Counter()
    for r in records(fleet_rows, "step_rank"):
        sums[r["host"]] += r[column]
        counts[r["host"]] += 1
    return {host: sums[host] / counts[host] for host in sums}
