"""Jobs in the store: framework, world size, hosts, times, tags and a step summary."""
from __future__ import annotations

import datetime as dt
import json
import sys

from ridgescope.cli.common import StoreError, add_stack_args, fail, print_table, query
from ridgescope.sql import library


def register(parser) -> None:
    add_stack_args(parser)
    parser.add_argument("--tag", action="append", metavar="KEY=VALUE",
                        help="only jobs with this tag (repeatable: all must match)")
    parser.add_argument("--since", metavar="DURATION", help="only jobs started in the last 7d, 2w, 36h…")
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--format", choices=["table", "json"], default="table")


def _time(ns: int) -> str:
    if not ns:
        return ""
    return dt.datetime.fromtimestamp(ns / 1e9, dt.timezone.utc).strftime("%Y-%m-%d %H:%M")


def fetch_jobs(args) -> list[dict]:
    sql = library.render("jobs", tags=library.parse_tags(args.tag),
                         since_days=library.parse_since(args.since), limit=args.limit)
    columns, rows = query(args, sql, max_rows=max(args.limit, 1))
    return [dict(zip(columns, row)) for row in rows]


def run(args) -> int:
    try:
        jobs = fetch_jobs(args)
    except (StoreError, library.LibraryError) as exc:
        return fail(str(exc))
    if args.format == "json":
        print(json.dumps(jobs, default=str))
        return 0
    if not jobs:
        print("no jobs recorded" + (" with those tags" if args.tag else ""))
        return 0
    columns = ["job", "framework", "ranks", "hosts", "started (UTC)", "minutes", "exit", "steps",
               "step ms", "slow %", "tags"]
    rows = []
    for j in jobs:
        minutes = (j["ended_ns"] - j["started_ns"]) / 60e9 if j["ended_ns"] and j["started_ns"] else ""
        rows.append([j["job"], j["framework"], j["world_size"], len(j["hosts"]),
                     _time(j["started_ns"]), minutes, "" if j["exit_code"] == -1 else j["exit_code"],
                     j["step_count"], j["step_ms"], 100 * (j["slow_share"] or 0.0),
                     ",".join(f"{k}={v}" for k, v in sorted(j["tags"].items()))])
    print_table(columns, rows, out=sys.stdout)
    return 0
