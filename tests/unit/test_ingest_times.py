"""`ridgescope ingest` times each record from the log itself: here MLPerf BERT, whose lines carry
no timestamp prefix but whose printed dicts hold their own Unix time (`'timestamp': ...`)."""
from __future__ import annotations

import calendar
import os
import time
from collections import Counter

from pathlib import Path

import pytest
from pytest import approx

from ridgescope.cli import log_dirs
from ridgescope.cli.cmd_ingest import (Item, add_clock, line_timestamp, rank_in_path, read_file, record_time,
                                       untimed_steps)
from ridgescope.parsers.template import TeePrefix

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
MLPERF = CORPUS / "multirank_prefixed"
BERT = MLPERF / "mlperf-v0.7_nvidia_bert_32node-512gpu_srun-labelled.log"
GNMT = MLPERF / "mlperf-v0.7_nvidia_gnmt_2node-16gpu_slurm_rank0-prefix.log"
CAPTURED = Path(__file__).resolve().parents[1] / "data" / "captured"


def test_record_time():
    assert record_time({"log_time_s": 1593108597.25}) == (1593108597250000000, True)
    assert record_time({"log_time_s": 1593108597.0}) == (1593108597000000000, False)
    assert record_time({"step": 3}) is None


def test_bert_steps_are_timed_by_their_printed_timestamps():
    result = read_file(str(BERT), None)
    assert result.timestamps == "printed" and result.records == 669
    # 661 steps, 7 evaluations of MLPerf's logger and its `run_stop`, each at the time its line prints
    evals = [it for it in result.items if it.record["kind"] == "eval"]
    assert len(evals) == 8 and evals[0].ts == 1593108716129 * 10**6 and evals[0].source == "log"
    assert (evals[-1].record["status"], evals[-1].ts) == ("success", 1593108835997 * 10**6)
    by_step = {it.record["step"]: it for it in result.items if it.record["kind"] == "progress"}
    assert by_step[1].source == "log" and by_step[1].ts == approx(1593108596878098500, abs=1000)
    assert "step_time_ms" not in by_step[1].record           # nothing earlier to time it by
    # step 2's dict is printed 345.951 ms after step 1's
    assert by_step[2].record["step_time_ms"] == 345.951 and by_step[2].record["step_time_from_ts"]
    assert by_step[661].record["step_time_ms"] == 514.31      # the last step, slower
    assert all(it.record["ts_source"] == "log" for it in result.items)


def test_times_printed_on_lines_without_records_anchor_the_records(tmp_path):
    """A date on a line that gives no record (an nvidia-smi header, say) still dates the job:
    the records before it end by then, the records after it follow it by their step times."""
    log = tmp_path / "train.log"
    log.write_text("step 1/3 loss 2.5 step_time_ms 100\n"
                   "Sun May 23 08:40:52 2021\n"
                   "Sun May 23 08:40:53 2021\n"
                   "Sun May 23 08:40:54 2021\n"
                   "step 2/3 loss 2.4 step_time_ms 200\n"
                   "step 3/3 loss 2.3 step_time_ms 300\n")
    result = read_file(str(log), None)
    assert result.timestamps == "estimated from the times other lines print"
    assert [it.record["step"] for it in result.items] == [1, 2, 3]        # no clock is sent
    t0 = 1621759252 * 10**9                                                 # 08:40:52 UTC
    assert [it.ts - t0 for it in result.items] == [0, 2_200_000_000, 2_500_000_000]
    assert {it.record["ts_source"] for it in result.items} == {"estimated"}


def test_a_run_of_clocks_keeps_its_first_and_last():
    items = []
    for ts in (1, 2, 3, 4):
        add_clock(items, Item(0, None, ts, False))
    assert [it.own_ts for it in items] == [1, 4]
    items.append(Item(0, {"kind": "progress", "step": 1}, None, False))
    add_clock(items, Item(0, None, 5, False))
    assert [it.own_ts for it in items] == [1, 4, None, 5]


