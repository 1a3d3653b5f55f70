"""MindSpore's `Model.train` callbacks and msrun's worker logs (`mindspore.py`), captured with
MindSpore 2.10.0 on the CPU (`tests/data/captured/mindspore_fit.py`)."""
from __future__ import annotations

import shutil

from ridgescope.cli.cmd_ingest import read_file
from ridgescope.parsers.mindspore import stated_rank

from .conftest import feed_all
from .test_captured import CAPTURED, parse_file
from .test_drawn import read_redraw_by_redraw

MONITORS = "mindspore-2.10.0_model-train_loss-time-monitor_cpu.log"
MSRUN = CAPTURED / "mindspore-2.10.0_msrun-2-workers_log-dir_cpu"


def test_loss_monitor_steps_run_on_over_epochs_and_time_monitor_gives_each_epochs_mean():
    """2 epochs of 12 steps: LossMonitor's steps count in their epoch, the records' run on; at each
    epoch's end TimeMonitor's epoch time and mean step, a timing record of the epoch's last step
    that gives no step time of its own (the first epoch's mean holds the first step's compiling)."""
    recs = parse_file(MONITORS)
    progress = [r for r in recs if r["kind"] == "progress"]
    assert [(r["step"], r["epoch"]) for r in progress] == [(n, 1 + (n > 12)) for n in range(1, 25)]
    assert (progress[0]["loss"], progress[-1]["loss"]) == (1.1754108667373657, 0.4447079300880432)
    timing = [r for r in recs if r["kind"] == "timing"]
    assert [(r["step"], r["framework"], r["source"], r["epoch_time_ms"], r["mean_step_time_ms"]) for r in timing] == [
        (12, "mindspore", "time_monitor", 802.759, 66.897), (24, "mindspore", "time_monitor", 254.522, 21.21)]
    assert recs.index(timing[0]) == recs.index(progress[11]) + 1
    assert not any("step_time_ms" in r for r in recs)


def test_time_monitors_other_forms():
    """MindSpore 1.x printed no `Train`; `data_time=True` adds the mean wait for data; an
    evaluation's epoch time is its duration.  Behind srun's labels each rank's own."""
    recs, _ = feed_all(["1: epoch: 1 step: 30, loss is 2.5", "1: epoch time: 1500.0 ms, per step time: 50.0 ms",
                        "0: epoch: 1 step: 30, loss is 2.4",
                        "0: Train epoch time: 1600.5 ms, per step time: 53.35 ms (data time: 12.5 ms)",
                        "0: Eval epoch time: 400.0 ms, per step time: 40.0 ms"])
    assert [(r["kind"], r["rank"], r["step"], r.get("mean_step_time_ms"), r.get("data_time_ms"), r.get("duration_ms"))
            for r in recs if r["framework"] == "mindspore"] == [
        ("timing", 1, 30, 50.0, None, None), ("timing", 0, 30, 53.35, 12.5, None), ("eval", 0, 30, None, None, 400.0)]


def test_loss_monitor_read_live_says_when_each_step_ended():
    """LossMonitor prints each step as it ends, flushed: read line by line as the log probe
    reads it, each step's record carries the read that brought it; without a clock, none."""
    data = (CAPTURED / MONITORS).read_bytes()
    recs, reads = read_redraw_by_redraw(data)
    progress = [r for r in recs if r["kind"] == "progress"]
    at = [i for i, piece in enumerate(reads) if b"loss is" in piece]
    assert [(r["step"], r["drawn_ns"]) for r in progress] == list(zip(range(1, 25), at))
    assert all("drawn_ns" not in r for r in recs if r["kind"] == "timing")
    assert [{k: v for k, v in r.items() if k != "drawn_ns"} for r in recs] == parse_file(MONITORS)


def test_msrun_workers_files_take_the_rank_the_cluster_gave(tmp_path):
    """msrun's `--log_dir`: each worker's file says `This node N rank id: R`, its records are rank
    R's; the scheduler's has none.  A path that names a rank still names it."""
    for name, rank in (("worker_0.log", 0), ("worker_1.log", 1)):
        result = read_file(str(MSRUN / name), None)
        recs = [it for it in result.items if it.record is not None]
        assert {it.rank for it in recs} == {rank}
        assert [it.record["step"] for it in recs if it.record["kind"] == "progress"] == list(range(1, 13))
        assert [it.record["step"] for it in recs if it.record["kind"] == "timing"] == [6, 12]
    assert [it for it in read_file(str(MSRUN / "scheduler.log"), None).items if it.record is not None] == []
    named = tmp_path / "train_rank5.log"
    shutil.copy(MSRUN / "worker_1.log", named)
    assert {it.rank for it in read_file(str(named), None).items if it.record is not None} == {5}


def test_a_stated_rank_is_mindspores_own_log_line_alone():
    line = (b"[WARNING] DISTRIBUTED(4263,7ffade1d5b80,python):2026-12-07-03:40:46.467.460 "
            b"[mindspore/ccsrc/cluster/topology/cluster_context.cc:428] PostProcess] This node 1 rank id: 1")
    assert stated_rank(line) == 1
    assert stated_rank(b"ProcessRegister] The new node: 1(role: MS_WORKER), rank id: 1, device id: 1") is None
    assert stated_rank(b"This node 1 rank id: 1") is None      # (a print, not MindSpore's log)


def test_msrun_join_each_workers_steps_by_the_order_of_their_prints():
    """msrun's `--join` passes every worker's output on in one stream, the prints unlabelled
    (the workers' own log lines name a pid, not a rank).  Each LossMonitor step is printed once
    by each worker; `ingest` gives the Kth print of a step a rank of its own, marked as placed by
    print order, so that both workers' losses are kept.  Two prints that ran into one line (step
    5's) are cut apart.  TimeMonitor's lines, one a worker an epoch, are placed alike (before,
    both went to the unplaced rank, the second over the first)."""
    name = "mindspore-2.10.0_msrun-2-workers_join_stdout_cpu.log"
    recs = parse_file(name)
    assert sorted(r["step"] for r in recs if r["kind"] == "progress") == sorted(list(range(1, 13)) * 2)
    items = [it for it in read_file(str(CAPTURED / name), None).items if it.record["kind"] == "progress"]
    losses = {(it.record["step"], it.rank): it.record["loss"] for it in items}
    assert len(losses) == 24 and all(it.record["rank_from_print_order"] for it in items)
    assert (losses[5, 0], losses[5, 1]) == (0.5901586413383484, 0.5407963991165161)   # the line run together
    assert (losses[12, 0], losses[12, 1]) == (0.6591598391532898, 1.8769481182098389)
    timing = [(r["step"], r["mean_step_time_ms"]) for r in recs if r["kind"] == "timing"]
    assert timing == [(6, 528.725), (6, 56.041), (12, 85.975), (12, 86.438)]
    placed = [(it.rank, it.record["step"], it.record["mean_step_time_ms"], it.record["rank_from_print_order"])
              for it in read_file(str(CAPTURED / name), None).items if it.record["kind"] == "timing"]
    assert placed == [(0, 6, 528.725, True), (1, 6, 56.041, True), (0, 12, 85.975, True), (1, 12, 86.438, True)]
