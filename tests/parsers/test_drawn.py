"""A bar's records say when the bar first drew their step (`drawn_ns`), where the reader says
when it read each part (`base.CLOCK`, which the log probe sets): the end of that step."""
from __future__ import annotations

import re

import pytest

from ridgescope.parsers import Dispatcher
from ridgescope.parsers.base import CLOCK
from ridgescope.probes.logprobe import cut_read

from .test_captured import CAPTURED, parse_file


def read_redraw_by_redraw(data: bytes, per_read: int = 1) -> tuple[list[dict], list[bytes]]:
    """Records of `data` read `per_read` writes (a redraw, or a line) at a time as the log probe
    reads it, with the number of the read for its time; and the reads."""
    writes = [r for r in re.findall(rb"\r?[^\r\n]*\n?", data) if r]
    reads = [b"".join(writes[i:i + per_read]) for i in range(0, len(writes), per_read)]
    d, out, pending, since = Dispatcher(), [], b"", 0
    try:
        for i, piece in enumerate(reads):
            parts, pending, since = cut_read(pending, since, piece, i)
            for drawn_ns, lines, redraws in parts:
                CLOCK.now_ns = drawn_ns
                if lines:
                    out += d.feed_chunk(lines)
                if redraws:
                    out += d.feed_redraws(redraws)
        CLOCK.now_ns = since
        if pending:
            out += d.feed_chunk(pending)
        out += d.flush()
    finally:
        CLOCK.now_ns = None
    return out, reads


@pytest.mark.parametrize("per_read", [1, 2, 3])
def test_a_loops_own_bar_gives_the_read_that_first_drew_each_step(per_read):
    """Also where a read brings the end of the redraw held back and the next redraws at once
    (the held one came with the read before)."""
    data = (CAPTURED / "accelerate-1.15.0_own-loop_tqdm-steps-bar_pipe.log").read_bytes()
    recs, reads = read_redraw_by_redraw(data, per_read)
    first: dict[int, int] = {}
    for i, piece in enumerate(reads):
        for m in re.finditer(rb"\| *(\d+)/24 \[", piece):
            first.setdefault(int(m.group(1)), i)
    progress = [r for r in recs if r["kind"] == "progress"]
    assert [(r["step"], r["drawn_ns"]) for r in progress] == [(s, first[s]) for s in range(1, 25)]
    # without a clock (a file read later), no record says when
    assert all("drawn_ns" not in r for r in parse_file(
        "accelerate-1.15.0_own-loop_tqdm-steps-bar_pipe.log"))


@pytest.mark.parametrize("name", ["keras-3.15.1_fit-325-step-epochs_pipe.log",
                                  "transformers-5.24.0_trainer_tqdm_pipe.log",
                                  "lightning-2.6.6_tqdmprogressbar_pipe.log",
                                  "accelerate-1.15.0_own-loop_tqdm-epoch-iteration-bars_pipe.log"])
def test_each_frameworks_bar_says_when_it_drew_each_step(name):
    """Every step of the training bar carries the read that first drew it: later steps were
    drawn later, and the records are those of the bar read without a clock."""
    recs, _ = read_redraw_by_redraw((CAPTURED / name).read_bytes())
    progress = [r for r in recs if r["kind"] == "progress" and r.get("step") is not None
                and not r.get("summary")]
    assert len(progress) >= 8 and all("drawn_ns" in r for r in progress)
    drawn = [r["drawn_ns"] for r in progress]
    assert drawn == sorted(drawn) and len(set(drawn)) == len(drawn)
    assert [{k: v for k, v in r.items() if k != "drawn_ns"} for r in recs] == parse_file(name)