def test_gnmt_is_dated_by_its_mlperf_events():
    """GNMT's progress lines print no time, its `:::MLLOG` events do (`time_ms`): its evaluations'
    records are dated by theirs, its steps estimated from them."""
    result = read_file(str(GNMT), None)
    assert result.timestamps == "partly printed, the rest estimated"
    (bleu,) = [it for it in result.items if it.record["kind"] == "eval" and it.record["framework"] == "mlperf"
               and it.record["phase"] == "result" and it.record["epoch_num"] == 1]
    assert bleu.ts == 1593112761379 * 10**6 and bleu.record["ts_source"] == "log"
    first = result.items[0]
    assert first.record["step"] == 1 and first.record["step_time_ms"] == 387.0
    # the last event before it, `epoch_start` at 1593112691812 ms, and its step time after
    assert first.ts == 1593112691812 * 10**6 + 387_000_000


def test_ingest_reads_torchruns_other_prefixes_and_srun_around_torchrun():
    """`ingest --prefix-template` (torchrun `--role trainer`) and, unasked, `srun --label`
    around torchrun's `--tee`, whose workers per node it reads from the file."""
    role = read_file(str(CAPTURED / "torch-2.15_torchrun-tee3-role-trainer_lines-in-two-writes_3rank.log"),
                     None, TeePrefix("[trainer${local_rank}]:"))
    assert sorted((it.rank, it.record["step"]) for it in role.items if it.record["kind"] == "progress") == [
        (rank, step) for rank in range(3) for step in range(1, 5)]
    nested = read_file(str(CAPTURED / "slurm-22.05.8_torch-2.15_srun-label-around-torchrun-tee3_"
                                      "lines-in-two-writes_2x2rank.log"), None)
    assert sorted((it.rank, it.record["step"]) for it in nested.items if it.record["kind"] == "progress") == [
        (rank, step) for rank in range(4) for step in range(1, 5)]


def test_glog_prefix_takes_the_year_the_log_was_written():
    """absl's and glog's `I1130 18:28:04.930220 1397 file.py:48] ` print no year: the log's
    own year, or the one before where that would put the line after the log was written."""
    written = calendar.timegm((2026, 1, 2, 0, 0, 0)) * 10**9
    assert line_timestamp("I0101 18:28:04.930220 139737532708544 logging_writer.py:48] [1] loss=2", written) == (
        calendar.timegm((2026, 1, 1, 18, 28, 4)) * 10**9 + 930_220_000, True)
    assert line_timestamp("W1231 23:59:59.5 7 a.cc:9] x", written)[0] == calendar.timegm((2025, 12, 31, 23, 59, 59)) * 10**9 + 500_000_000
    assert line_timestamp("[rank0]:I0101 00:00:01.000001 7 a.py:1] x", written) is not None
    assert line_timestamp("I0101 00:00:01.000001 hello", written) is None     # no thread and source
    assert line_timestamp("I1399 00:00:01.000001 7 a.py:1] x", written) is None  # month 13
    # PyTorch's C++ logger: the month not padded, no thread, the source a path
    watchdog = "[rank7]:[E901 05:20:03.123992144 torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632] [Rank 7] x"
    assert line_timestamp(watchdog, written) == (calendar.timegm((2025, 9, 1, 5, 20, 3)) * 10**9 + 123_992_144, True)
    assert line_timestamp("[E1206 18:44:16.994932383 ProcessGroupNCCL.cpp:1709] x", written)[0] == \
        calendar.timegm((2025, 12, 6, 18, 44, 16)) * 10**9 + 994_932_383


