"""SkyPilot's prefix (`(head, rank=0, pid=2481) `, `(worker1, rank=1, pid=2379, ip=10.0.0.3) `)
is read as srun's label of the same node: captured srun logs, their labels turned into
SkyPilot's, give the same records, read in blocks and line by line."""
from __future__ import annotations

import pytest

from ridgescope.parsers.skypilot import as_srun_labels

from .conftest import CAPTURED, SRUN_LOGS, blocks_and_lines, feed_all, reads_as_srun_labels

COLOUR, RESET = "\x1b[36m", "\x1b[0m"


def skypilot_prefix(node: int, coloured: bool = False, with_name: bool = False) -> str:
    """The prefix SkyPilot writes on node `node`'s lines (with the node's name first: before 2023)."""
    name = f"node-{node}, " if with_name else ""
    inner = (f"({name}head, rank=0, pid=2481)" if node == 0
             else f"({name}worker{node}, rank={node}, pid={2379 + node}, ip=10.164.0.{56 + node})")
    return f"{COLOUR}{inner}{RESET} " if coloured else f"{inner} "




@pytest.mark.parametrize("name", SRUN_LOGS)
@pytest.mark.parametrize("form", ["plain", "coloured", "with_name"])
def test_skypilot_prefix_reads_as_the_nodes_srun_label(name, form):
    reads_as_srun_labels(name, lambda node: skypilot_prefix(node, coloured=form == "coloured",
                                                            with_name=form == "with_name"))


def test_a_one_node_clusters_prefix_is_taken_off():
    """`(task, pid=17499) ` names no rank: the lines read as the task printed them."""
    data = (CAPTURED / "nanogpt_train-py_tiny-char_cpu.log").read_bytes()
    prefixed = b"".join(b"(task, pid=17499) " + line for line in data.splitlines(keepends=True))
    plain_block, plain_lines = blocks_and_lines(data)
    sky_block, sky_lines = blocks_and_lines(prefixed)
    assert len([r for r in plain_block if r["kind"] == "progress"]) > 5
    assert sky_block == plain_block and sky_lines == plain_lines


def test_only_a_prefix_at_the_start_of_a_line_is_read():
    """A prefix quoted inside a line is the line's text; SkyPilot's setup prefix, which names
    no rank in its own form, is left to Ray's reading."""
    quoted = "saw (head, rank=0, pid=2481) go\n(worker2, rank=2, pid=7, ip=10.0.0.2) step 5\n"
    assert as_srun_labels(quoted) == "saw (head, rank=0, pid=2481) go\n2: step 5\n"
    assert as_srun_labels(quoted.encode()) == as_srun_labels(quoted).encode()
    assert as_srun_labels(b"(setup pid=8665) apt-get\n") == b"(setup pid=8665) apt-get\n"


def test_torchs_rank_prefix_inside_names_the_jobs_rank():
    """One torchrun a node: SkyPilot's rank is the node's, torch's `[rankN]:` the job's."""
    recs, _ = feed_all(["(worker1, rank=1, pid=2345, ip=10.0.0.2) [rank11]:step 6 loss 2.0",
                        "(head, rank=0, pid=2481) [rank3]:step 6 loss 2.0",
                        "(worker1, rank=1, pid=2345, ip=10.0.0.2) step 7 loss 1.9"])
    assert [(r["rank"], r["step"]) for r in recs] == [(11, 6), (3, 6), (1, 7)]
