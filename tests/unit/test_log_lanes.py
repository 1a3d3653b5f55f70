"""Stdout only: printed framework timers give a slow step its cause; plain step times do not.

Real parser output (Megatron iteration lines and their `time (ms)` timer lines) goes through the
log windows (correlate) and the verdict (aggregate), with no Kafka.
"""
from __future__ import annotations

from pathlib import Path

from pytest import approx

from ridgescope.parsers import Dispatcher
from ridgescope.parsers.base import CLOCK
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
            # the schedule's time holds its batches' fetch and its gradients' reduction
            lines.append(f"time (ms) | forward-backward: {400.12 + batch:.2f} | optimizer: 50.31 | "
                         f"all-grads-sync: 12.00 | batch-generator: {batch:.2f}")
    return lines


def judge_log(lines: list[str], gaps_ms: list[float] | None = None, world_size: int = 1) -> dict[int, dict]:
    """Parse the lines as `ridgescope run` would, each read `gaps_ms` after the one before
    (one second apart by default) with the probe's clock set, and judge each step; rank 0 is
    the one rank that prints, of `world_size`."""
    disp = Dispatcher()
    rank_state, job_state = windows.new_rank_state(), windows.new_job_state()
    pending_rows: dict = {}
    verdicts: dict[int, dict] = {}
    ts = 0
    seq = 0
    msgs = []
    for i, line in enumerate(lines):
        ts += int((gaps_ms[i] if gaps_ms else 1000) * MS)
        CLOCK.now_ns = ts
        try:
            recs = disp.feed_chunk(line + "\n")
        finally:
            CLOCK.now_ns = None
        for rec in recs:
            seq += 1
            msgs.append({"v": 1, "kind": "progress", "job": "j", "rank": 0, "host": "h",
                         "ts_ns": ts, "seq": seq, "p": {"record": rec, "world_size": world_size}})
    msgs.append({"v": 1, "kind": "job_end", "job": "j", "rank": 0, "host": "h", "ts_ns": ts,
                 "seq": seq + 1, "p": {"exit_code": 0, "world_size": world_size}})
    for msg in msgs:
        rank_state, rows = windows.correlate(rank_state, msg)
        for row in rows:
            job_state, out, _ = windows.aggregate(job_state, dict(row, rank=0), CFG, 0,
                                                  pending_rows)
            verdicts.update({v["step"]: v for v in out})
    job_state, out, _ = windows.aggregate(job_state, {"job_end": True, "rank": 0,
                                                      "world_size": world_size}, CFG, 0, pending_rows)
    job_state, out2, _ = windows.aggregate(job_state, {"tick": True}, CFG, windows.GRACE_NS, pending_rows)
    out += out2
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
    # The timers fill the window: forward-backward less what it holds (the batch's fetch, the
    # grad sync) + optimizer is compute, the grad sync is communication, the rest is idle.
    assert verdicts[20]["lanes_ms"]["compute"] == 438.43
    assert verdicts[20]["lanes_ms"]["communication"] == 12.0
    assert [s for s, v in verdicts.items() if v["slow"]] == [SLOW]


def test_step_times_alone_find_the_slow_step_but_not_its_cause():
    verdicts = judge_log(megatron_lines(timers=False))
    assert [s for s, v in verdicts.items() if v["slow"]] == [SLOW]
    slow = verdicts[SLOW]
    assert slow["cause"] == "unknown" and slow["confidence"] <= 0.5
    assert slow["lanes_ms"]["idle"] == slow["duration_ms"]


def deepspeed_breakdown(slow_step: int) -> tuple[list[str], list[float]]:
    """DeepSpeed's `wall_clock_breakdown` as rank 0 prints it (the only rank that does) at
    its default log level, 250 ms steps; at `slow_step` rank 0 waits 1.5 s in the gradient
    all-reduce for another rank.  Each step's lines are read as it ends."""
    lines, gaps = [], []
    for step in range(1, 31):
        wait = 1500.0 if step == slow_step else 1.2
        timers = f"fwd_microstep: 250.40 | bwd_microstep: {wait + 0.2:.2f} | bwd_inner_microstep: 0.12 | " \
                 f"bwd_allreduce_microstep: {wait:.2f} | step_microstep: 1.10"
        lines += [f"[Rank 0] time (ms) | {timers}", f"[Rank 0] time (ms) | {timers.replace('_microstep', '')}"]
        gaps += [250.4 + wait + 1.3 + 1.0, 0.1]
    return lines, gaps