def test_detectron2_and_paddledetection_prefixes_take_the_year_the_log_was_written():
    """`[11/30 19:38:55 d2.engine.hooks]: ` and `[11/30 19:38:55] ppdet.engine INFO: `: month
    first, whole seconds, no year."""
    written = calendar.timegm((2026, 1, 2, 0, 0, 0)) * 10**9
    assert line_timestamp("[01/01 11:27:04 d2.utils.events]:  eta: 8:05:12  iter: 1259", written) == (
        calendar.timegm((2026, 1, 1, 11, 27, 4)) * 10**9, False)
    assert line_timestamp("[12/31 19:38:55] ppdet.engine INFO: Epoch: [1] [0/4]", written) == (
        calendar.timegm((2025, 12, 31, 19, 38, 55)) * 10**9, False)
    assert line_timestamp("[13/01 00:00:01] x", written) is None           # no month 13
    assert line_timestamp("[01/01 00:00:01] x") is None                    # no year to place it in
    assert line_timestamp("path/[01/01 00:00:01] x", written) is None      # inside a path


def test_a_time_to_the_second_after_a_finer_one_keeps_the_ranks_order():
    """Megatron dates its iteration lines to the microsecond, its straggler report (the line
    that closes the iteration's timer block) to the second: that coarser time, up to a second
    before the iteration's, is no new anchor, and the rank's records keep their printed order
    (merged by time, they once put the next iteration's timers before this one's line)."""
    result = read_file(str(CAPTURED / "megatron-core-0.17.1_pretrain-gpt_2rank-dp_log-straggler_rank1-slow_cpu.log"),
                       None)
    ts = [it.ts for it in result.items]
    assert ts == sorted(ts) and len(set(ts)) == len(ts)
    by_kind = [(it.record["kind"], it.record["step"]) for it in result.items]
    assert by_kind.index(("progress", 10)) < by_kind.index(("progress", 11))
    ten = next(it for it in result.items if it.record["kind"] == "progress" and it.record["step"] == 10)
    assert (ten.source, ten.ts % 10**9) == ("log", 645183000)     # ` [2026-11-30 22:36:31.645183]`


