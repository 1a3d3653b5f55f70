"""MPICH's and Intel MPI's mpiexec (Hydra) on a process that died: its `BAD TERMINATION` box
(`launcher_errors.HydraReport`), captured from MPICH 4.0.2 and from a run that others posted."""
from __future__ import annotations

from .conftest import CAPTURED, blocks_and_lines
from .test_excerpts import EXCERPTS


def errors(data: bytes) -> list[dict]:
    block, by_line = blocks_and_lines(data)
    assert block == by_line
    return [r for r in block if r["kind"] == "error"]


def test_mpich_names_the_pid_and_node_of_the_process_killed():
    """MPICH 4.0's box names no rank: the pid, the node and the exit code (the signal's number)."""
    (killed,) = errors((CAPTURED / "mpich-4.0.2_mpiexec_rank1-kill_2proc.log").read_bytes())
    assert (killed["rank"], killed["pid"], killed["host"], killed["exitcode"], killed["launcher"]) == (
        None, 15644, "vm", 9, "mpiexec")
    assert killed["first"] and killed["error"] == "child_failed"


def test_each_box_names_its_rank_and_signal_the_first_first():
    found = errors((EXCERPTS / "mpiexec-hydra_bad-termination_ranks-6-9-killed.log").read_bytes())
    assert [(r["rank"], r["pid"], r["host"], r["signal"]) for r in found] == [
        (rank, 2447372 + rank - 6, "node0009", "SIGKILL") for rank in (6, 7, 8, 9)]
    assert [r.get("first", False) for r in found] == [True, False, False, False]


def test_a_box_cut_short_gives_nothing_and_loses_no_line():
    for data in (b"=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   CLEANING UP\n=   YOU CAN\n=\n"
                 b"=\nstep 7 loss 2.0\n",
                 b"=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\nstep 7 loss 2.0\n"):
        block, by_line = blocks_and_lines(data)
        assert block == by_line and [(r["kind"], r["step"]) for r in block] == [("progress", 7)]
