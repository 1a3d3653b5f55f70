"""What the `nomatch` workload of bench_dispatcher.py is made of, and what each part costs.

`nomatch` holds every corpus line that yields no record.  Not all of them match nothing: some
are read for the stream's state (DeepSpeed's `Grad overflow on iteration N`, the latency line
DeepSpeed-Chat prints before its step line, pycocotools' table rows), and their records come on
a later line.  This splits the set four ways and times each part through `feed_chunk`, one
stream per log file as the probe would read it:

- cold:   lines that fail the keyword pre-check (`scan.interesting`): no parser looks at them;
- nccl:   `NCCL INFO` lines (chatter, and topology lines read into the NCCL parser's state);
- unread: other lines whose removal from their log changes none of its records;
- read:   other lines whose removal changes some record of their log (read for state).

A line is `read` or `unread` by removing, from its log, all its lines of the same shape (digits
aside) and comparing the records: a shape's lines are read or unread together.

    .venv/bin/python bench/parsers/nomatch_parts.py [--repeat N]

Splitting takes a few minutes (every log parsed again once per shape); timing, seconds.
"""
from __future__ import annotations

import argparse
import re
import time
from collections import defaultdict

from bench_dispatcher import blocks, load, reference_ms

from ridgescope.parsers import Dispatcher
from ridgescope.parsers.scan import interesting

SHAPE = re.compile(r"\d+")


def records_of(lines: list[str]) -> list[dict]:
    d = Dispatcher()
    out: list = []
    for line in lines:
        out += d.feed(line)
    return out + d.flush()


def no_record_lines(lines: list[str]) -> list[int]:
    """Indexes of the lines that yield no record, as bench_dispatcher's `classify` picks them."""
    d, out = Dispatcher(), []
    for i, line in enumerate(lines):
        if not d.feed(line) and not d.events.tb and len(line) < 400:
            out.append(i)
    return out


def split(files: dict[str, list[str]]) -> dict[str, dict[str, list[str]]]:
    """{part: {file: its lines of that part, in order}}."""
    parts: dict = {name: defaultdict(list) for name in ("cold", "nccl", "unread", "read")}
    for name, lines in files.items():
        quiet = no_record_lines(lines)
        by_shape = defaultdict(list)
        for i in quiet:
            line = lines[i]
            if not interesting(line):
                parts["cold"][name].append(line)
            elif "NCCL INFO" in line:
                parts["nccl"][name].append(line)
            else:
                by_shape[SHAPE.sub("0", line)].append(i)
        if not by_shape:
            continue
        whole = records_of(lines)
        for indexes in by_shape.values():
            gone = set(indexes)
            kept = [line for i, line in enumerate(lines) if i not in gone]
            part = "unread" if records_of(kept) == whole else "read"
            parts[part][name].extend(lines[i] for i in indexes)
    return parts


def cpu_seconds(streams: list[list[bytes]], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        for stream in streams:
            d = Dispatcher()
            for block in stream:
                d.feed_chunk(block)
            d.flush()
        best = min(best, time.process_time() - t0)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    parts = split(load())
    print(f"reference_ms {reference_ms(args.repeat)}")
    print(f"{'part':8s} {'lines':>7s} {'ms':>8s} {'us/line':>8s} {'lines/s':>11s}")
    total_lines = total_s = 0.0
    for name, per_file in parts.items():
        streams = [blocks(lines) for lines in per_file.values() if lines]
        n = sum(len(lines) for lines in per_file.values())
        secs = cpu_seconds(streams, args.repeat)
        total_lines, total_s = total_lines + n, total_s + secs
        print(f"{name:8s} {n:7d} {secs * 1e3:8.1f} {secs / n * 1e6:8.2f} {n / secs:11,.0f}")
    print(f"{'all':8s} {total_lines:7.0f} {total_s * 1e3:8.1f} {total_s / total_lines * 1e6:8.2f} "
          f"{total_lines / total_s:11,.0f}")


if __name__ == "__main__":
    main()
