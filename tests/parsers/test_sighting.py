"""A stream's launcher marks are looked for in whole blocks while the stream is young, then at
each block's ends (`sighting.py`): a launcher's lines that start after a long preamble, inside
a block, still read as they do from the stream's start."""
from __future__ import annotations

from ridgescope.parsers import Dispatcher
from ridgescope.parsers.sighting import EDGE, YOUNG, Sighting

from .conftest import CAPTURED, SRUN_LOGS, blocks_and_lines

PREAMBLE = b"".join(b"Collecting package-%06d from the mirror, no wheel cached for it\n" % i
                    for i in range(YOUNG // 64 + 4000))
"""More than a young stream's bytes of chatter (a job's `pip install` before its launcher starts)."""


def in_blocks(data: bytes, size: int = 65536) -> list[dict]:
    d = Dispatcher()
    out = []
    for at in range(0, len(data), size):
        out += d.feed_chunk(data[at:at + size])
    return out + d.flush()


def test_a_mark_is_looked_for_whole_while_young_then_at_the_blocks_ends():
    middle = b"x" * 3 * EDGE + b"[default1]:" + b"x" * 3 * EDGE
    assert Sighting("[default").look(middle, young=True)
    old = Sighting("[default")
    assert not old.look(middle, young=False)
    assert old.look(b"x" * 3 * EDGE + b"[default1]:step 5\n", young=False)
    assert old.look(b"no mark here\n" * 1000, young=False)      # once shown, shown
    assert Sighting("]<std").look("[1,0]<stdout>:step 5\n" + "x" * 3 * EDGE, young=False)


def test_a_glimpse_looks_as_a_sighting_does_and_keeps_nothing():
    """pdsh's hosts are named once (`WORLD INFO DICT`): a block that does not name them again
    is not looked at whole for them."""
    world = Sighting("WORLD INFO DICT: {")
    named = b"x" * 3 * EDGE + b"WORLD INFO DICT: {'a': [0]}\n" + b"x" * 3 * EDGE
    assert world.glimpse(named, young=True) and not world.glimpse(named, young=False)
    assert world.glimpse(named[:4 * EDGE], young=False)
    assert not world.glimpse(b"no hosts named\n" * 1000, young=True)
    assert not world.shown


def test_a_launchers_lines_after_a_long_preamble_read_as_from_the_start():
    """srun's labels (lines it passed on in 1024-byte pieces joined), around torchrun's `--tee`
    prefixes (ranks flattened, lines written in two parts joined), and kubectl's pod prefixes,
    starting inside a block past the young bytes."""
    for name in [*SRUN_LOGS, "slurm-22.05.8_srun-label_lines-over-1024-bytes_2rank.log",
                 "slurm-22.05.8_srun-label_lines-of-1023-to-2048-bytes_2rank.log"]:
        captured = (CAPTURED / name).read_bytes()
        alone, _ = blocks_and_lines(captured)
        assert in_blocks(PREAMBLE + captured) == alone
    pods = b"".join(b"[pod/llama-worker-%d/pytorch] step %d loss 2.0\n" % (i % 2, i) for i in range(1, 200))
    recs = in_blocks(PREAMBLE + b"[pod/llama-master-0/pytorch] step 1 loss 2.1\n" + pods)
    assert {r["rank"] for r in recs} == {0, 1, 2} and len(recs) == 200


def test_a_line_fed_alone_is_relabelled_where_it_shows_any_mark():
    """`feed` spells the marks out (as constants, for speed): each module's mark, and no other
    line past a stream's first LOOK (which are looked at for stern's pods), sends a line through
    the node labels.  (A line of bytes is read as text where it is ASCII; the `é` keeps it bytes,
    for the marks in bytes.)"""
    from ridgescope.parsers.kubectl import POD
    from ridgescope.parsers.pdsh import RANK_INSIDE, RUNNER, WORLD
    from ridgescope.parsers.skypilot import PID
    from ridgescope.parsers.stern import LOOK
    from ridgescope.parsers.torchx import FIRST_WORKER, MARK
    marks = (PID, RUNNER, WORLD, RANK_INSIDE, POD, MARK, FIRST_WORKER)
    whole = {RANK_INSIDE: RANK_INSIDE + "3]:"}     # (a rank's prefix is looked for with its `]:`)
    for line in ("plain step 5 loss 2.0 é", *(f"x{whole.get(mark, mark)}y step 5 é" for mark in marks)):
        for form in (line, line.encode()):
            d = Dispatcher()
            for _ in range(LOOK):
                d.feed("chatter\n")
            seen = []
            d.labels.line = lambda text, seen=seen: seen.append(text) or text
            d.feed(form)
            assert seen == ([] if line.startswith("plain") else [form]), line
    d = Dispatcher()
    seen = []
    d.labels.line = lambda text, seen=seen: seen.append(text) or text
    d.feed("plain step 5 loss 2.0")
    assert seen == ["plain step 5 loss 2.0"]        # a stream's first line: looked at
