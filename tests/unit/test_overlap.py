"""`ingest` of several logs that hold the same ranks' steps says so (cli/overlap.py)."""
from __future__ import annotations

from pathlib import Path

from ridgescope.cli.cmd_ingest import read_file
from ridgescope.cli.overlap import overlaps, rank_steps

CAPTURED = Path(__file__).resolve().parents[1] / "data" / "captured"
NODES = [str(CAPTURED / f"torch-2.15_torchrun-tee3_node-rank-{k}-of-2_2x2rank.log") for k in (0, 1)]


def test_two_nodes_tee_logs_given_as_they_are_are_found():
    """Each node's log names local ranks 0 and 1: both hold the same steps of ranks 0 and 1."""
    files = [(path, rank_steps(read_file(path, None).items)) for path in NODES]
    assert len(files[0][1]) == 60
    [warning] = overlaps(files)
    assert warning.startswith(f"{NODES[0]} and {NODES[1]} both hold steps 1-30 of rank(s) 0, 1:")
    assert "--node-logs" in warning


def test_logs_of_other_ranks_or_a_step_or_two_in_common_are_no_overlap():
    ranks = [(f"train_rank{r}.log", {(r, step) for step in range(1, 101)}) for r in range(1000)]
    assert overlaps(ranks) == []
    # a run resumed into a second file repeats a step or two of the first
    assert overlaps([("a.log", {(0, s) for s in range(1, 101)}), ("b.log", {(0, s) for s in range(99, 201)})]) == []
    # a third file's steps are counted against the first file that held each
    third = overlaps([("a.log", {(0, 1), (0, 2)}), ("b.log", {(1, 1)}), ("c.log", {(0, 1), (0, 2), (1, 1)})])
    assert [w.split(" both")[0] for w in third] == ["a.log and c.log", "b.log and c.log"]
