"""torchx's `ROLE/N ` prefix (`torchx.py`), on the captured output of `torchx run ... dist.ddp`:
each replica's lines read as srun's labelled lines of its node, torchrun's `[M]:` inside as
its `[defaultM]:`."""
from __future__ import annotations

import re

from ridgescope.parsers import Dispatcher
from ridgescope.parsers.srun import flatten
from ridgescope.parsers.torchx import TorchxRoles

from .conftest import CAPTURED, blocks_and_lines

CRASH = "torchx-0.7.0_torch-2.15_dist-ddp-2x2_rank3-raises_pipe.log"
CRASH_TTY = "torchx-0.7.0_torch-2.15_dist-ddp-2x2_rank3-raises_tty.log"
BARS = "torchx-0.7.0_tqdm-4.70.1_dist-ddp-2x1_bars-of-2-replicas_pipe.log"
PYTHON_BAR = "torchx-0.7.0_tqdm-4.70.1_utils-python_unlabelled-bar_pipe.log"


def as_srun_with_tee(data: bytes) -> bytes:
    """The log as `srun --label torchrun --tee 3` would print it: `crash/1 [1]:` as `1: [default1]:`."""
    data = re.sub(rb"(?m)^crash/([0-9]) \[([0-9])\]:", rb"\1: [default\2]:", data)
    return re.sub(rb"(?m)^crash/([0-9]) ", rb"\1: ", data)


def test_a_replicas_lines_read_as_srun_and_torchrun_label_them():
    data = (CAPTURED / CRASH).read_bytes()
    block, lines = blocks_and_lines(data)
    srun_block, srun_lines = blocks_and_lines(as_srun_with_tee(data))
    assert block == srun_block and lines == srun_lines
    steps = {}
    for r in block:
        if r["kind"] == "progress":
            steps.setdefault(r["rank"], []).append(r["step"])
    # replica 1's local rank 1 is rank 3, as its `[rank3]:` traceback says: it printed 2 steps
    assert steps == {0: [1, 2, 3], 1: [1, 2, 3], 2: [1, 2, 3], 3: [1, 2]}
    culprit = [r for r in block if r.get("exception") == "RuntimeError" and "shape mismatch" in r["message"]]
    assert [(r["rank"], r["step"]) for r in culprit] == [(3, 2)]
    victims = sorted(r["rank"] for r in block if "Connection closed by peer" in (r.get("message") or ""))
    assert victims == [0, 1, 2]
    first = [r for r in block if r.get("first")]
    assert sorted((r["rank"], r["failed_ranks"]) for r in first) == [(0, [0, 1]), (3, [2, 3])]
    # each replica's agent names a local rank: replica 1's `local_rank: 1` is rank 3
    agents = [(r["rank"], r["local_rank"]) for r in block if r.get("error") == "child_failed" and "launcher" not in r]
    assert agents == [(3, 1), (0, 0)]


def test_on_a_terminal_the_coloured_prefixes_read_alike():
    tty, _ = blocks_and_lines((CAPTURED / CRASH_TTY).read_bytes())
    pipe, _ = blocks_and_lines((CAPTURED / CRASH).read_bytes())

    def shape(recs):
        return sorted(str((r["kind"], r["rank"], r["step"], r.get("exception"), r.get("loss"))) for r in recs)
    assert shape(tty) == shape(pipe)


def test_each_replicas_bar_gives_its_steps_once_though_the_replicas_parts_interleave():
    data = (CAPTURED / BARS).read_bytes()
    assert b"it/s, loss=2.400]tee_bars/1 [0]:\n" in data      # a redraw ended behind the other's prefix
    block, lines = blocks_and_lines(data)
    assert block == lines
    for rank, last_loss in ((0, 1.5), (1, 1.49)):
        mine = [r for r in block if r["rank"] == rank]
        assert [r["step"] for r in mine] == list(range(1, 11))
        assert mine[-1]["loss"] == last_loss and mine[-1]["total_steps"] == 10
    assert len(block) == 20


