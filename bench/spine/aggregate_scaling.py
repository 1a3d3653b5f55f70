"""CPU time of the aggregate (`pipeline.windows.aggregate`, no Kafka) per step, by job size.

Every rank sends one row per step, as the hook probe does; the step is judged when its last
rank's row comes.  What a row costs should not grow with the job's ranks.

    .venv/bin/python bench/spine/aggregate_scaling.py [--ranks 64 512 2048 8192] [--steps 5]
"""
from __future__ import annotations

import argparse
import json
import time

from ridgescope.pipeline import verdict, windows

MS = 1_000_000


def per_step_ms(ranks: int, steps: int) -> float:
    state, rows, cfg = windows.new_job_state(), {}, verdict.VerdictConfig()
    t0 = time.process_time()
    for step in range(1, steps + 1):
        for rank in range(ranks):
            row = {"step": step, "rank": rank, "t0_ns": 0, "t1_ns": 10 * MS, "duration_ms": 10.0,
                   "lanes_ms": {"compute": 10.0}, "arrival_ns": 5, "world_size": ranks, "source": "hook"}
            state, _, _ = windows.aggregate(state, row, cfg, 0, rows)
    return (time.process_time() - t0) / steps * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, nargs="+", default=[64, 512, 2048, 8192])
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    out = {}
    for ranks in args.ranks:
        ms = per_step_ms(ranks, args.steps)
        out[ranks] = {"ms_per_step": round(ms, 1), "rows_per_s": round(ranks / ms * 1000)}
        print(f"{ranks:6d} ranks: {ms:9.1f} ms CPU a step, {ranks / ms * 1000:9.0f} rows/s")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
