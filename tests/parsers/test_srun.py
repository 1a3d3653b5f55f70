"""`srun --label` cuts a line longer than 1024 bytes into labelled lines of 1024 bytes: each
line is put back together, whatever the other tasks print between its pieces."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ridgescope.parsers import Dispatcher
from ridgescope.parsers.srun import PIECE, SrunPieces, cut_inside

from .test_captured import CAPTURED, TEE_BARS_STEPS, parse_file

LONG = "slurm-22.05.8_srun-label_lines-over-1024-bytes_2rank.log"
BARS = "slurm-22.05.8_tqdm-4.70.1_srun-label_bars-of-2-ranks_stderr.log"
UNBUFFERED = "slurm-22.05.8_srun-label-unbuffered_lines-in-two-writes_3rank.log"


def as_srun_writes_it(label: bytes, line: bytes) -> list[bytes]:
    """A task's line as `srun --label` passes it on: pieces of 1024 bytes, each a line."""
    return [label + line[i:i + PIECE] + b"\n" for i in range(0, max(len(line), 1), PIECE)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([b"0: ", b"1: ", b" 7: "]), st.integers(0, 3500)),
                max_size=8), st.integers(1, 3))
def test_cut_lines_come_back_whole(lines, stride):
    """Whatever the lengths (pieces of exactly 1024 included, save for a line that is a whole
    number of pieces long, which srun's output cannot tell from a cut one) and however the
    tasks' pieces interleave: `stride` pieces of each task in turn."""
    lines = [(label, bytes([65 + n % 26]) * n) for label, n in lines if n % PIECE or n == 0]
    tasks: dict = {}
    for label, text in lines:
        tasks.setdefault(label, []).extend(as_srun_writes_it(label, text))
    stream: list[bytes] = []
    while any(tasks.values()):
        for queue in tasks.values():
            stream += queue[:stride]
            del queue[:stride]
    joined = SrunPieces().join(b"".join(stream))
    got: dict = {}
    for line in joined.split(b"\n")[:-1] if joined else []:
        label, _, text = line.partition(b": ")
        got.setdefault(label + b": ", []).append(text)
    want: dict = {}
    for label, text in lines:
        want.setdefault(label, []).append(text)
    assert got == want


def test_the_check_finds_a_cut_line_anywhere_in_a_block():
    piece = b"x" * PIECE
    assert cut_inside(b"0: " + piece + b"\n0: rest\n")
    assert cut_inside(b"1: a\n  12: " + piece)
    assert not cut_inside(b"0: " + piece[:-1] + b"\n0: " + piece + b"x\n")


def test_srun_label_lines_over_1024_bytes():
    """A progress line of ~1,300 bytes reaches us as two labelled lines; the throughput at
    its end is read only once they are put back together."""
    data = (CAPTURED / LONG).read_bytes()
    assert [len(line) for line in data.splitlines()][:2] == [3 + PIECE, 115]
    want = [(rank, step, float(1000 * step + rank)) for rank in (0, 1) for step in range(1, 5)]
    for recs in (parse_file(LONG), _by_line(data)):
        assert sorted((r["rank"], r["step"], r["tokens_per_s"]) for r in recs) == want


def test_srun_label_bars_cut_at_1024_bytes():
    """srun holds each task's bar (a line for the whole bar) and passes it on 1024 bytes at a
    time: redraws cut in two come back whole, and each rank's steps are those it drew."""
    data = (CAPTURED / BARS).read_bytes()
    assert b"\n0: ###" in data and b"\n1: ###" in data     # a redraw's second half, behind its label
    for recs in (parse_file(BARS), _by_line(data)):
        assert sorted((r["rank"], r["step"], r["loss"]) for r in recs if r["kind"] == "progress"
                      ) == TEE_BARS_STEPS


def test_srun_unbuffered_passes_each_write_on_as_a_line():
    """With `-u`, srun writes each read as a line: a line's text and its newline come as two
    lines (the second empty), and a line cut inside its text as two lines that neither reads
    as a step.  That one step is lost; no rank is given another's values."""
    data = (CAPTURED / UNBUFFERED).read_bytes()
    assert b"1: step 3/4 lo\n" in data
    recs = parse_file(UNBUFFERED)
    assert sorted((r["rank"], r["step"], r["loss"], r["step_time_ms"]) for r in recs) == [
        (rank, step, float(f"2.30{rank}"), float(f"300.{rank}"))
        for rank in range(3) for step in range(1, 5) if (rank, step) != (1, 3)]


def _by_line(data: bytes) -> list[dict]:
    d = Dispatcher()
    return [r for line in data.split(b"\n") if line for r in d.feed(line + b"\n")] + d.flush()
