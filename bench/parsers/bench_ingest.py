"""Lines per second per core of `ridgescope ingest`'s reading of a file (`cmd_ingest.read_file`:
timestamps, world size, the Dispatcher fed line by line), on each text log of the test corpus.

Times are CPU time of this process, best of --repeat; no broker or store runs (what ingest
publishes afterwards is the pipeline's cost, measured in bench/spine).

    .venv/bin/python bench/parsers/bench_ingest.py [--repeat N] [--out bench/parsers/results-ingest.json]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import time
from pathlib import Path

from ridgescope.cli.cmd_ingest import read_file

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "corpus"


def best_seconds(path: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        with contextlib.redirect_stderr(io.StringIO()):     # (its notes to the user)
            t0 = time.process_time()
            read_file(path, None)
            best = min(best, time.process_time() - t0)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(Path(__file__).with_name("results-ingest.json")))
    args = ap.parse_args(argv)
    per_file, lines_all, seconds_all = {}, 0, 0.0
    for p in sorted(CORPUS.rglob("*.log")):
        with open(p, "rb") as fh:
            lines = sum(1 for _ in fh)
        secs = best_seconds(str(p), args.repeat)
        per_file[str(p.relative_to(CORPUS))] = round(lines / secs)
        lines_all += lines
        seconds_all += secs
    results = {"all": {"lines": lines_all, "seconds": round(seconds_all, 4),
                       "lines_per_s": round(lines_all / seconds_all)}, "by_file": per_file}
    print(f"ingest reading {lines_all} lines  {seconds_all:7.3f} s  {lines_all / seconds_all:12,.0f} lines/s")
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
