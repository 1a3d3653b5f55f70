from __future__ import annotations

import functools
from pathlib import Path

import pytest

from ridgescope.parsers import Dispatcher

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"


@functools.lru_cache(maxsize=None)
def _parse(rel: str, log_format: str | None = None) -> tuple:
    disp = Dispatcher(log_format)
    out = []
    with open(CORPUS / rel, "rb") as fh:
        for raw in fh:
            out.extend(disp.feed(raw))
    out.extend(disp.flush())
    return tuple(out), dict(disp.stats)


@pytest.fixture
def parse_log():
    def run(rel: str, log_format: str | None = None) -> list[dict]:
        return list(_parse(rel, log_format)[0])
    return run


@pytest.fixture
def parse_stats():
    def run(rel: str, log_format: str | None = None) -> dict:
        return _parse(rel, log_format)[1]
    return run


def feed_all(lines, log_format=None, rank=None):
    d = Dispatcher(log_format)
    out = []
    for line in lines:
        out.extend(d.feed(line, rank))
    out.extend(d.flush())
    return out, d


CAPTURED = Path(__file__).resolve().parents[1] / "data" / "captured"
SRUN_LOGS = ["slurm-22.05.8_torch-2.15_srun-label-around-torchrun-tee3_lines-in-two-writes_2x2rank.log",
             "slurm-22.05.8_torch-2.15_srun-label_rank1-raises_2task.log",
             "slurm-22.05.8_srun-label-unbuffered_lines-in-two-writes_3rank.log"]
"""Captured srun logs whose labels (`1: `) other launchers' node prefixes stand in for."""


def blocks_and_lines(data: bytes) -> tuple[list[dict], list[dict]]:
    """The records of `data` read in one block, and line by line."""
    d = Dispatcher()
    in_block = d.feed_chunk(data) + d.flush()
    by_line, _ = feed_all(data.splitlines(keepends=True))
    return in_block, by_line


def reads_as_srun_labels(name: str, prefix_of_node) -> list[dict]:
    """The records of the captured srun log `name` with each label `N: ` as `prefix_of_node(N)`,
    checked to be those of the log itself, in blocks and line by line."""
    import re
    data = (CAPTURED / name).read_bytes()
    relabelled = re.sub(rb"(?m)^ {0,7}([0-9]{1,7}): ", lambda m: prefix_of_node(int(m.group(1))).encode(), data)
    assert relabelled != data
    srun_block, srun_lines = blocks_and_lines(data)
    block, lines = blocks_and_lines(relabelled)
    assert srun_block and block == srun_block
    assert lines == srun_lines
    assert {r["rank"] for r in block} >= {0, 1}
    return block