def test_a_printed_time_earlier_than_the_ranks_last_keeps_the_printed_order(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("2024-01-01 10:00:05.000 step 1/3 loss 2.5 step_time_ms 100\n"
                   "2024-01-01 10:00:06.000 step 2/3 loss 2.4 step_time_ms 100\n"
                   "2024-01-01 10:00:04.000 step 3/3 loss 2.3 step_time_ms 100\n")   # a clock set back
    result = read_file(str(log), None)
    assert [it.record["step"] for it in sorted(result.items, key=lambda it: it.ts)] == [1, 2, 3]
    assert [it.source for it in result.items] == ["log", "log", "estimated"]


def test_an_unlabelled_megatron_logs_steps_are_its_last_ranks():
    """Megatron-LM prints its iterations and timers from its last rank: with no label on any
    line, a log's records are that rank's once the job's size is known (64 ranks, tensor 4 x
    pipeline 16; Megatron-Bridge's 2).  Megatron-DeepSpeed's lines name ranks of their own, and
    keep them."""
    megatron = CORPUS / "megatron"
    bigscience = read_file(str(megatron / "bigscience_megatron-gpt2_16node-64gpu_tp4-pp16_slurm_timers.log"), None)
    bridge = read_file(str(CAPTURED / "megatron-bridge-0.3.1_megatron-core-0.16.1_tiny-llama_2rank-dp_cpu.log"), None)
    one_rank = read_file(str(CAPTURED / "megatron-core-0.17.1_pretrain-gpt_1rank_cpu.log"), None)
    deepspeed = read_file(str(megatron / "megatron-deepspeed_gpt3-125M_tokendrop_8gpu_timers_nccl-info.log"), None)
    assert (bigscience.world_size, {it.rank for it in bigscience.items}) == (64, {63})
    assert (bridge.world_size, {it.rank for it in bridge.items}) == (2, {1})
    assert (one_rank.world_size, {it.rank for it in one_rank.items}) == (1, {0})
    assert deepspeed.world_size == 8 and {it.rank for it in deepspeed.items} == set(range(8))
    steps = [it.record["step"] for it in bigscience.items if it.record["kind"] == "progress"]
    assert steps == list(range(10, 100, 10))


LOG_DIR = CAPTURED / "torch-2.15_torchrun-log-dir-redirects3_2rank"


def test_torchruns_log_dir_names_each_files_rank():
    """`torchrun --log-dir DIR --redirects 3` writes each worker's stdout to
    `DIR/RUN_ID/attempt_0/LOCAL_RANK/stdout.log`: the directory is the rank (both files were
    rank 0's); a name's `rank3` still wins, and a bare number elsewhere names none."""
    files = sorted(LOG_DIR.glob("*/attempt_0/*/stdout.log"))
    assert [rank_in_path(str(f)) for f in files] == [0, 1]
    results = [read_file(str(f), None) for f in files]
    assert [sorted({it.rank for it in r.items}) for r in results] == [[0], [1]]
    slow = [(it.rank, it.record["step"]) for r in results for it in r.items if it.record["step_time_ms"] > 400]
    assert slow == [(1, 10)]
    assert rank_in_path("logs/x/attempt_2/3/train_rank5.log") == 5
    assert rank_in_path("logs/x/attempt_0/3/stdout.log") == 3
    assert rank_in_path("runs/3/stdout.log") is None and rank_in_path("stdout.log") is None


MPIRUN_DIR = CAPTURED / "openmpi-4.1.4_output-filename_2rank"


def test_the_files_of_mpiruns_output_filename_are_each_their_ranks():
    """Open MPI's `mpirun --output-filename DIR` writes rank N's output to `DIR/1/rank.N/stdout`:
    ingest reads each file's rank from its path, and rank 1's slow step 10 is rank 1's."""
    files = sorted(MPIRUN_DIR.glob("*/rank.*/stdout"))
    assert [rank_in_path(str(f)) for f in files] == [0, 1]
    assert rank_in_path("rank.7/stderr") == 7 and rank_in_path("out/1/rank.7/stdout.bak") is None
    results = [read_file(str(f), None) for f in files]
    assert [sorted({it.rank for it in r.items}) for r in results] == [[0], [1]]
    assert [len(r.items) for r in results] == [16, 16]
    slow = [(it.rank, it.record["step"]) for r in results for it in r.items if it.record["step_time_ms"] > 400]
    assert slow == [(1, 10)]


LOG_DIR_2X2 = CAPTURED / "torch-2.15_torchrun-log-dir-redirects3_2x2rank"
NODE_0, NODE_1 = LOG_DIR_2X2 / "none_hffhuq45", LOG_DIR_2X2 / "none_eukln6m2"


def test_log_dir_files_of_two_nodes_are_four_ranks_in_the_order_given():
    """Two nodes' torchrun sharing one `--log-dir`: each made a run directory of its own, and
    both hold local ranks 0 and 1.  Given node 0's files first, node 1's local rank 1 is rank 3,
    whose step 10 slept; given the other way round (as a glob sorts them here), it is rank 1:
    no file says a node's rank, so the order given is the only one there is."""
    files = [str(f) for node in (NODE_0, NODE_1) for f in sorted(node.glob("attempt_0/*/stdout.log"))]
    said: list[str] = []
    ranks = log_dirs.job_ranks(files, None, said.append)
    assert ranks == [0, 1, 2, 3]
    assert said[1:] == [f"{NODE_0}: node 0, ranks 0-1", f"{NODE_1}: node 1, ranks 2-3"]
    results = [read_file(f, None, rank=r) for f, r in zip(files, ranks)]
    slow = [(it.rank, it.record["step"]) for r in results for it in r.items if it.record["step_time_ms"] > 400]
    assert slow == [(3, 10)]
    by_name = dict(zip(sorted(files), log_dirs.job_ranks(sorted(files), None, said.append)))
    assert by_name[str(NODE_1 / "attempt_0/1/stdout.log")] == 1
    assert log_dirs.job_ranks(files, 4, said.append) == [0, 1, 4, 5]
    with pytest.raises(ValueError, match="local rank 1's, more than --nproc-per-node 1"):
        log_dirs.job_ranks(files, 1, said.append)


def test_log_dir_files_of_one_node_keep_their_local_ranks():
    """One run directory (the 2-rank capture), or files of no run directory beside it: the
    path's own rank stands (`rank_in_path`)."""
    one = [str(f) for f in sorted(LOG_DIR.glob("*/attempt_0/*/stdout.log"))]
    assert log_dirs.job_ranks(one + [str(BERT)], None, print) == [None, None, None]
    assert log_dirs.job_ranks([str(NODE_0 / "attempt_0/1/stdout.log"), str(NODE_0 / "attempt_1/1/stdout.log")],
                              None, print) == [None, None]
    mixed = [str(NODE_0 / "attempt_0/1/stdout.log"), "train_rank5.log", str(NODE_1 / "attempt_1/0/stdout.log")]
    assert log_dirs.job_ranks(mixed, None, print) == [1, None, 2]


def test_whole_second_stamps_time_the_steps_between_lines_far_enough_apart(tmp_path):
    """fairseq stamps its lines to the second and prints every 100 updates: 46 s apart, the cut
    of each stamp is ~2% of the interval, and the updates between get its mean (460 ms); lines 2 s
    apart give no time (the cut could be half of it)."""
    lines = [(0, 100), (46, 200), (92, 300), (94, 310)]
    text = "".join(f"2026-12-02 10:{s // 60:02d}:{s % 60:02d} | INFO | train_inner | epoch 001:    {u} / 1975 "
                   f"loss=9.1, ups=2.15, num_updates={u}, lr=0.001\n" for s, u in lines)
    log = tmp_path / "train.log"
    log.write_text(text)
    result = read_file(str(log), None)
    assert [(it.record["step"], it.record.get("step_time_ms")) for it in result.items] == [
        (100, None), (200, 460.0), (300, 460.0), (310, None)]
    assert all(it.record.get("step_time_from_ts") for it in result.items[1:3])


def test_watchdog_lines_are_placed_at_their_own_times():
    """Rank 2's collective timed out at 05:06:30, eight minutes before rank 7's heartbeat monitor
    gave up (05:14:36), though the paste lists rank 7's first: ingest orders them by their times."""
    result = read_file(str(Path(__file__).resolve().parents[1] / "data" / "excerpts"
                           / "arctictraining_nccl-heartbeat_watchdog-stuck.log"), None)
    assert result.timestamps == "printed"
    first, second = sorted(result.items, key=lambda it: it.ts)
    assert (first.record["rank"], first.record["error"], second.record["rank"], second.record["error"]) == (
        2, "nccl_timeout", 7, "nccl_heartbeat")
    assert second.ts - first.ts == (8 * 60 + 6) * 10**9 + 393067540 - 929096625


def test_a_log_that_prints_every_n_steps_runs_n_steps_between_its_lines(tmp_path):
    """A loop that prints every 10 steps the mean step time of those 10, and no timestamp but
    one date before its first step: the times placed on its lines are 10 steps apart (before,
    each line moved its rank's clock by one step, and the job seemed to run for a tenth of its
    time)."""
    log = tmp_path / "train.log"
    log.write_text("Sun May 23 08:40:52 2021\n"
                   + "".join(f"step {n}/40 loss 2.5 step_time_ms {ms}\n"
                             for n, ms in ((10, 100), (20, 100), (30, 250), (40, 100))))
    result = read_file(str(log), None)
    t0 = 1621759252 * 10**9
    assert [(it.record["step"], it.ts - t0) for it in result.items] == [
        (10, 100_000_000), (20, 1_100_000_000), (30, 3_600_000_000), (40, 4_600_000_000)]
    undated = tmp_path / "undated.log"
    undated.write_text("".join(log.read_text().splitlines(keepends=True)[1:]))
    os.utime(undated, ns=(t0, t0))
    result = read_file(str(undated), None)
    assert [it.ts - t0 for it in result.items] == [-4_500_000_000, -3_500_000_000, -1_000_000_000, 0]


def _elapsed_timed(path: Path) -> list[tuple]:
    return [(it.record["step"], it.record["step_time_ms"]) for it in read_file(str(path), None).items
            if it.record.get("step_time_from_elapsed")]


def test_a_bars_elapsed_time_gives_its_steps_times():
    """HF Trainer bars print no step time, only the time elapsed (whole seconds) and tqdm's
    smoothed rate.  BigScience's GPT-2 run on 16 nodes draws a step every ~3.5 min: each step's
    time is the elapsed time since the step before (225, 435, 650 and 871 s; one node's 872).  ezpz's Llama run
    draws steps ~3.7 s apart: the mean step of each run of steps 20 s long or more."""
    big = _elapsed_timed(CORPUS / "hf_trainer" / "bigscience_hf-trainer-deepspeed-zero3_gpt2_16node_slurm_cr-progress.log")
    assert Counter(big) == {(2, 210_000.0): 16, (3, 215_000.0): 16, (4, 221_000.0): 15, (4, 222_000.0): 1}
    ezpz = _elapsed_timed(CORPUS / "hf_trainer" / "ezpz_hf-trainer_llama3.2-1b_aurora-xpu_24rank_fsdp.log")
    assert ezpz == [(7, approx(22_000 / 6)), (96, approx(326_000 / 89)), (100, 12_500.0)]


def test_a_bar_that_starts_again_times_from_its_new_start():
    """Lightning draws a bar per epoch, its time elapsed from 0 again; a record that prints its
    own step time keeps it."""
    from ridgescope.cli.cmd_ingest import times_from_elapsed

    def bar(step, elapsed, **more):
        return Item(0, {"kind": "progress", "step": step, "elapsed_s": elapsed, **more}, None, False)
    items = [bar(5, 30.0), bar(10, 55.0), bar(11, 2.0), bar(20, 40.0), bar(30, 80.0, step_time_ms=3900.0),
             Item(1, {"kind": "progress", "step": 31, "elapsed_s": 90.0}, None, False)]
    times_from_elapsed(items)
    assert [it.record.get("step_time_ms") for it in items] == [None, 5000.0, None, approx(38_000 / 9), 3900.0, None]
    assert "step_time_from_elapsed" not in items[4].record
    # Ignite's bar, one record per epoch: each epoch's bar counts its own time, so two epochs'
    # ends are no run of steps, whatever their times (its count in the epoch says so)
    ends = [bar(100, 40.0, iter_in_epoch=100), bar(200, 65.0, iter_in_epoch=100),
            bar(230, 70.0, iter_in_epoch=30), bar(260, 95.0, iter_in_epoch=60)]
    times_from_elapsed(ends)
    assert [it.record.get("step_time_ms") for it in ends] == [None, None, None, approx(25_000 / 30)]


def test_a_log_whose_steps_cannot_be_timed_says_so(tmp_path):
    """MiniMind's lines print no step time (`epoch_time` is the time left) and no timestamp:
    `ingest` stores them, and says why `steps` will show none of them."""
    log = tmp_path / "pretrain.log"
    log.write_text("Epoch:[1/1](100/44160), loss: 7.4568, logits_loss: 7.4568, aux_loss: 0.0000, lr: 0.00049999, "
                   "epoch_time: 85.0min\n"
                   "Epoch:[1/1](200/44160), loss: 6.9873, logits_loss: 6.9873, aux_loss: 0.0000, lr: 0.00049998, "
                   "epoch_time: 53.0min\n")
    result = read_file(str(log), None)
    assert result.timestamps == "unknown" and result.records == 2
    assert untimed_steps(result) == (
        "its 2 step records print no step time, and the log no timestamps to time them by: they are "
        "stored (the progress table), but `steps` and `explain` will show none of its steps")
    # the same lines with timestamps 20 s apart are timed by them
    log.write_text("".join(f"2024-05-01 10:00:{s:02d} " + line + "\n" for s, line in
                           zip((0, 40), log.read_text().splitlines())))
    result = read_file(str(log), None)
    assert result.items[-1].record["step_time_ms"] == 400.0 and untimed_steps(result) is None


def test_open_clips_stamp_has_a_comma_between_date_and_time():
    """open_clip's logger stamps `%Y-%m-%d,%H:%M:%S`."""
    assert line_timestamp("2023-06-29,15:44:40 | INFO | Train Epoch: 0 [    64/109468 (0%)] Loss: 1.0672") == (
        calendar.timegm((2023, 6, 29, 15, 44, 40)) * 10**9, False)


def test_opennmt_steps_are_timed_by_their_stamps():
    """OpenNMT-py's statistics lines, 50 steps ~150 s apart, stamped to the millisecond: each
    one's step time is the mean of the 50 steps before it (the shard loaded between 2300 and
    2350 is in that interval's)."""
    result = read_file(str(Path(__file__).resolve().parents[1] / "data" / "excerpts" /
                           "opennmt-py-0.8_summarization_step-statistics.log"), None)
    assert result.timestamps == "printed" and untimed_steps(result) is None
    timed = {it.record["step"]: it.record["step_time_ms"] for it in result.items
             if it.record is not None and "step_time_ms" in it.record}
    assert timed[2300] == approx((148.007) * 1000 / 50) and timed[2350] == approx(216.725 * 1000 / 50)
    assert sorted(timed) == list(range(2300, 2700, 50))


def test_month_first_dates_of_hugging_face_and_nanotron_loggers():
    """`%m/%d/%Y %H:%M:%S`, the date format of Hugging Face's example scripts and of Nanotron's
    logger, and Rich's `[%x %X]`: month first, as they print it, unless the first number is no
    month."""
    assert line_timestamp("12/04/2026 21:33:32 - INFO - __main__ - [RANK 0] ***** Running training *****") == (
        calendar.timegm((2026, 12, 4, 21, 33, 32)) * 10**9, False)
    assert line_timestamp("31/01/2024 23:59:59,5 - INFO - x")[0] == calendar.timegm((2024, 1, 31, 23, 59, 59)) * 10**9 + 5 * 10**8
    assert line_timestamp("[12/06/26 10:00:00] INFO     step 1 loss 3.0                      train.py:42") == (
        calendar.timegm((2026, 12, 6, 10, 0, 0)) * 10**9, False)       # Rich's handler, `[%x %X]`
    for line in ("13/13/2024 10:00:00 x", "a/01/06/2024 10:00:00 x", "01/06/2024 10:00:00:00 x", "1/06/2024 10:00:00",
                 "01/06/202 10:00:00 x"):
        assert line_timestamp(line) is None, line
    nanotron = read_file(str(CAPTURED / "nanotron-0.4_tiny-llama_1rank_cpu.log"), None)
    steps = [it for it in nanotron.items if it.record["kind"] == "progress"]
    # stamped to the second, steps of ~7 ms: a new second's step at its stamp, those between
    # by their printed times
    assert nanotron.timestamps == "partly printed, the rest estimated"
    assert {it.source for it in steps} == {"log", "estimated"}
    assert time_of(next(it.ts for it in steps if it.record["step"] == 13)) == (2026, 11, 30, 23, 22, 35)


def time_of(ns: int) -> tuple:
    return tuple(time.gmtime(ns // 10**9))[:6]
