"""`srun --label` cuts a line longer than 1024 bytes into labelled lines of 1024 bytes: each
line is put back together, whatever the other tasks print between its pieces."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import argparse
import json
import random

from ridgescope.cli import cmd_parse
from ridgescope.parsers import Dispatcher
from ridgescope.parsers.srun import PIECE, SrunPieces, cut_inside, flatten

from .conftest import blocks_and_lines
from .test_captured import CAPTURED, TEE_BARS_STEPS, parse_file

LONG = "slurm-22.05.8_srun-label_lines-over-1024-bytes_2rank.log"
BARS = "slurm-22.05.8_tqdm-4.70.1_srun-label_bars-of-2-ranks_stderr.log"
EXACT = "slurm-22.05.8_srun-label_lines-of-1023-to-2048-bytes_2rank.log"
NESTED = "slurm-22.05.8_torch-2.15_srun-label-around-torchrun-tee3_lines-in-two-writes_2x2rank.log"
UNBUFFERED = "slurm-22.05.8_srun-label-unbuffered_lines-in-two-writes_3rank.log"
PRINT_ARGS = "slurm-22.05.8_srun-u-label_print-args-cut-between-writes_2rank.log"


def as_srun_writes_it(label: bytes, line: bytes) -> list[bytes]:
    """A task's line as `srun --label` passes it on: pieces of 1024 bytes, each a line, and
    the newline of a line that is a whole number of pieces long as a piece of its own."""
    return [label + line[i:i + PIECE] + b"\n" for i in range(0, len(line) + 1, PIECE)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([b"0: ", b"1: ", b" 7: "]),
                          st.one_of(st.integers(0, 3500), st.sampled_from([PIECE - 1, PIECE, PIECE + 1, 2 * PIECE]))),
                max_size=8), st.integers(1, 3))
def test_cut_lines_come_back_whole(lines, stride):
    """Whatever the lengths (a whole number of pieces included) and however the tasks'
    pieces interleave: `stride` pieces of each task in turn."""
    lines = [(label, bytes([48 + n % 10]) * n) for label, n in lines]   # digits: no print's first word
    tasks: dict = {}
    for label, text in lines:
        tasks.setdefault(label, []).extend(as_srun_writes_it(label, text))
    stream: list[bytes] = []
    while any(tasks.values()):
        for queue in tasks.values():
            stream += queue[:stride]
            del queue[:stride]
    pieces = SrunPieces()
    joined = pieces.join(b"".join(stream))
    got: dict = {}
    for line in (joined.split(b"\n")[:-1] if joined else []) + pieces.drain():
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


def test_srun_label_lines_at_the_piece_lengths():
    """Lines of 1023, 1024, 1025 and 2048 bytes, and an empty line after the 1024-byte one:
    each step read whole, its throughput at the end of the line included, and nothing more."""
    data = (CAPTURED / EXACT).read_bytes()
    assert data.count(b"0: \n") == 3      # the 1024 and 2048-byte lines' newlines, and the empty line
    want = [(rank, step, float(f"2.30{rank}"), float(f"300.{rank}"), float(1000 * step + rank))
            for rank in (0, 1) for step in range(1, 5)]
    for recs in (parse_file(EXACT), _by_line(data)):
        assert sorted((r["rank"], r["step"], r["loss"], r["step_time_ms"], r["tokens_per_s"])
                      for r in recs) == want


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


def test_srun_unbuffered_lines_cut_between_a_prints_writes_come_back_whole():
    """`srun -u --label` and `print("step", n, "loss", x, ...)` under PYTHONUNBUFFERED=1, a real
    capture: one line cut after its first word (`0: step` / `0:  6/16 loss ...`), one cut at
    every write and its newline alone (`0: step`, `0:  `, `0: 1/16`, ..., `0: `).  Every step
    of both tasks is read with its step time, rank 1's slow step 10 too; read line by line
    (`feed`) the same."""
    data = (CAPTURED / PRINT_ARGS).read_bytes()
    assert b"\n0: step\n0:  \n0: 1/16\n" in data and b"\n0: step\n0:  6/16 loss" in data
    for recs in (parse_file(PRINT_ARGS), _by_line(data)):
        steps = sorted((r["rank"], r["step"], r["step_time_ms"]) for r in recs if r["kind"] == "progress")
        assert [(rank, step) for rank, step, _ in steps] == [(rank, step) for rank in (0, 1) for step in range(1, 17)]
        assert max(steps, key=lambda s: s[2]) == (1, 10, 500.2)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=6), st.data())
def test_a_prints_writes_cut_anywhere_come_back_as_its_line(numbers, data):
    """A line of `print("step", n1, n2, ...)`, its writes (words, separators, the newline)
    passed on by `srun -u` in reads that end after its first word (or the separator after it)
    and then after any of them, other tasks' lines between: the task's line comes back whole."""
    writes = [b"step"]
    for n in numbers:
        writes += [b" ", b"%d" % n]
    writes.append(b"\n")
    # srun reads as the first write comes: the first read ends after the word or its separator
    first = data.draw(st.sampled_from([1, 2]))
    cuts = sorted({first} | set(data.draw(st.lists(st.integers(first, len(writes) - 1), max_size=len(writes)))))
    reads = [b"".join(writes[a:b]) for a, b in zip([0] + cuts, cuts + [len(writes)])]
    stream = b""
    for read in reads:
        stream += b"0: " + (read if read.endswith(b"\n") else read + b"\n")
        stream += b"1: other task's line 3\n"
    pieces = SrunPieces()
    joined = pieces.join(stream)
    lines = [line for line in joined.split(b"\n")[:-1] + pieces.drain() if line.startswith(b"0: ")]
    assert [line for line in lines if line != b"0: "] == [b"0: " + b"".join(writes[:-1])]


def _by_line(data: bytes) -> list[dict]:
    d = Dispatcher()
    return [r for line in data.split(b"\n") if line for r in d.feed(line + b"\n")] + d.flush()


def _nested_steps(recs: list[dict]) -> list[tuple]:
    return sorted((r["rank"], r["step"], r["loss"], r["step_time_ms"]) for r in recs
                  if r["kind"] == "progress")


NESTED_STEPS = [(rank, step, float(f"2.30{rank}"), float(f"300.{rank}"))
                for rank in range(4) for step in range(1, 5)]


def test_srun_label_around_torchrun_tee():
    """`srun --label torchrun --tee 3` on two nodes of two workers: each line carries the
    node's label and the worker's local rank (`1: [default0]:`), and torchrun's parts of a line
    written in two, behind the label of the node (`0: [default0]:step ... 300.0[default1]:step
    3/4 lo[default0]:`).  Each worker's steps go to its own rank, node x 2 + local rank, read
    whole, line by line, and in blocks of whole lines of any size."""
    data = (CAPTURED / NESTED).read_bytes()
    assert b"0: [default0]:step 2/4 loss 2.300 step_time_ms 300.0[default1]:step 3/4 lo" in data
    assert _nested_steps(parse_file(NESTED)) == NESTED_STEPS
    assert _nested_steps(_by_line(data)) == NESTED_STEPS
    lines = data.splitlines(keepends=True)
    for seed in range(20):
        rng, d, recs, i = random.Random(seed), Dispatcher(nproc_per_node=2), [], 0
        while i < len(lines):
            n = rng.randint(1, 6)
            recs += d.feed_chunk(b"".join(lines[i:i + n]))
            i += n
        assert _nested_steps(recs + d.flush()) == NESTED_STEPS


def test_the_second_nodes_ranks_from_its_first_line(tmp_path, capsys):
    """A node whose lines come first: `parse` reads how many workers a node has from the
    whole file, and the log probe from torchrun's `--nproc-per-node`."""
    lines = [b"1: [default0]:step 1/2 loss 2.5 step_time_ms 90.5\n",
             b"0: [default0]:step 1/2 loss 2.5 step_time_ms 90.5\n",
             b"  1: [default3]:step 1/2 loss 2.5 step_time_ms 90.5\n"]
    assert flatten(lines[2], 4) == b"[default7]:step 1/2 loss 2.5 step_time_ms 90.5\n"
    d = Dispatcher(nproc_per_node=4)
    assert [r["rank"] for line in lines for r in d.feed(line)] == [4, 0, 7]
    log = tmp_path / "nodes.log"
    log.write_bytes(b"".join(lines))
    assert cmd_parse.run(_parse_args([str(log), "--format", "json"])) == 0
    assert [json.loads(row)["rank"] for row in capsys.readouterr().out.splitlines()] == [4, 0, 7]