def test_deepspeed_breakdown_times_its_steps_and_blames_no_rank_it_cannot_see():
    """Stdout only, a job of 2 ranks whose rank 0 alone prints DeepSpeed's breakdown: the
    lines' read times give the windows and the timers their lanes.  Rank 0's long all-reduce
    is the step's cause, and the rank it waited for prints nothing: the culprit is not known,
    rather than rank 0, which only waited."""
    lines, gaps = deepspeed_breakdown(slow_step=20)
    verdicts = judge_log(lines, gaps, world_size=2)
    assert sorted(verdicts) == list(range(2, 31))      # step 1 has no step ended before it
    assert [s for s, v in verdicts.items() if v["slow"]] == [20]
    slow = verdicts[20]
    assert slow["cause"] == "communication" and slow["culprit_rank"] == -1, slow
    assert slow["rank_count"] == 1
    assert 1750 < slow["duration_ms"] < 1760
    assert verdicts[10]["lanes_ms"]["compute"] == approx(250.4 + 0.12 + 1.1)
    # with every rank printing (world size 1 here), the rank that waited is the only one seen
    assert judge_log(lines, gaps, world_size=1)[20]["culprit_rank"] == 0



CAPTURED = Path(__file__).resolve().parents[1] / "data" / "captured"
COMPOSER = CAPTURED / "composer-0.32.1_console-logger_max-duration-epochs.log"


def test_composer_records_read_live_time_the_steps():
    """Composer prints no time of its own (no SpeedMonitor): each batch's record is printed as
    the batch ends, so the time it is read at times the step.  The captured log, its records
    read 60 ms apart and batch 11's 560 ms after batch 10's: step 11 is found slow, with no
    cause, since nothing printed one."""
    lines = COMPOSER.read_text().splitlines()
    gaps = [(560.0 if line == "[epoch=2][batch=3/8]:" else 60.0) if line.startswith("[epoch=") else 0.0
            for line in lines]
    verdicts = judge_log(lines, gaps)
    assert sorted(verdicts) == list(range(2, 17))
    assert [s for s, v in verdicts.items() if v["slow"]] == [11]
    assert verdicts[11]["cause"] == "unknown" and verdicts[11]["duration_ms"] == approx(560.0)
    assert verdicts[5]["duration_ms"] == approx(60.0)


def test_a_straggler_report_names_the_culprit_rank_that_prints_nothing():
    """Megatron prints its steps from one rank, and with `--log-straggler` the slowest rank of
    each lane: the slow step's culprit is the rank its report names (rank 1's batch waited),
    where without the report the rank is not known: Megatron's timers are the slowest rank's,
    whichever it was (`batch-generator: (1.13, 501.55)`).  Only where the job is the one rank
    that prints is that rank the culprit."""
    log = CAPTURED / "megatron-core-0.17.1_pretrain-gpt_2rank-dp_log-straggler_rank1-slow_cpu.log"
    lines = log.read_text(encoding="utf-8").split("\n")
    verdicts = judge_log(lines, world_size=2)
    assert [s for s, v in verdicts.items() if v["slow"]] == [13]
    assert (verdicts[13]["cause"], verdicts[13]["culprit_rank"]) == ("input", 1)
    unnamed = [line for line in lines if "Rtt/Rnk" not in line]
    assert (judge_log(unnamed, world_size=2)[13]["cause"], judge_log(unnamed, world_size=2)[13]["culprit_rank"]) \
        == ("input", -1)
    assert judge_log(unnamed, world_size=1)[13]["culprit_rank"] == 0


def test_timers_of_every_rank_name_the_culprit_rank_that_prints_nothing():
    """`--timing-log-option all`: the printing rank's timer blocks hold every rank's times, so
    the slow step's culprit is rank 1, whose batch waited, from stdout alone."""
    log = CAPTURED / "megatron-core-0.17.1_pretrain-gpt_2rank-dp_timing-log-option-all_slow-batch-r1_cpu.log"
    verdicts = judge_log(log.read_text(encoding="utf-8").split("\n"), world_size=2)
    assert [(s, v["cause"], v["culprit_rank"]) for s, v in verdicts.items() if v["slow"]] == [(13, "input", 1)]


def test_a_stage_that_waited_on_the_one_before_names_that_stage():
    """Pipeline stages: the last stage prints the steps, and its timers show iteration 13 spent
    waiting to receive (`forward-recv` 504 ms) as much as the first stage spent fetching its
    batch; the straggler report's widest gap is rank 0's batch fetch, so the culprit is rank 0,
    in input, not the printing stage's wait."""
    log = CAPTURED / "megatron-core-0.17.1_pretrain-gpt_2rank-pp2_tee3_log-straggler_rank0-slow_cpu.log"
    verdicts = judge_log(log.read_text(encoding="utf-8").split("\n"))
    assert [s for s, v in verdicts.items() if v["slow"]] == [13]
    assert (verdicts[13]["cause"], verdicts[13]["culprit_rank"]) == ("input", 0)