def test_only_a_role_seen_where_torchx_alone_puts_a_prefix_is_read_as_one():
    """A line that merely starts like a prefix (`shards/1 ready`) keeps its text.  Where torchx's
    logger has shown (`torchx run`), a role is learnt from its first line or a redraw too; where
    it has not (`torchx log`), only from its prefix before torchrun's `[0]:`."""
    head = b"torchx 2026-12-06 13:54:31 INFO     Waiting for the app to finish...\n"
    log = (b"trainer/1 [0]:step 1/5 loss 2.0000 step_time_ms 3.6\n"
           b"shards/1 step 2/5 loss 1.0000 step_time_ms 1.2\n"
           b"trainer/1 step 3/5 loss 0.6667 step_time_ms 1.0\n")
    for data in (head + log, log):
        block, lines = blocks_and_lines(data)
        assert [(r["rank"], r["step"]) for r in block] == [(1, 1), (None, 2), (1, 3)]
        assert [(r["rank"], r["step"]) for r in lines] == [(1, 1), (None, 2), (1, 3)]
    plain = b"trainer/1 step 3/5 loss 0.6667 step_time_ms 1.0\n"
    assert [r["rank"] for r in blocks_and_lines(head + plain)[0]] == [1]
    assert [r["rank"] for r in blocks_and_lines(plain)[0]] == [None]
    redraw = b"\rtrainer/0 step 3/5 loss 0.6667 step_time_ms 1.0\n"
    assert [r["rank"] for r in blocks_and_lines(head + redraw)[0]] == [0]
    assert [r["rank"] for r in blocks_and_lines(redraw)[0]] == [None]


def test_torchx_logs_lines_alone_read_as_torchx_runs():
    """`torchx log` prints the replicas' lines without torchx's logger's: the captured run's
    lines alone give its records."""
    data = (CAPTURED / CRASH).read_bytes()
    alone = b"".join(line for line in data.splitlines(keepends=True) if line.startswith(b"crash/"))
    assert b"torchx" not in alone.replace(b"/torchx/", b"")
    for got, want in zip(blocks_and_lines(alone), blocks_and_lines(data)):
        assert got == want


def test_a_part_behind_another_replicas_prefix_is_that_replicas():
    """torchrun's `[M]:` inside a line, behind torchx's prefix of the other replica, is that
    replica's worker when the node labels are flattened into one prefix of the job's rank."""
    roles = TorchxRoles()
    flat = flatten(roles.relabel((CAPTURED / BARS).read_bytes()), 1)
    assert roles.roles == ["tee_bars"]
    assert b"loss=1.990][default0]:rank 0 done\n" in flat
    assert b"loss=1.590][default1]:rank 1 done\n" in flat


def test_ingest_numbers_each_replicas_workers_from_the_first_line():
    """`ingest` reads line by line: the workers a node has are read from the file's head, its
    replicas' labels read as srun's (replica 1's `[0]:` comes first, and is rank 2)."""
    from ridgescope.cli.cmd_ingest import read_file
    items = [i for i in read_file(str(CAPTURED / CRASH), None).items if i.record is not None]
    block, _ = blocks_and_lines((CAPTURED / CRASH).read_bytes())
    assert sorted((i.rank, i.record["kind"], i.record["step"]) for i in items) == \
        sorted((r["rank"], r["kind"], r["step"]) for r in block)
    assert (items[0].rank, items[0].record["step"]) == (2, 1)


def test_one_process_bar_redrawn_behind_the_prefix_reads_as_the_loops_own():
    """`utils.python` (no torchrun): tqdm's `\\r` redraws reach torchx whole, and it puts its
    prefix after each.  The role is learnt from its first line after `Waiting for the app to
    finish...`; the bar reads as the same loop's without torchx (`test_cli_parse`), as rank 0."""
    data = (CAPTURED / PYTHON_BAR).read_bytes()
    assert b"\rpython/0  17%|" in data
    untold = Dispatcher()
    assert untold.feed_chunk(data) + untold.flush() == []        # (an unlabelled bar: told, read)
    block, lines = blocks_and_lines(data)
    assert block == lines == []
    d = Dispatcher("tqdm")
    prog = d.feed_chunk(data) + d.flush()
    assert [(r["rank"], r["step"], r["total_steps"]) for r in prog] == [(0, step, 6) for step in range(1, 13)]
    assert min(prog, key=lambda r: r["it_per_s"])["step"] == 10     # the second epoch's slow 4th step
    assert [r.get("iter_in_epoch") for r in prog[6:]] == list(range(1, 7))
