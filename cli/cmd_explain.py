"""Answer the seven questions for one step: why was it slow, and which rank started it."""
from __future__ import annotations

import json

from ridgescope.cli.common import StoreError, add_stack_args, fail, literal, query
from ridgescope.pipeline import explain

LANE_COLUMNS = ("input_ms, transfer_ms, compute_ms, communication_ms, checkpoint_ms, idle_ms, "
                "comm_wait_ms")


def register(parser) -> None:
    add_stack_args(parser)
    parser.add_argument("--job", required=True)
    parser.add_argument("--step", type=int, required=True)
    parser.add_argument("--format", choices=["text", "json"], default="text")


def _dicts(columns, rows) -> list[dict]:
    return [dict(zip(columns, r)) for r in rows]


def gather(args) -> tuple[dict | None, list[dict], dict, dict, dict]:
    job = literal(args.job)
    steps = _dicts(*query(args, f"""SELECT step, duration_ms, baseline_ms, slow, cause,
        culprit_rank, excess_ms, skew_ms, confidence, phase FROM steps FINAL
        WHERE job = {job} AND step = {int(args.step)}"""))
    ranks = _dicts(*query(args, f"""SELECT rank, t0_ns, t1_ns, duration_ms, {LANE_COLUMNS},
        arrival_ns, source FROM step_rank FINAL WHERE job = {job} AND step = {int(args.step)}
        ORDER BY rank"""))
    base_rows = _dicts(*query(args, f"""SELECT rank, median(input_ms) AS input,
        median(transfer_ms) AS transfer, median(compute_ms) AS compute,
        median(communication_ms) AS communication, median(checkpoint_ms) AS checkpoint
        FROM (SELECT * FROM step_rank FINAL WHERE job = {job}) AS r
        WHERE step IN (SELECT step FROM steps FINAL WHERE job = {job} AND phase = 'normal'
                       AND NOT slow)
        GROUP BY rank"""))
    baselines = {int(b.pop("rank")): b for b in base_rows}
    write_mb, gpu = {}, {}
    if ranks:
        lo, hi = min(r["t0_ns"] for r in ranks), max(r["t1_ns"] for r in ranks)
        io_rows = query(args, f"""SELECT rank, (max(write_bytes) - min(write_bytes)) / 1e6
            FROM host_samples FINAL WHERE job = {job}
            AND ts_ns BETWEEN {lo - 1_000_000_000} AND {hi + 1_000_000_000} GROUP BY rank""")[1]
        write_mb = {int(r): float(mb) for r, mb in io_rows}
        for rank, metrics in query(args, f"""SELECT rank, metrics FROM gpu_samples FINAL
                WHERE job = {job} AND ts_ns BETWEEN {lo} AND {hi + 1_000_000_000}
                ORDER BY ts_ns""")[1]:
            gpu.setdefault(int(rank), {}).update(metrics)
    return (steps[0] if steps else None), ranks, baselines, write_mb, gpu


def run(args) -> int:
    try:
        step, ranks, baselines, write_mb, gpu = gather(args)
    except StoreError as exc:
        return fail(str(exc))
    if step is None:
        return fail(f"no step {args.step} recorded for job {args.job!r}")
    pairs = explain.answers(step, ranks, baselines, write_mb, gpu)
    if args.format == "json":
        print(json.dumps({"step": step, "answers": [{"question": q, "answer": a}
                                                     for q, a in pairs]}, default=str))
        return 0
    print(explain.headline(step))
    for question, answer in pairs:
        print(f"\n{question}\n   {answer}")
    return 0
