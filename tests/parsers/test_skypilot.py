"""SkyPilot's prefix (`(head, rank=0, pid=2481) `, `(worker1, rank=1, pid=2379, ip=10.0.0.3) `)
is read as srun's label of the same node: captured srun logs, their labels turned into
SkyPilot's, give the same records, read in blocks and line by line."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ridgescope.parsers import Dispatcher
from ridgescope.parsers.skypilot import as_srun_labels

from .conftest import feed_all

CAPTURED = Path(__file__).resolve().parents[1] / "data" / "captured"
SRUN_LOGS = ["slurm-22.05.8_torch-2.15_srun-label-around-torchrun-tee3_lines-in-two-writes_2x2rank.log",
             "slurm-22.05.8_torch-2.15_srun-label_rank1-raises_2task.log",
             "slurm-22.05.8_srun-label-unbuffered_lines-in-two-writes_3rank.log"]
COLOUR, RESET = "\x1b[36m", "\x1b[0m"


def skypilot_prefix(node: int, coloured: bool = False, with_name: bool = False) -> str:
    """The prefix SkyPilot writes on node `node`'s lines (with the node's name first: before 2023)."""
    name = f"node-{node}, " if with_name else ""
    inner = (f"({name}head, rank=0, pid=2481)" if node == 0
             else f"({name}worker{node}, rank={node}, pid={2379 + node}, ip=10.164.0.{56 + node})")
    return f"{COLOUR}{inner}{RESET} " if coloured else f"{inner} "


def records(data: bytes) -> tuple[list[dict], list[dict]]:
    d = Dispatcher()
    in_block = d.feed_chunk(data) + d.flush()
    by_line, _ = feed_all(data.splitlines(keepends=True))
    return in_block, by_line


@pytest.mark.parametrize("name", SRUN_LOGS)
@pytest.mark.parametrize("form", ["plain", "coloured", "with_name"])
def test_skypilot_prefix_reads_as_the_nodes_srun_label(name, form):
    data = (CAPTURED / name).read_bytes()
    relabelled = re.sub(rb"(?m)^ {0,7}([0-9]{1,7}): ", lambda m: skypilot_prefix(
        int(m.group(1)), coloured=form == "coloured", with_name=form == "with_name").encode(), data)
    assert relabelled != data and b"rank=1, pid=" in relabelled
    srun_block, srun_lines = records(data)
    sky_block, sky_lines = records(relabelled)
    assert srun_block and sky_block == srun_block
    assert sky_lines == srun_lines
    assert {r["rank"] for r in sky_block} >= {0, 1}


def test_a_one_node_clusters_prefix_is_taken_off():
    """`(task, pid=17499) ` names no rank: the lines read as the task printed them."""
    data = (CAPTURED / "nanogpt_train-py_tiny-char_cpu.log").read_bytes()
    prefixed = b"".join(b"(task, pid=17499) " + line for line in data.splitlines(keepends=True))
    plain_block, plain_lines = records(data)
    sky_block, sky_lines = records(prefixed)
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