def test_a_nodes_agent_names_the_failed_workers_rank_not_the_nodes():
    """Each node's torchrun `--tee 3` log of a 2-node crash (rank 3 raised), labelled as `srun
    --label` passes them on and in node order: the agent of node 1 says `failed (exitcode: -6)
    local_rank: 1`, which is rank 3's failure (its label, 1, names the node).  Read whole, line
    by line and in blocks, and where the node's workers are known from the first block alone."""
    data = b"".join(b"%d: %s" % (node, line)
                    for node in (0, 1)
                    for line in (CAPTURED / f"torch-2.15_torchrun-tee3_2node_rank3-raises_node{node}.log")
                    .read_bytes().splitlines(keepends=True))
    block, lines = blocks_and_lines(data)
    for recs in (block, lines):
        agents = [(r["rank"], r["local_rank"], r["exitcode"]) for r in recs
                  if r.get("error") == "child_failed" and "launcher" not in r]
        assert agents == [(0, 0, 1), (3, 1, -6)]
        reports = sorted((r["rank"], r["failed_ranks"]) for r in recs if r.get("first"))
        assert reports == [(0, [0, 1]), (3, [2, 3])]
    # no worker's line seen on the stream yet: how many a node has is not known, the label is kept
    alone = Dispatcher().feed(b"1: E1206 14:44:14.733000 13631 torch/distributed/elastic/multiprocessing/"
                              b"api.py:1002] failed (exitcode: -6) local_rank: 1 (pid: 13638) of binary: x\n")
    assert [(r["rank"], r["local_rank"]) for r in alone] == [(1, 1)]


