"""torchrun's `--tee` passes a worker's lines on up to 0.1 s after they were written (it reads
their file again every 0.1 s).  Steps timed by when their lines were read are that uncertain:
a 100 ms step read late by one poll looks 200 ms long.  The runner says so on each record,
the window keeps it, and the verdict does not call an excess within it slow."""
from __future__ import annotations

import pytest

from ridgescope.pipeline import verdict, windows
from ridgescope.probes.ranks import TORCHRUN_TAIL_MS, read_late_ms

MS = 1_000_000


@pytest.mark.parametrize("cmd, env, late", [
    (["torchrun", "--nproc-per-node", "2", "--tee", "3", "train.py"], {}, TORCHRUN_TAIL_MS),
    (["/opt/venv/bin/torchrun", "--tee=3", "train.py"], {}, TORCHRUN_TAIL_MS),
    (["python", "-m", "torch.distributed.run", "--tee", "3", "train.py"], {}, TORCHRUN_TAIL_MS),
    (["srun", "-t", "10", "torchrun", "--nproc-per-node", "8", "train.py"], {"PET_TEE": "3"}, TORCHRUN_TAIL_MS),
    # no tee: the workers write to the launcher's own pipes, as they write
    (["torchrun", "--nproc-per-node", "2", "train.py"], {}, 0),
    (["torchrun", "--tee", "0", "train.py"], {}, 0),
    # srun's `-t` is its time limit, and the script's own `--tee` is the script's
    (["srun", "-t", "10", "python", "train.py", "--tee", "3"], {}, 0),
])
def test_the_command_line_says_how_late_lines_can_come(cmd, env, late):
    assert read_late_ms(cmd, env) == late


def drawn(step: int, at_ms: int, late: int | None) -> dict:
    payload = {"record": {"kind": "progress", "framework": "generic", "rank": 0, "step": step,
                          "drawn_ns": at_ms * MS}, "stream": "stderr", "world_size": 2}
    if late is not None:
        payload["read_late_ms"] = late
    return {"kind": "progress", "job": "j", "rank": 0, "host": "h", "ts_ns": at_ms * MS, "seq": step,
            "p": payload}


def test_a_window_bounded_by_read_times_keeps_how_late_they_can_be():
    """Per step: a window over three steps drawn at once spreads it over them."""
    state, rows = windows.new_rank_state(), []
    for step, at_ms, late in ((1, 1000, 100), (2, 1100, 100), (5, 1400, 100), (6, 1500, None)):
        state, emitted = windows.correlate(state, drawn(step, at_ms, late))
        rows += emitted
    state, emitted = windows.correlate(state, {"kind": "job_end", "job": "j", "rank": 0, "host": "h",
                                               "ts_ns": 0, "seq": 9, "p": {"exit_code": 0}})
    rows += emitted
    assert [(r["step"], r["duration_ms"], r.get("read_late_ms")) for r in rows] == [
        (2, 100.0, 100), (5, 100.0, 33), (6, 100.0, None)]


def row(duration_ms: float, late: int | None) -> dict:
    extra = {} if late is None else {"read_late_ms": late}
    return {"step": 20, "rank": 0, "duration_ms": duration_ms, "source": "log", "world_size": 1,
            "arrival_ns": 0, "comm_wait_ms": 0.0, "lane_baseline_ms": {},
            "lanes_ms": {"idle": duration_ms}, **extra}


@pytest.mark.parametrize("duration_ms, late, slow", [
    (200.0, None, True),      # one poll late, read as it came: slow (the false alarm)
    (200.0, 100, False),      # the same under torchrun's tee: within what the reads can be off
    (600.0, 100, True),       # a real stall is still found
])
def test_an_excess_within_how_late_the_reads_can_be_is_not_slow(duration_ms, late, slow):
    history = {"durations": [100.0] * 10, "ckpt_durations": []}
    v, _ = verdict.judge(20, [row(duration_ms, late)], history, verdict.VerdictConfig())
    assert v["slow"] is slow
