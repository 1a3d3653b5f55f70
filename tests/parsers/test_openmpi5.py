"""Open MPI 5's mpirun (PRRTE), captured: its output tags (`--tag-output`, and `--output
tag-detailed`, `tag-fullname`, `tag,timestamp`: `mpirun_tags.py`) name each line's rank, and its
words when a process dies (`prterun noticed ...`, wrapped before its signal; `Process name:
[NAMESPACE@1,1]`) name the rank that did."""
from __future__ import annotations

import pytest

from ridgescope.parsers.mpirun_tags import MpirunTags

from .conftest import CAPTURED, blocks_and_lines, feed_all

TAGS = ["tag-output", "output-tag-detailed", "output-tag-fullname", "output-tag-timestamp"]


@pytest.mark.parametrize("tag", TAGS)
def test_each_tag_names_its_lines_rank(tag):
    data = (CAPTURED / f"openmpi-5.0.11_mpirun-{tag}_3rank.log").read_bytes()
    block, by_line = blocks_and_lines(data)
    assert block == by_line
    steps: dict = {}
    for r in block:
        steps.setdefault(r["rank"], []).append((r["step"], r["loss"], r["step_time_ms"]))
    assert steps == {rank: [(s, (2.3, 2.301, 2.302)[rank], (300, 300.1, 300.2)[rank]) for s in range(1, 5)]
                     for rank in range(3)}


def test_each_ranks_bar_gives_its_steps():
    """Each rank's bar is one line of redraws (`\r`s kept), read whole and line by line."""
    data = (CAPTURED / "openmpi-5.0.11_tqdm-4.70.1_mpirun-tag-output_bars-of-2-ranks_stderr.log").read_bytes()
    block, _ = blocks_and_lines(data)
    by_line, _ = feed_all(line + b"\n" for line in data.split(b"\n") if line)
    assert block == by_line
    for rank in (0, 1):
        mine = [r for r in block if r["rank"] == rank]
        assert [r["step"] for r in mine] == list(range(1, 11))
        assert mine[-1]["loss"] == pytest.approx(1.5 - rank / 100)


def test_prterun_names_the_rank_that_died():
    (kill,) = [r for r in blocks_and_lines((CAPTURED / "openmpi-5.0.11_mpirun_rank1-kill_2proc.log").read_bytes())[0]
               if r["kind"] == "error"]
    assert (kill["rank"], kill["signal"], kill["pid"], kill["host"]) == (1, "SIGKILL", 13438, "vm")
    assert kill["message"].endswith("exited on signal 9 (Killed).")
    (exit_,) = [r for r in blocks_and_lines((CAPTURED / "openmpi-5.0.11_mpirun_rank1-exit_2proc.log").read_bytes())[0]
                if r["kind"] == "error"]
    assert (exit_["rank"], exit_["exitcode"], exit_["first"]) == (1, 3, True)


def test_a_namespace_is_learnt_past_an_address_in_a_lines_text():
    tags = MpirunTags()
    block = (b"[prterun-gpu-1-77@1,0]<stdout>: mail ops@example.org when done\n"
             b"[prterun-gpu-1-77@1,1]<stdout>: step 1 loss 2.0\n"
             b"[1,2][gpu-2.cluster:4242]<stderr>: warn [x][y:1] kept\n")
    assert tags.plain_bytes(block) == (b"[1,0]<stdout>: mail ops@example.org when done\n"
                                       b"[1,1]<stdout>: step 1 loss 2.0\n[1,2]<stderr>: warn [x][y:1] kept\n")
    assert tags.plain_text("[prterun-gpu-1-77@1,3]<stdout>: step 2") == "[1,3]<stdout>: step 2"
