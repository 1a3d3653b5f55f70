"""Compare two jobs lane by lane and say which lane changed, and by how much."""
from __future__ import annotations

import json
import math
import sys

from ridgescope.cli.common import StoreError, add_stack_args, fail, print_table, query
from ridgescope.sql import library


def register(parser) -> None:
    add_stack_args(parser)
    parser.add_argument("job_a", metavar="JOB_A", help="the reference job")
    parser.add_argument("job_b", metavar="JOB_B", help="the job to compare with it")
    parser.add_argument("--format", choices=["table", "json"], default="table")


def summarise(job_a: str, job_b: str, columns: list[str], rows: list) -> dict:
    """The comparison, with the lane whose ms per step changed most (by absolute ms)."""
    lanes = [dict(zip(columns, row)) for row in rows]
    for lane in lanes:
        if lane["delta_pct"] is not None and math.isnan(lane["delta_pct"]):
            lane["delta_pct"] = None
    step = next((x for x in lanes if x["lane"] == "step"), None)
    others = [x for x in lanes if x["lane"] != "step"]
    changed = max(others, key=lambda x: abs(x["delta_ms"]), default=None)
    return {
        "job_a": job_a, "job_b": job_b,
        "steps_a": step["steps_a"] if step else 0, "steps_b": step["steps_b"] if step else 0,
        "step_delta_ms": step["delta_ms"] if step else None,
        "step_delta_pct": step["delta_pct"] if step else None,
        "changed_lane": changed["lane"] if changed else None,
        "changed_delta_ms": changed["delta_ms"] if changed else None,
        "changed_delta_pct": changed["delta_pct"] if changed else None,
        "lanes": [{k: x[k] for k in ("lane", "a_ms_per_step", "b_ms_per_step", "delta_ms",
                                     "delta_pct")} for x in lanes],
    }


def compare(args, job_a: str, job_b: str) -> dict:
    columns, rows = query(args, library.render("compare_jobs", job_a=job_a, job_b=job_b))
    result = summarise(job_a, job_b, columns, rows)
    for job, count in ((job_a, result["steps_a"]), (job_b, result["steps_b"])):
        if not count:
            raise library.LibraryError(f"no steps recorded for job {job!r}")
    return result


def _pct(value) -> str:
    return "n/a" if value is None else f"{value:+.1f}%"


def sentence(result: dict) -> str:
    return (f"{result['job_b']} vs {result['job_a']}: step time {result['step_delta_ms']:+.1f} ms"
            f" ({_pct(result['step_delta_pct'])}); the {result['changed_lane']} lane changed most:"
            f" {result['changed_delta_ms']:+.1f} ms per step"
            f" ({_pct(result['changed_delta_pct'])})")


def run(args) -> int:
    try:
        result = compare(args, args.job_a, args.job_b)
    except (StoreError, library.LibraryError) as exc:
        return fail(str(exc))
    if args.format == "json":
        print(json.dumps(result))
        return 0
    print_table(["lane", f"{args.job_a} ms", f"{args.job_b} ms", "delta ms", "delta"],
                [[x["lane"], x["a_ms_per_step"], x["b_ms_per_step"], x["delta_ms"],
                  _pct(x["delta_pct"])] for x in result["lanes"]], out=sys.stdout)
    print(sentence(result))
    return 0
