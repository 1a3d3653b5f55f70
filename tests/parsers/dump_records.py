"""Write, as JSON, every record and the stats that the importable parsers give for the corpus,
the captured logs and generated garbage, fed line by line and in blocks.

    python tests/parsers/dump_records.py pure|compiled OUT.json

`test_compiled.py` runs it once on the pure-Python parsers and once on a compiled wheel, and
compares the two files.  Exits with 2 when the parsers imported are not the build named."""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import ridgescope.parsers
from ridgescope.parsers import Dispatcher

DATA = Path(__file__).resolve().parents[1] / "data"
BLOCK = 65536


def logs() -> dict[str, bytes]:
    paths = sorted((DATA / "corpus").rglob("*.log")) + sorted((DATA / "captured").glob("*.log"))
    return {str(p.relative_to(DATA)): p.read_bytes() for p in paths}


def garbage() -> dict[str, bytes]:
    """Inputs no log is made of: random bytes, broken UTF-8, a 1 MB line, ranks interleaved
    mid-line (the same seed each run, so both builds read the same bytes)."""
    rnd = random.Random(20261130)
    corpus = b"".join(logs().values()).split(b"\n")
    shuffled = b"\n".join(rnd.choice(corpus)[: rnd.randrange(1, 300)] for _ in range(4000))
    return {
        "garbage/random-bytes": bytes(rnd.randrange(256) for _ in range(200_000)),
        "garbage/broken-utf8": b"\n".join(line[:-1] + b"\xc3" for line in corpus[:3000]),
        "garbage/1mb-line": b"iteration 1/ 10 | " + b"lm loss: 1.0 | " * 70_000 + b"\nstep 2/10 loss 1.0\n",
        "garbage/interleaved-ranks": shuffled,
    }


def blocks(data: bytes) -> list[bytes]:
    """Whole lines in blocks of up to BLOCK bytes (a longer line alone), as the log probe reads."""
    out, start = [], 0
    while start < len(data):
        end = data.rfind(b"\n", start, start + BLOCK) + 1
        if end <= start:
            nl = data.find(b"\n", start)
            end = len(data) if nl < 0 else nl + 1
        out.append(data[start:end])
        start = end
    return out


def read(data: bytes) -> dict:
    by_line, by_block = Dispatcher(), Dispatcher()
    lines = [rec for raw in data.split(b"\n") if raw for rec in by_line.feed(raw)]
    chunked = [rec for block in blocks(data) for rec in by_block.feed_chunk(block)]
    return {"feed": lines + by_line.flush(), "feed_stats": by_line.stats, "framework": by_line.framework,
            "feed_chunk": chunked + by_block.flush(), "feed_chunk_stats": by_block.stats}


def main() -> int:
    build, out = sys.argv[1], sys.argv[2]
    if ridgescope.parsers.COMPILED != (build == "compiled"):
        print(f"wanted the {build} parsers, imported {ridgescope.parsers.__file__}", file=sys.stderr)
        return 2
    inputs = {**logs(), **garbage()}
    with open(out, "w") as fh:
        json.dump({name: read(data) for name, data in inputs.items()}, fh, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
