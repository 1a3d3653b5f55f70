"""One row per step of a job: duration, baseline, cause, culprit rank, excess, lanes."""
from __future__ import annotations

import json

from ridgescope.cli.common import StoreError, add_stack_args, fail, literal, print_table, query
from ridgescope.schemas.kinds import LANES

LANE_KEYS = LANES + ("idle",)


def register(parser) -> None:
    add_stack_args(parser)
    parser.add_argument("--job", required=True)
    parser.add_argument("--slow", action="store_true", help="only the slow steps")
    parser.add_argument("--format", choices=["table", "json"], default="table")


def fetch_steps(args, job: str, slow_only: bool = False) -> list[dict]:
    where = f"job = {literal(job)}" + (" AND slow" if slow_only else "")
    lanes = ", ".join(f"{k}_ms" for k in LANE_KEYS)
    columns, rows = query(args, f"""
        SELECT step, rank_count, duration_ms, baseline_ms, slow, cause, culprit_rank,
               excess_ms, skew_ms, confidence, phase, {lanes}
        FROM steps FINAL WHERE {where} ORDER BY step""", max_rows=1_000_000)
    out = []
    for row in rows:
        item = dict(zip(columns, row))
        item["slow"] = bool(item["slow"])
        item["lanes_ms"] = {k: round(float(item.pop(f"{k}_ms")), 3) for k in LANE_KEYS}
        out.append(item)
    return out


def _culprit(step: dict) -> int | str:
    """The table's culprit: a rank, or `?` where none is known (-1 in the store and in JSON)."""
    return step["culprit_rank"] if step["culprit_rank"] >= 0 else "?"


def run(args) -> int:
    try:
        steps = fetch_steps(args, args.job, args.slow)
    except StoreError as exc:
        return fail(str(exc))
    if args.format == "json":
        print(json.dumps(steps, indent=1))
        return 0
    if not steps:
        print(f"no steps recorded for job {args.job!r}")
        return 0
    columns = ["step", "ranks", "ms", "baseline", "excess", "slow", "cause", "culprit"] + [
        k[:5] for k in LANE_KEYS]
    rows = [[s["step"], s["rank_count"], s["duration_ms"], s["baseline_ms"], s["excess_ms"],
             "SLOW" if s["slow"] else "", s["cause"] if s["slow"] else "",
             _culprit(s) if s["slow"] else ""] + [s["lanes_ms"][k] for k in LANE_KEYS]
            for s in steps]
    print_table(columns, rows)
    return 0
