"""Lines per second per core of `Dispatcher.feed` (auto-detection included) on the test corpus.

Times are CPU time of this process (`time.process_time`, best of --repeat): on a shared machine
that measures one core's work without the time the process waited for a core.

    .venv/bin/python bench/parsers/bench_dispatcher.py [--repeat N] [--out bench/parsers/results.json]

It measures the parsers it imports: `make bench-parsers` runs it on the pure-Python parsers and
on a compiled wheel's (`results-compiled.json`).

Three workloads, each fed through fresh Dispatchers in one thread:
- nomatch:  corpus lines that yield no record (config dumps, launcher chatter, warnings, ...)
- progress: corpus lines that yield a progress record, grouped per file so detection sticks
- mixed:    every text log of the corpus, in order, as a log probe would see them
- cold:     the part of `nomatch` that fails the cheap pre-check (launcher chatter, arg dumps):
            the cost of a line that no parser looks at
- spine:    the spine job's own `step N/T loss .. step_time_ms ..` line, 50k distinct lines

Each workload runs twice: `feed` one line at a time, and `feed_chunk` on the same lines as bytes
in blocks of up to 64 KiB cut at a newline, the way the log probe reads a pipe (the `*_chunk`
rows; the byte blocks are built before timing, as the probe gets them from `os.read`).
"""
from __future__ import annotations

import argparse
import json
import platform
import re
import time
from pathlib import Path

import ridgescope.parsers
from ridgescope.parsers import Dispatcher
from ridgescope.parsers.scan import interesting

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "corpus"


def load():
    files = {}
    for p in sorted(CORPUS.rglob("*.log")):
        with open(p, "rb") as fh:
            files[str(p.relative_to(CORPUS))] = [raw.decode("utf-8", "replace").rstrip("\n") for raw in fh]
    return files


def classify(files):
    nomatch, progress = [], {}
    for name, lines in files.items():
        d = Dispatcher()
        for line in lines:
            recs = d.feed(line)
            if not recs and not d.events.tb and len(line) < 400:
                nomatch.append(line)
            elif any(r["kind"] == "progress" for r in recs) and "\r" not in line:
                progress.setdefault(name, []).append(line)
    return nomatch, progress


def run(streams, repeat, method="feed"):
    """Best CPU time of feeding every stream to a fresh Dispatcher through ``method``
    (`feed` per line, `feed_chunk` per block of bytes); returns (lines, seconds)."""
    best = float("inf")
    if method == "feed":
        n = sum(len(s) for s in streams)
    else:
        n = sum(block.count(b"\n") for s in streams for block in s)
    for _ in range(repeat):
        t0 = time.process_time()
        for items in streams:
            d = Dispatcher()
            take = getattr(d, method)
            for item in items:
                take(item)
            d.flush()
        best = min(best, time.process_time() - t0)
    return n, best


def reference_ms(repeat: int) -> float:
    """CPU ms of a fixed pure-Python loop of the parsers' kind of work (split, find, a regex, a
    dict, float): the core's own speed, which tells a faster machine from faster code when
    results of two machines are compared."""
    pattern = re.compile(r"loss ([0-9.]+)")
    line = "step 12/60 loss 2.3451 step_time_ms 153.2 lr=0.0001 grad_norm=1.25"
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        for _ in range(100_000):
            toks = line.split(" ")
            fields = {toks[2]: float(pattern.search(line).group(1)), toks[4]: float(toks[5])}
            fields["lr"] = float(line[line.find("lr=") + 3:].partition(" ")[0])
        best = min(best, time.process_time() - t0)
    return round(best * 1000, 1)


def cpu_model() -> str:
    """The CPU as /proc/cpuinfo names it (model name, family, model), where there is one."""
    try:
        pairs = [line.split(":", 1) for line in Path("/proc/cpuinfo").read_text().splitlines()[:12]
                 if ":" in line]
    except OSError:
        return platform.processor() or platform.machine()
    info = {key.strip(): value.strip() for key, value in pairs}
    return ", ".join(f"{key} {info[key]}" for key in ("model name", "cpu family", "model") if key in info)


def blocks(lines, size=65536):
    out, cur, n = [], [], 0
    for line in lines:
        b = line.encode("utf-8", "surrogateescape") + b"\n"
        if n + len(b) > size and cur:
            out.append(b"".join(cur))
            cur, n = [], 0
        cur.append(b)
        n += len(b)
    if cur:
        out.append(b"".join(cur))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(Path(__file__).with_name("results.json")))
    args = ap.parse_args(argv)
    print("parsers:", "compiled (mypyc)" if ridgescope.parsers.COMPILED else "pure Python",
          ridgescope.parsers.__file__)
    files = load()
    nomatch, progress = classify(files)
    results = {}
    cold = [line for line in nomatch if not interesting(line)]
    spine = [f"step {i}/50000 loss {2 + (i % 97) / 100:.4f} step_time_ms {150 + i % 13}.{i % 10}"
             for i in range(1, 50001)]
    for name, streams in (("nomatch", [nomatch]), ("cold", [cold]), ("progress", list(progress.values())),
                          ("spine", [spine]), ("mixed", list(files.values()))):
        n, secs = run(streams, args.repeat)
        results[name] = {"lines": n, "seconds": round(secs, 4), "lines_per_s": round(n / secs)}
        print(f"{name:9s} {n:8d} lines  {secs:7.3f} s  {n / secs:12,.0f} lines/s")
        if not hasattr(Dispatcher, "feed_chunk"):
            continue
        n, secs = run([blocks(s) for s in streams], args.repeat, "feed_chunk")
        results[name + "_chunk"] = {"lines": n, "seconds": round(secs, 4), "lines_per_s": round(n / secs)}
        print(f"{name + '_chunk':15s} {n:8d} lines  {secs:7.3f} s  {n / secs:12,.0f} lines/s")
    per_fw = {}
    for fname, lines in progress.items():
        n, secs = run([lines], args.repeat)
        per_fw[fname] = round(n / secs)
    results["progress_by_file"] = per_fw
    results["machine"] = {"python": platform.python_version(), "cpu": cpu_model(),
                          "reference_ms": reference_ms(args.repeat),
                          "parsers": "compiled" if ridgescope.parsers.COMPILED else "pure"}
    print("reference loop:", results["machine"]["reference_ms"], "ms CPU")
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
