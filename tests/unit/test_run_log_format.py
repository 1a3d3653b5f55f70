"""`ridgescope run --log-format NAME` reads the job's output with the parser named, where
auto-detection cannot tell: a loop of one's own whose tqdm bar has no label (`tqdm`), which
otherwise gives no step, and a hint in the run's report that says so."""
from __future__ import annotations

import socket
import sys
from pathlib import Path

import msgpack

from ridgescope.parsers import UNLABELLED_BAR
from ridgescope.probes.runner import run
from ridgescope.schemas import envelope

LOOP = Path(__file__).resolve().parents[1] / "data" / "captured" / "tqdm_loop.py"


def spooled_steps(data_dir: Path) -> list[tuple[int, int]]:
    """(step, drawn_ns: when its redraw was read) of each progress record `run` spooled."""
    with open(data_dir / "spool" / f"{socket.gethostname()}.spool", "rb") as fh:
        msgs = [envelope.decode(value) for _, _, value in msgpack.Unpacker(fh, raw=False)]
    return [(m["p"]["record"]["step"], m["p"]["record"]["drawn_ns"]) for m in msgs
            if m["kind"] == "progress" and m["p"]["record"]["kind"] == "progress"]


def test_told_the_bar_is_the_loops_each_step_is_read_as_it_is_drawn(tmp_path):
    result = run([sys.executable, str(LOOP)], "tqdm-told", None, tmp_path, hooks=False, log_format="tqdm")
    assert result.exit_code == 0
    got = spooled_steps(tmp_path)
    assert [step for step, _ in got] == list(range(1, 13))     # the epochs' bars, not the evaluations'
    gaps = {step: drawn - before for (_, before), (step, drawn) in zip(got, got[1:])}
    # step 10 took 0.6 s, the others 0.15 s (step 7's gap holds the evaluation between epochs)
    assert max(gaps, key=gaps.__getitem__) == 10, gaps
    assert not any("--log-format" in note for note in result.notes), result.notes


def test_untold_the_run_gives_no_step_and_says_what_would_read_the_bar(tmp_path):
    result = run([sys.executable, str(LOOP)], "tqdm-untold", None, tmp_path, hooks=False)
    assert result.exit_code == 0
    assert spooled_steps(tmp_path) == []
    assert UNLABELLED_BAR.format(drawn=6) in result.notes