def _parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    cmd_parse.register(p)
    return p.parse_args(argv)



C10D = "slurm-22.05.8_torch-2.15_srun-label-torchrun-c10d_loglevel-info_nodes-out-of-task-order_2x2rank.log"


def _step_times(recs: list[dict], step: int) -> dict[int, float]:
    return {r["rank"]: r["step_time_ms"] for r in recs if r["kind"] == "progress" and r["step"] == step}


def test_a_c10d_rendezvous_numbers_the_nodes_as_its_agents_logged():
    """`srun --label torchrun --rdzv-backend c10d` with LOGLEVEL=INFO: the rendezvous made task 1
    node 0, as each agent logged (`1: ... global_ranks=[0, 1]`).  Task 1's `[default1]:` is
    rank 1, whose step 10 took 500.2 ms; read as task x 2 + local rank it was rank 3.  Read
    whole, in blocks of any size and line by line."""
    data = (CAPTURED / C10D).read_bytes()
    assert b"1: I1207 07:52:39.958000 2374 torch/distributed/elastic/agent/server/api.py:552]   " \
           b"global_ranks=[0, 1]\n" in data
    want = {0: 50.2, 1: 500.2, 2: 50.2, 3: 50.1}
    block, lines = blocks_and_lines(data)
    assert _step_times(parse_file(C10D), 10) == want
    assert _step_times(block, 10) == want and _step_times(lines, 10) == want
    assert {r["step"] for r in lines if r["kind"] == "progress" and r["rank"] == 1} == set(range(1, 17))
    chunks = data.splitlines(keepends=True)
    for seed in range(5):
        rng, d, recs, i = random.Random(seed), Dispatcher(), [], 0
        while i < len(chunks):
            n = rng.randint(1, 40)
            recs += d.feed_chunk(b"".join(chunks[i:i + n]))
            i += n
        assert _step_times(recs + d.flush(), 10) == want
    # without the agents' lines, the task's place: rank 3
    bare = b"".join(line for line in chunks if b"global_ranks=[" not in line)
    assert _step_times(blocks_and_lines(bare)[0], 10) == {0: 50.2, 1: 50.1, 2: 50.2, 3: 500.2}


def test_an_agents_result_says_how_many_workers_its_node_has():
    """A stream that shows a node's rendezvous result before its workers' lines places node 1's
    first line at once, where it would otherwise take it for a node of one worker."""
    d = Dispatcher()
    d.feed(b"1:   global_ranks=[2, 3]\n")         # torch 1.x's form: the message's lines bare
    assert [r["rank"] for r in d.feed(b"1: [default0]:step 1/2 loss 2.5 step_time_ms 90.5\n")] == [2]
    assert [r["rank"] for r in Dispatcher().feed(b"1: [default0]:step 1/2 loss 2.5 step_time_ms 90.5\n")] == [1]
