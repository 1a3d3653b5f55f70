"""Stdout only: printed framework timers give a slow step its cause; plain step times do not.

Real parser output (Megatron iteration lines and their `time (ms)` timer lines) goes through the
log windows (correlate) and the verdict (aggregate), with no Kafka.
"""
from __future__ import annotations

from ridgescope.parsers import Dispatcher
from ridgescope.pipeline import windows
from ridgescope.pipeline.verdict import VerdictConfig

MS = 1_000_000
CFG = VerdictConfig()
SLOW = 150


def megatron_lines(timers: bool = True) -> list[str]:
    """A Megatron-LM log, one iteration line (and timers) every 10 iterations; the data loader
    stalls around iteration 150."""
    lines = []
    for it in range(10, 310, 10):
        batch = 420.0 if it == SLOW else 20.0 + (it % 30) / 10
        elapsed = 480.0 + batch
        lines.append(f" iteration {it:8d}/    3000 | consumed samples: {it * 256:12d} | "
                     f"elapsed time per iteration (ms): {elapsed:.1f} | learning rate: "
                     f"1.000E-04 | global batch size:   256 | lm loss: 3.210000E+00 | "
                     f"loss scale: 65536.0 | number of skipped iterations:   0 |")
        if timers:
            lines.append(f"time (ms) | forward-backward: 400.12 | optimizer: 50.31 | "
                         f"all-grads-sync: 12.00 | batch-generator: {batch:.2f}")
    return lines


def judge_log(lines: list[str]) -> dict[int, dict]:
    """Parse the lines as `ridgescope run` would, one second apart, and judge each step."""
    disp = Dispatcher()
    rank_state, job_state = windows.new_rank_state(), windows.new_job_state()
    pending_rows: dict = {}
    verdicts: dict[int, dict] = {}
    ts = 0
    seq = 0
    msgs = []
    for line in lines:
        ts += 1000 * MS
        for rec in disp.feed(line + "\n"):
            seq += 1
            msgs.append({"v": 1, "kind": "progress", "job": "j", "rank": 0, "host": "h",
                         "ts_ns": ts, "seq": seq, "p": {"record": rec, "world_size": 1}})
    msgs.append({"v": 1, "kind": "job_end", "job": "j", "rank": 0, "host": "h", "ts_ns": ts,
                 "seq": seq + 1, "p": {"exit_code": 0, "world_size": 1}})
    for msg in msgs:
        rank_state, rows = windows.correlate(rank_state, msg)
        for row in rows:
            job_state, out, _ = windows.aggregate(job_state, dict(row, rank=0), CFG, 0,
                                                  pending_rows)
            verdicts.update({v["step"]: v for v in out})
    job_state, out, _ = windows.aggregate(job_state, {"job_end": True, "rank": 0,
                                                      "world_size": 1}, CFG, 0, pending_rows)
    verdicts.update({v["step"]: v for v in out})
    return verdicts


def test_megatron_timers_give_the_slow_step_its_cause():
    verdicts = judge_log(megatron_lines(timers=True))
    assert sorted(verdicts) == list(range(10, 310, 10))
    slow = verdicts[SLOW]
    assert slow["slow"] and slow["cause"] == "input", slow
    assert slow["excess_ms"] > 350
    assert slow["lanes_ms"]["input"] == 420.0
    assert slow["ranks"][0]["source"] == "log"
    # The timers fill the window: forward-backward + optimizer is compute, the grad sync is
    # communication, and the rest of the step is idle.
    assert verdicts[20]["lanes_ms"]["compute"] == 450.43
    assert verdicts[20]["lanes_ms"]["communication"] == 12.0
    assert [s for s, v in verdicts.items() if v["slow"]] == [SLOW]


def test_step_times_alone_find_the_slow_step_but_not_its_cause():
    verdicts = judge_log(megatron_lines(timers=False))
    assert [s for s, v in verdicts.items() if v["slow"]] == [SLOW]
    slow = verdicts[SLOW]
    assert slow["cause"] == "unknown" and slow["confidence"] <= 0.5
    assert slow["lanes_ms"]["idle"] == slow["duration_ms"]
