"""A metric's trend across jobs, days or hosts, read from the rollups."""
from __future__ import annotations

import json
import math
import sys

from ridgescope.cli.common import StoreError, add_stack_args, fail, print_table, query
from ridgescope.sql import library

LANES = ("input", "transfer", "compute", "communication", "checkpoint", "idle")
METRICS = ("step_ms", "step_p50_ms", "step_p90_ms", "slow_share", "gpu_util",
           "checkpoint_share") + tuple(f"lane:{lane}" for lane in LANES)


def register(parser) -> None:
    add_stack_args(parser)
    parser.add_argument("--metric", choices=METRICS, default="step_ms",
                        help="step_ms, lane:<lane> (ms per step), slow_share, gpu_util, …")
    parser.add_argument("--by", choices=["job", "day", "host"], default="job")
    parser.add_argument("--tag", action="append", metavar="KEY=VALUE",
                        help="only jobs with this tag (repeatable; not with --by host)")
    parser.add_argument("--since", metavar="DURATION", help="only the last 7d, 2w, 36h…")
    parser.add_argument("--format", choices=["table", "json", "chart"], default="table")


def fetch_trend(args) -> list[dict]:
    if args.by == "host" and args.tag:
        raise library.LibraryError(
            "--tag cannot be combined with --by host: the per-host rollup spans every job")
    params = {"metric": args.metric, "since_days": library.parse_since(args.since)}
    if args.by != "host":
        params["tags"] = library.parse_tags(args.tag)
    columns, rows = query(args, library.render(f"metric_trend_by_{args.by}", **params),
                          max_rows=100_000)
    out = []
    for row in rows:
        item = dict(zip(columns, row))
        value = item.get("value")
        item["value"] = None if value is None or math.isnan(value) else value
        item["key"] = str(item[args.by])
        out.append(item)
    return out


def chart(points: list[dict], metric: str, out=sys.stdout, width: int = 40) -> None:
    """Horizontal bars, one a line, scaled to the largest value."""
    values = [p["value"] for p in points if p["value"] is not None]
    top = max(values, default=0.0) or 1.0
    label_width = max((len(p["key"]) for p in points), default=0)
    out.write(f"{metric}\n")
    for p in points:
        value = p["value"]
        bar = "" if value is None else "█" * max(0, round(width * value / top))
        shown = "n/a" if value is None else f"{value:.3g}"
        out.write(f"{p['key'].ljust(label_width)}  {bar} {shown}\n")


def run(args) -> int:
    try:
        points = fetch_trend(args)
    except (StoreError, library.LibraryError) as exc:
        return fail(str(exc))
    if args.format == "json":
        print(json.dumps([{"key": p["key"], "value": p["value"]} for p in points]))
        return 0
    if not points:
        print("no data for that trend")
        return 0
    if args.format == "chart":
        chart(points, args.metric, out=sys.stdout)
        return 0
    count = "rank_step_count" if args.by == "host" else "step_count"
    print_table([args.by, "steps", args.metric],
                [[p["key"], p[count], "" if p["value"] is None else p["value"]] for p in points],
                out=sys.stdout)
    return 0
