"""Single-line and short-stream behaviour of each parser, including the variants their docs describe."""
from __future__ import annotations

from pathlib import Path

import pytest
from pytest import approx

from ridgescope.parsers import Dispatcher, split_rank_prefix
from ridgescope.parsers.tee import TeeParts

from .conftest import feed_all


@pytest.mark.parametrize("line,rank,rest", [
    ("[rank3]:step 1", 3, "step 1"),
    ("[default12]:hello", 12, "hello"),
    ("[rank0]:[rank0]:[W522 x] msg", 0, "[W522 x] msg"),
    ("[rank1]: Traceback (most recent call last):", 1, "Traceback (most recent call last):"),
    ("[rank1]:   File \"x.py\", line 3", 1, "  File \"x.py\", line 3"),
    ("[default1]:[rank1]: RuntimeError: x", 1, "RuntimeError: x"),
    ("[default3]:[rank11]: RuntimeError: x", 3, "RuntimeError: x"),    # local, as the node's other lines
    ("1: [rank11]:step 6", 11, "step 6"),       # srun's label of one torchrun a node: the node's
    ("1: [default3]:step 6", 1, "step 6"),      # (the block reader numbers it, `srun.flatten`)
    ("[default2]: 50%|", 2, " 50%|"),
    ("[rank\u0663]: x", None, "[rank\u0663]: x"),       # numbers are ASCII digits, in every engine
    ("[12]:step 1/5", 12, "step 1/5"),
    ("[1]:[rank1]: Traceback (most recent call last):", 1, "Traceback (most recent call last):"),
    ("[3] NCCL INFO x", None, "[3] NCCL INFO x"),
    ("[1,2]: x", None, "[1,2]: x"),
    ("3: TRAIN [0][10/1291]", 3, "TRAIN [0][10/1291]"),
    ("416: foo", 416, "foo"),
    ("  0: {'a': 1}", 0, "{'a': 1}"),
    ("[1,3]<stdout>:iteration 5", 3, "iteration 5"),
    ("[0,15]<stderr>:oops", 15, "oops"),
    ("plain line", None, "plain line"),
    ("12:34:56 time", None, "12:34:56 time"),
    ("[INFO] x", None, "[INFO] x"),
    ("", None, ""),
])
def test_split_rank_prefix(line, rank, rest):
    assert split_rank_prefix(line) == (rank, rest)


def one(line, log_format=None, rank=None):
    recs, _ = feed_all([line], log_format, rank)
    assert len(recs) == 1, recs
    return recs[0]


def test_spine_line():
    r = one("step 12/60 loss 2.3451 step_time_ms 153.2")
    assert (r["kind"], r["step"], r["total_steps"], r["loss"], r["step_time_ms"]) == ("progress", 12, 60, 2.3451, 153.2)
    r = one("[rank1]:step 12/60 loss 2.3451 step_time_ms 153.2")
    assert r["rank"] == 1
    r = one("step 12/60 loss 2.3451 step_time_ms 153.2", log_format="generic")
    assert (r["step"], r["loss"], r["step_time_ms"]) == (12, 2.3451, 153.2)


def test_python_logging_default_format():
    """`logging.basicConfig()` prints `LEVEL:logger:message`: the step word follows a colon."""
    r = one("INFO:root:step 5 | loss 2.1 | lr 3e-4 | 120.5 ms")
    assert (r["framework"], r["step"], r["loss"], r["lr"]) == ("generic", 5, 2.1, 3e-4)
    r = one("INFO:__main__:Step 10: loss=2.5, grad_norm=1.1")
    assert (r["step"], r["loss"], r["grad_norm"]) == (10, 2.5, 1.1)
    assert feed_all(["WARNING:root:step_time is high"])[0] == []


def test_logger_source_location_is_no_metric():
    """`[train.py:88]`, `[examples/vit:445:train_fn]`: where the line was logged, not a value."""
    r = one("[2025-12-31 12:15:32,154][I][examples/vit:445:train_fn] iter=10 loss=7.1 dt=0.7 acc=0.5")
    assert (r["step"], r["loss"], r["metrics"]) == (10, 7.1, {"acc": 0.5})
    r = one("[train.py:88] Iter 5 loss 2.0 lr 0.1 tok/s 900")
    assert (r["step"], r["lr"], r["tokens_per_s"], r.get("metrics")) == (5, 0.1, 900, None)


def test_hf_dict_without_bar():
    r = one("{'loss': 2.1, 'learning_rate': 5e-05, 'epoch': 0.5}")
    assert (r["kind"], r["framework"], r["loss"], r["lr"], r["epoch"]) == ("progress", "hf_trainer", 2.1, 5e-05, 0.5)


def test_hf_bars_before_the_first_dict():
    """The Trainer's header names it, so the bars before its first log dict count too."""
    recs, d = feed_all(["***** Running training *****", "  Num examples = 1,000",
                        "  Total optimization steps = 500",
                        " 10%|█         | 50/500 [00:25<03:45,  2.00it/s]",
                        " 20%|██        | 100/500 [00:50<03:20,  2.00it/s]"])
    assert d.framework == "hf_trainer"
    assert [(r["step"], r["total_steps"], r["elapsed_s"]) for r in recs] == [(50, 500, 25.0), (100, 500, 50.0)]


def test_nccl_watchdog_rank_from_torchs_tag():
    r = one("[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=12345, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
            "600080 milliseconds before timing out.")
    assert (r["error"], r["rank"], r["seq"], r["ran_ms"]) == ("nccl_timeout", 3, 12345, 600080)
    r = one("[rank5]:[E1015 12:00:00.123456 1234 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
            "ran for 600080 milliseconds before timing out.")
    assert r["rank"] == 5       # the launcher's prefix says which process printed it


def test_hf_eval_dict():
    recs, _ = feed_all(["{'eval_loss': 1.25, 'eval_runtime': 3.5, 'eval_samples_per_second': 10.0, 'epoch': 1.0}"])
    assert recs[0]["kind"] == "eval" and recs[0]["loss"] == 1.25 and recs[0]["duration_ms"] == 3500.0


def test_megatron_line_and_timers():
    recs, _ = feed_all([
        " iteration       10/  500000 | consumed samples:          640 | elapsed time per iteration (ms): 1234.5 |"
        " throughput per GPU (TFLOP/s/GPU): 150.2 | learning rate: 3.000E-05 | global batch size:    64 |"
        " lm loss: 6.0E+00 | loss scale: 1.0 | grad norm: 0.812 | number of skipped iterations:   0 |",
        "(min, max) time across ranks (ms):",
        "    forward-backward ...............................: (1100.10, 1101.20)",
        "time (ms) | forward-backward: 1000.00 | forward-compute: 400.00 | backward-compute: 590.00 |"
        " all-grads-sync: 50.00 | optimizer: 80.00 | batch-generator: 4.50",
    ])
    p = recs[0]
    assert (p["step"], p["total_steps"], p["step_time_ms"], p["loss"], p["tflops"], p["grad_norm"]) == \
        (10, 500000, 1234.5, 6.0, 150.2, 0.812)
    t = recs[-1]
    assert t["kind"] == "timing" and t["step"] == 10
    # `forward-backward` holds the batch's fetch and the gradients' reduction (its end, since 2023)
    assert t["lanes_ms"] == {"compute": 1000.0 - 4.5 - 50.0 + 80.0, "communication": 50.0, "input": 4.5}


def test_megatron_forks_rates_and_megatron_bridges_model_tflops():
    """Primus' and newer Megatron's rates (its own value before a mean, a ratio or `(avg ..)`),
    and Megatron-Bridge's `Step Time : ..s GPU utilization: ..MODEL_TFLOP/s/GPU`, printed before
    the iteration line it belongs to, also before the first."""
    head = " [2026-05-01 10:00:00] iteration       80/     100 | consumed samples:        10240 | "
    recs, _ = feed_all([
        head + "elapsed time per iteration (ms): 1548.1 | mem usages: 0.8131 | throughput per GPU "
        "(TFLOP/s/GPU): 57.6 | Tokens per second per GPU (Tok/s/GPU): 2645.8 | lm loss: 2.3E+00 |",
        head + "elapsed time per iteration (ms): 1500.0 | tokens per GPU (tokens/s/GPU): 9640.7 | "
        "throughput per GPU (TFLOP/s/GPU): 322.5/320.6 | max mem usage/usage_ratio: 12.34GB/45.6% |",
        head + "elapsed time per iteration (ms): 100.0 | compute per GPU (TFLOP/s/GPU): 496.3 (avg 496.1) | "
        "tokens/s/GPU inst/harmonic mean: 9640.7/9629.8 | global batch size: 32",
    ])
    assert [(r["step_time_ms"], r.get("tflops"), r.get("compute_tflops"), r["tokens_per_s_per_gpu"], r.get("mem_gb"))
            for r in recs] == [(1548.1, 57.6, None, 2645.8, None), (1500.0, 322.5, None, 9640.7, 12.34),
                               (100.0, None, 496.3, 9640.7, None)]
    recs, _ = feed_all([
        "Step Time : 9.09s GPU utilization: 663.5MODEL_TFLOP/s/GPU",
        " [2025-12-22 15:18:33] iteration       49/      50 | consumed samples:        25088 | elapsed time per "
        "iteration (ms): 9089.0 | learning rate: 3.000000E-05 | global batch size:   512 | lm loss: 8.114214E+00 |",
        "Step Time : 9.10s GPU utilization: 662.8MODEL_TFLOP/s/GPU",
        " [2025-12-22 15:18:42] iteration       50/      50 | consumed samples:        25600 | elapsed time per "
        "iteration (ms): 9101.0 | learning rate: 3.000000E-05 | global batch size:   512 | lm loss: 8.1E+00 |",
    ])
    assert [(r["framework"], r["step"], r["step_time_ms"], r["tflops"]) for r in recs] == [
        ("megatron", 49, 9089.0, 663.5), ("megatron", 50, 9101.0, 662.8)]
    recs, _ = feed_all([      # another rank's iteration line first: its rate goes to no other step
        " [2025-12-22 15:18:33] iteration       13/      50 | elapsed time per iteration (ms): 510.6 |",
        "Step Time : 0.51s GPU utilization: 12.5MODEL_TFLOP/s/GPU",
        " [2025-12-22 15:18:34] iteration       14/      50 | elapsed time per iteration (ms): 9.1 |"])
    assert [r.get("tflops") for r in recs] == [None, None]


def test_megatron_checkpoint_and_resume():
    recs, _ = feed_all([
        "saving checkpoint at iteration    2000 to /ckpt/gpt",
        "  successfully saved checkpoint at iteration    2000 to /ckpt/gpt",
        " loading checkpoint from /ckpt/gpt at iteration 2000",
        "  successfully loaded checkpoint from /ckpt/gpt [ t 1/1, p 1/1 ] at iteration 2000",
    ], log_format="megatron")
    ck = [r for r in recs if r["kind"] == "checkpoint"]
    assert [(r["action"], r["step"], r["path"]) for r in ck] == [("save", 2000, "/ckpt/gpt")] * 2 + [("load", 2000, "/ckpt/gpt")] * 2
    assert [r["step"] for r in recs if r["kind"] == "restart"] == [2000]


@pytest.mark.parametrize("line", [
    "2023-06-13 17:29:55 | INFO | fairseq.trainer | loaded checkpoint /ckpt/nat59/checkpoint_last.pt (epoch 143 @ 40015 updates)",
    "[2021-02-01 10:00:00,000][fairseq.trainer][INFO] - Loaded checkpoint /ckpt/checkpoint_last.pt (epoch 143 @ 40015 updates)"])
def test_fairseq_load_of_a_run_resumes_at_its_updates(line):
    """fairseq's trainer names the updates a checkpoint holds: a resume there (its path holds
    `checkpoint_`, and its logger's name may: neither is a setting's name)."""
    recs, _ = feed_all([line])
    assert [(r["kind"], r["step"]) for r in recs] == [("checkpoint", 40015), ("restart", 40015)]
    assert (recs[0]["action"], recs[0]["phase"], recs[0]["path"].split("/")[-1]) == ("load", "end", "checkpoint_last.pt")


@pytest.mark.parametrize("line, rank", [
    ("[E1201 10:00:00.123456789 1234 ProcessGroupNCCL.cpp:2168] [PG ID 0 PG GUID 0(default_pg) Rank 3]  failure "
     "detected by watchdog at work sequence id: 12 PG status: last enqueued work: 12, last completed work: 11", 3),
    ("[E1201 10:00:00.123456789 1234 ProcessGroupNCCL.cpp:2168] [PG ID 4 PG GUID 17(TENSOR_MODEL_PARALLEL_GROUP) "
     "Rank 1]  failure detected by watchdog at work sequence id: 12 PG status: last enqueued work: 12, last "
     "completed work: 11", None)])
def test_nccl_watchdog_rank_without_a_launcher_prefix(line, rank):
    """Where no launcher put the rank in front, the default process group's rank is the job's;
    another group's is not."""
    recs, _ = feed_all([line])
    assert [(r["error"], r["rank"], r["seq"], r["pg_rank"]) for r in recs] == [("nccl_watchdog", rank, 12, 1 if rank is None else 3)]


def test_megatron_gradient_check_in_a_traceback_is_its_ranks_nan():
    """The check's assertion ending an unprefixed traceback: one `nan_inf` error, of the rank the
    message names, with its node and device (the message of `param_and_grad_buffer.py`)."""
    recs, _ = feed_all([
        "Traceback (most recent call last):",
        '  File "/workspace/megatron/core/distributed/param_and_grad_buffer.py", line 115, in start_grad_sync',
        "    assert not norm.isnan(), (",
        "AssertionError: Rank 13: found NaN in local grad norm in backward pass before data-parallel communication "
        "collective. Device: 5, node: node-15-11"])
    assert [(r["error"], r["rank"], r["host"], r["device"], r["exception"]) for r in recs] == [
        ("nan_inf", 13, "node-15-11", 5, "AssertionError")]


def test_nccl_ib_completion_error_before_2_19():
    """NCCL before 2.19 wrote the completion error as `with error 12, opcode 0, len 0, vendor err
    129` (its ib transport's WARN format), no direction after it."""
    recs, _ = feed_all(["node-7:4242:4300 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.7<0>",
                        "node-7:4242:4301 [3] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
                        "10.0.0.12<58172> with error 12, opcode 0, len 0, vendor err 129"])
    assert [(r["error"], r["peer"], r["ib_status"], r["vendor_err"], r["host"], r["device"]) for r in recs] == [
        ("nccl_net", "10.0.0.12", 12, 129, "node-7", 3)]
    assert "direction" not in recs[0]


def test_fairseq_py_of_2017_counts_no_updates_and_gives_no_record():
    """fairseq-py's lines of 2017 (as fairseq's issue 301 shows them) name no `num_updates`: its
    pipes read as fairseq's later ones would give records of no step."""
    recs, _ = feed_all([
        "| epoch 005 | valid on 'valid' subset  1000 / 1311 loss=2.72",
        "| epoch 005 | train loss 2.92 | train ppl 7.59 | s/checkpoint    7748 | words/s    961 | words/batch    906 "
        "| bsz    32 | lr 0.001000 | clip 100% | gnorm 2.6727"])
    assert recs == []


def test_torchtitan_line():
    r = one("step: 10  loss:  7.9  memory: 30.1GiB(40.5%)  tps: 1,234  tflops: 88.5  mfu: 12.3%")
    # `tps`: "tokens per second per device", in torchtitan's words
    assert (r["framework"], r["step"], r["loss"], r["mem_gb"], r["tokens_per_s_per_gpu"], r["tflops"], r["mfu"]) == \
        ("torchtitan", 10, 7.9, 30.1, 1234, 88.5, 12.3)
    recs, _ = feed_all(["[titan] 2025-01-01 - root - INFO - Finished saving the checkpoint (or staging if async"
                        " is enabled)in 12.34 seconds."], "torchtitan")
    assert recs[0]["kind"] == "checkpoint" and recs[0]["duration_ms"] == approx(12340.0)


def test_deepspeed_pipeline_engine_line():
    """PipelineEngine's line, with the additional losses a model may return between the loss
    and the time (`f'{loss_name}: {value:0.4f} '`); the time is the mean over steps_per_print."""
    r = one("steps: 200 loss: 2.3951 moe_loss: 0.0100 aux: nan iter time (s): 0.457 samples/sec: 35.011")
    assert (r["framework"], r["step"], r["loss"], r["step_time_ms"], r["samples_per_s"]) == (
        "deepspeed", 200, 2.3951, 457.0, 35.011)
    assert r["losses"] == {"moe_loss": 0.01}       # nan, as everywhere, is no value
    r = one("[default0]:steps: 7 loss: 0.6439 iter time (s): 0.009 samples/sec: 855.544")
    assert (r["rank"], r["step"], r["step_time_ms"]) == (0, 7, 9.0)


def test_deepspeed_wall_clock_breakdown():
    """One record per optimizer step, from the step's own timers line; the micro-batches' lines
    give none.  Steps are counted; a `step=N` line moves the count only when far from it (a
    resumed run): 1 against 30 may be stdout's buffering, 1 against 5000 is not."""
    head = "[2024-01-01 00:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] "
    recs, d = feed_all([
        head + "step=30, skipped=0, lr=[1e-4], mom=[(0.9, 0.95)]",
        head + "time (ms) | forward_microstep: 100.50 | backward_microstep: 250.00 | backward_inner_microstep: 200.00"
        " | backward_allreduce_microstep: 50.00 | step_microstep: 20.00",
        head + "time (ms) | forward: 100.50 | backward: 250.00 | backward_inner: 200.00 | backward_allreduce: 50.00"
        " | step: 20.00",
    ])
    assert d.framework == "deepspeed"
    p, t = recs
    assert (p["kind"], p["step"]) == ("progress", 30)
    assert (t["kind"], t["step"], t["step_inferred"], t["rank"]) == ("timing", 1, True, 0)
    assert t["lanes_ms"] == {"compute": 320.5, "communication": 50.0}
    recs, _ = feed_all([head + "step=5000, skipped=3, lr=[1e-4], mom=[(0.9, 0.95)]",
                        "[Rank 0] time (ms) | fwd: 1.0 | bwd: 2.0 | bwd_inner: 1.5 | bwd_allreduce: 0.5 | step: 0.5"])
    assert [(r["kind"], r["step"]) for r in recs] == [("progress", 5000), ("timing", 5000)]


def test_tqdm_redraws_one_record_per_step():
    line = "\r".join(f" {p}%|##  | {n}/10 [00:0{n}<00:10, {1.5 + n / 10:.2f}it/s]" for n, p in
                     [(0, 0), (1, 10), (1, 10), (2, 20), (2, 20), (2, 20), (3, 30)])
    recs, _ = feed_all(["{'loss': 1.0, 'learning_rate': 1e-4, 'epoch': 0.1}".join(["", ""]), line], "hf_trainer")
    prog = [r for r in recs if r["kind"] == "progress" and r["step"]]
    assert [r["step"] for r in prog] == [1, 2, 3]
    assert prog[1]["it_per_s"] == 1.7                          # final redraw of step 2


@pytest.mark.parametrize("prefix, rank", [("", None), ("[rank3]:", 3)])
def test_a_whole_epoch_of_redraws_on_one_line(prefix, rank):
    """A bar that ran a whole epoch into a pipe is one line of 1,000 redraws, 90 KB, five times
    the longest line read whole: every step is read, under the line's launcher prefix, and a
    garbled redraw (a stray bell) is counted and skipped alone."""
    redraws = [f"Steps: {n // 10:3d}%|{'#' * (n // 100):10s}| {n}/1000 [00:{n % 60:02d}<00:10,  9.80it/s, "
               f"lr=0.0001, step_loss=0.{n % 97:02d}]" for n in range(1, 1001)]
    redraws[499] += "\a"
    line = prefix + "\r".join(redraws) + "\n"
    for read in ("feed", "feed_chunk"):
        d = Dispatcher()
        recs = getattr(d, read)(line.encode()) + d.flush()
        assert [r["step"] for r in recs] == list(range(1, 500)) + list(range(501, 1001))
        assert {r["rank"] for r in recs} == {rank}
        assert recs[-1]["loss"] == 0.30                          # step 1000: 1000 % 97
        assert (d.stats["lines"], d.stats["garbage"], d.stats["truncated"]) == (1, 1, 0)


def test_tf_keras_2_bar_and_verbose_2():
    """tf.keras 2 prints its bar as `[====>....]` with an `ETA:` while the epoch runs, and the
    epoch's time and mean step time at its end; with `verbose=2`, `- 4s/epoch - 2ms/step` after
    the metrics.  The epoch comes from the `Epoch` line; an `Unknown` total counts on."""
    erase = "\b" * 80 + "\r"
    lines = ["Epoch 1/2",
             erase.join(["", "   1/1875 [..............................] - ETA: 3:15 - loss: 2.3050 - accuracy: 0.0938",
                         "  32/1875 [..............................] - ETA: 3s - loss: 1.2950 - accuracy: 0.6211",
                         "1875/1875 [==============================] - 5s 3ms/step - loss: 0.2941 - accuracy: 0.9147"]),
             "Epoch 2/2",
             "1875/1875 - 4s - loss: 0.2937 - accuracy: 0.9148 - val_loss: 0.1412 - 4s/epoch - 2ms/step",
             "Epoch 3/3",
             erase.join(["", "   10/Unknown - 1s 50ms/step - loss: 0.2500"])]
    recs, d = feed_all(lines)
    assert d.stats["garbage"] == 0
    prog = [(r["step"], r["epoch"], r["loss"], r.get("step_avg_ms"), r.get("epoch_time_s"), r.get("step_inferred"))
            for r in recs if r["kind"] == "progress"]
    assert prog == [(1, 1, 2.305, None, None, None), (32, 1, 1.295, None, None, None),
                    (1875, 1, 0.2941, 3.0, 5.0, None), (3750, 2, 0.2937, 2.0, 4.0, None),
                    (3760, 3, 0.25, 50.0, None, True)]
    assert [(r["step"], r["loss"]) for r in recs if r["kind"] == "eval"] == [(3750, 0.1412)]


def test_backspaces_only_before_a_redraw():
    """Keras erases its bar with backspaces before each `\r`: those go; a backspace anywhere
    else is a control character, and its line garbage."""
    d = Dispatcher()
    d.feed("Epoch 1/1")
    (rec,) = d.feed("\b\b\r 1/4 \u2501\u2501 0s 5ms/step - loss: 1.5\b\b\r 2/4 \u2501\u2501 0s 5ms/step - loss: 1.4")
    assert (rec["framework"], rec["step"], rec["loss"]) == ("keras", 1, 1.5)
    assert d.feed("step 3/10 loss 1.0\b2") == []
    assert d.stats["garbage"] == 1


def test_epoch_line_alone_claims_no_stream():
    """A loop of one's own prints `Epoch 1/10` too: the stream stays unclaimed, and its tqdm bar
    is read as the loop's."""
    recs, _ = feed_all(["Epoch 1/10",
                        "Steps:  10%|#         | 1/10 [00:01<00:09,  1.00it/s, step_loss=0.5]\r"
                        "Steps:  20%|##        | 2/10 [00:02<00:08,  1.00it/s, step_loss=0.4]"])
    assert [(r["framework"], r["step"]) for r in recs] == [("generic", 1), ("generic", 2)]


def test_lightning_bar_postfix_and_validation():
    lines = [
        "Epoch 0:  50%|█████     | 1/2 [00:01<00:01, 0.90it/s, v_num=3, train_loss=2.500]",
        "Epoch 0:  50%|█████     | 1/2 [00:01<00:01, 0.91it/s, v_num=3, train_loss=2.400]\r"
        "Epoch 0: 100%|██████████| 2/2 [00:02<00:00, 0.95it/s, v_num=3, train_loss=2.300]",
        "Validation DataLoader 0: 100%|██████████| 5/5 [00:00<00:00, 20.00it/s]",
        "Epoch 1:  50%|█████     | 1/2 [00:01<00:01, 0.97it/s, v_num=3, train_loss=2.100]",
    ]
    recs, _ = feed_all(lines)
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [(r["step"], r["loss"]) for r in prog] == [(1, 2.4), (2, 2.3), (3, 2.1)]
    assert prog[0]["framework"] == "lightning" and prog[0]["it_per_s"] == 0.91
    assert any(r["kind"] == "eval" and r["batches"] == 5 for r in recs)


def test_lightning_step_logged_loss_and_model_checkpoint():
    """`self.log("train_loss", ..., on_step=True, on_epoch=True)` shows `train_loss_step` in the
    bar; a verbose ModelCheckpoint says where it saves."""
    recs, _ = feed_all([
        "Epoch 0:  50%|█████     | 50/100 [00:10<00:10,  4.95it/s, v_num=0, train_loss_step=2.310, train_loss_epoch=2.400]",
        "Epoch 0, global step 100: 'val_loss' reached 2.34500 (best 2.34500), saving model to "
        "'/ckpt/epoch=0-step=100.ckpt' as top 1"])
    ckpt, prog = recs
    assert (ckpt["kind"], ckpt["step"], ckpt["action"], ckpt["path"]) == (
        "checkpoint", 100, "save", "/ckpt/epoch=0-step=100.ckpt")
    assert (prog["kind"], prog["step"], prog["loss"]) == ("progress", 50, 2.31)

def test_message_glued_to_a_bar_redraw():
    """A logger writing to the bar's stream before the bar's next `\r` leaves its message at the
    end of the redraw: the message is an event; a bar whose own label names a checkpoint is not."""
    recs, _ = feed_all([
        "Loading checkpoint shards: 100%|██████████| 3/3 [00:02<00:00,  1.10it/s]",
        " 50%|█████     | 8/16 [00:00<00:00, 14.71it/s][INFO] Saving checkpoint to /ckpt/step-8"])
    assert [(r["kind"], r["action"], r["path"]) for r in recs] == [("checkpoint", "save", "/ckpt/step-8")]


def test_lightning_rich_bar_variants():
    """RichProgressBar without `max_epochs` (`Epoch 3`), with an unknown length (`120/--`), with
    `v_num`, behind a torchrun prefix; the metrics column may wrap onto a line of its own."""
    bar = "\u2501" * 10 + "\u257a" + "\u2501" * 5
    recs, d = feed_all([
        f"[rank1]:Epoch 3  {bar} 120/-- 0:00:31 \u2022 -:--:-- 3.87it/s v_num: 0 train_loss: 1.234",
        f"[rank1]:\r\x1b[2KEpoch 3  {bar} 121/-- 0:00:31 \u2022 -:--:-- 3.88it/s v_num: 0 train_loss: 1.2",
        "[rank1]:                           val_acc: 0.875",
        f"[rank1]:\r\x1b[2KEpoch 3  {bar} 122/-- 0:00:32 \u2022 -:--:-- 3.88it/s v_num: 0 train_loss: 1.1",
        "[rank1]:  not metrics: at all here"])
    assert d.framework == "lightning"
    assert [(r["rank"], r["step"], r["loss"], r.get("metrics")) for r in recs] == [
        (1, 120, 1.234, None), (1, 121, 1.2, {"val_acc": 0.875}), (1, 122, 1.1, None)]
    assert (recs[0]["epoch"], recs[0].get("total_steps"), recs[0]["elapsed_s"], recs[0]["it_per_s"]) == (
        3, None, 31.0, 3.87)


def test_lightning_bar_after_hf_lines_is_lightnings_alone():
    """A stream that first shows HF's log dict (a Ray job's mixed workers, say) and then a
    Lightning bar: the HF parser sees the bar first, but must not keep it as a step of its own,
    which it would give at the end as a second record of step 5."""
    recs, d = feed_all([
        "{'loss': 2.0, 'learning_rate': 1e-05, 'epoch': 0.1}",
        "Epoch 0:  50%|█████     | 5/10 [00:01<00:01,  5.00it/s, v_num=0, train_loss=1.2]",
        "Epoch 0: 100%|██████████| 10/10 [00:02<00:00,  5.00it/s, v_num=0, train_loss=1.1]"])
    assert [(r["framework"], r["step"]) for r in recs] == [
        ("hf_trainer", None), ("lightning", 5), ("lightning", 10)]
    assert d.framework == "lightning"



def test_numbers_printed_inside_their_type():
    """A metric left as a tensor, or a NumPy 2 scalar, prints as `tensor(1.52, device='cuda:0')` or
    `np.float64(1.25)` inside a printed dict."""
    r = one("{'loss': 2.1234, 'grad_norm': tensor(1.5234, device='cuda:0'), 'learning_rate': 4.9e-05, 'epoch': 0.02}")
    assert (r["loss"], r["grad_norm"], r["lr"]) == (2.1234, 1.5234, 4.9e-05)
    r = one("{'loss': 2.0, 'grad_norm': np.float64(1.25), 'epoch': 0.04}")
    assert r["grad_norm"] == 1.25


def test_nccl_init_lines_of_newer_versions():
    """NCCL 2.19 and later name the call that made the communicator."""
    recs, _ = feed_all([
        "node1:1234:1234 [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
        "node1:1234:1300 [3] NCCL INFO ncclCommInitRank comm 0x55d4a1b2c3d0 rank 3 nranks 8 cudaDev 3 nvmlDev 3 "
        "busId 18000 commId 0x2ef13c5ed0553a05 - Init COMPLETE",
        "node1:1234:1300 [0] NCCL INFO ncclCommSplit comm 0x55d4a1b2c3e0 rank 1 nranks 4 cudaDev 0 nvmlDev 0 "
        "busId 9a000 parent 0x55d4a1b2c3d0 splitCount 1 color -1 key 1 commId 0x1234 - Init COMPLETE"])
    a, b = recs
    assert (a["kind"], a["version"], a["comm_rank"], a["nranks"], a["device"], a["comm_id"]) == (
        "nccl_init", "2.21.5", 3, 8, 3, "0x2ef13c5ed0553a05")
    assert (b["comm"], b["comm_rank"], b["nranks"], b["bus_id"], b["comm_id"]) == (
        "0x55d4a1b2c3e0", 1, 4, "9a000", "0x1234")


def test_nccl_init_timings():
    """NCCL 2.23 and later say how long a communicator's init took, and in what."""
    r = one("node1:1234:1300 [3] NCCL INFO Init timings - ncclCommInitRank: rank 3 nranks 8 total 95.13 "
            "(kernels 0.17, alloc 0.02, bootstrap 93.93, allgathers 0.00, topo 0.01, graphs 0.00, "
            "connections 1.00, rest 0.00)")
    assert (r["kind"], r["phase"], r["rank"], r["nranks"], r["init_s"]) == ("nccl_init", "timings", 3, 8, 95.13)
    assert r["init_phases_s"]["bootstrap"] == 93.93 and len(r["init_phases_s"]) == 8


RAY_JOB = [
    "(TorchTrainer pid=71127) Started distributed worker processes:",
    "(TorchTrainer pid=71127) - (ip=10.216.70.82, pid=75298) world_rank=0, local_rank=0, node_rank=0",
    "(TorchTrainer pid=71127) - (node_id=3ea81f12c0f7, ip=10.216.70.83, pid=75299) world_rank=1, local_rank=0, "
    "node_rank=1",
    "(RayTrainWorker pid=75297, ip=10.216.70.84) {'loss': 2.0, 'learning_rate': 4.5e-05, 'epoch': 0.3}",
    "(RayTrainWorker pid=75299, ip=10.216.70.83) {'loss': 2.1, 'learning_rate': 4.5e-05, 'epoch': 0.3}",
    "(RayTrainWorker pid=75298) {'loss': 2.2, 'learning_rate': 4.5e-05, 'epoch': 0.3} [repeated 3x across cluster]",
]


@pytest.mark.parametrize("chunk", [False, True])
def test_ray_workers_get_their_ranks(chunk):
    """Ray prefixes a worker's lines with its pid (and its ip off the driver's node); the trainer's
    list of workers says which rank each is.  An unlisted worker stays unattributed."""
    d = Dispatcher()
    recs = d.feed_chunk("\n".join(RAY_JOB) + "\n") if chunk else [r for line in RAY_JOB for r in d.feed(line)]
    recs += d.flush()
    assert [(r["rank"], r["loss"]) for r in recs] == [(None, 2.0), (1, 2.1), (0, 2.2)]


def test_ray_rank_zero_names_itself():
    recs, _ = feed_all(["(RayTrainWorker pid=8640) 2023-07-03 01:08:37,128\tINFO config.py:86 -- Setting up "
                        "process group for: env:// [rank=0, world_size=1]",
                        "(RayTrainWorker pid=8640) step 1/10 loss 2.5 step_time_ms 100"])
    assert [(r["rank"], r["step"]) for r in recs] == [(0, 1)]


def test_checkpoint_messages_that_name_the_checkpoint_first():
    """DeepSpeed announces and commits a checkpoint by its tag; NeMo schedules an async save and
    says when it is finalized.  A config key named `checkpoint_...` is no checkpoint."""
    recs, _ = feed_all([
        "[2023-07-24 13:21:33,261] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint global_step10 "
        "is about to be saved!",
        "[2023-07-24 13:21:35,261] [INFO] [torch_checkpoint_engine.py:33:commit] [Torch] Checkpoint "
        "global_step10 is ready now!",
        "[NeMo I 2025-05-22 20:08:53 model_checkpoint:497] Scheduled async checkpoint save for "
        "/mnt/nemo/ckpt/model_name=0--val_loss=0.00-step=18-consumed_samples=9728.0-last.ckpt",
        "[NeMo I 2025-05-22 20:09:41 model_checkpoint:522] Async checkpoint save for step 19 finalized successfully.",
        "checkpoint_activations=True loaded",
        "    --fp16     --checkpoint-activations     --log-interval 10     --save-interval 500",
        "WARNING: could not find the metadata file /ckpt/checkpoint/gpt3/latest, if trying to load latest "
        "checkpoint please ensure"])
    assert [(r["kind"], r["action"], r["step"], r["phase"]) for r in recs] == [
        ("checkpoint", "save", 10, "start"), ("checkpoint", "save", 10, "end"),
        ("checkpoint", "save", 18, "start"), ("checkpoint", "save", 19, "end")]
    assert recs[2]["path"].endswith("step=18-consumed_samples=9728.0-last.ckpt")
    assert "torch_checkpoint_engine.py" in recs[1]["message"]       # the line as printed


def test_composer_console():
    recs, _ = feed_all([
        "[batch=1/100]:",
        "\t Train time/batch: 0",
        "\t Train loss/train/total: 6.8732",
        "\t Train throughput/samples_per_sec: 512.5",
        "\t Train lr-DecoupledAdamW/group0: 0.0006",
        "[batch=2/100]:",
        "\t Train loss/train/total: 6.5",
    ])
    assert [(r["step"], r["loss"]) for r in recs] == [(1, 6.8732), (2, 6.5)]
    assert recs[0]["samples_per_s"] == 512.5 and recs[0]["lr"] == 0.0006 and recs[0]["total_steps"] == 100


@pytest.mark.parametrize("header, step", [
    ("[epoch=3][batch=2/8]:", 18),       # no time/batch printed: counted on across the epochs
    ("[token=12288/100000]:", None),     # a run counted in tokens, no time/batch: no step
    ("[sample=64/960]:", None)])
def test_composer_headers_of_other_units(header, step):
    recs, d = feed_all([header, "\t Train loss/train/total: 2.5"])
    assert d.framework == "composer"
    assert [(r["step"], r["loss"]) for r in recs] == [(step, 2.5)]
    recs, _ = feed_all([header, "\t Train time/batch: 41", "\t Train loss/train/total: 2.5"])
    assert recs[0]["step"] == 42


def test_timm_train_and_validate_lines():
    """timm's train.py, as its `_logger.info` f-strings print them (epoch and update from 0, of
    `updates_per_epoch`; `validate` counts its batches to the last one)."""
    recs, d = feed_all([
        "Train: 2 [  50/1251 (  4%)]  Loss: 6.912 (6.92)  Time: 0.412s, 1242.72/s  (0.450s, 1137.78/s)  "
        "LR: 1.000e-05  Data: 0.012 (0.051)",
        "Test: [   0/389]  Time: 0.512 (0.512)  Loss:  0.8906 (0.8906)  Acc@1:  78.1250 (78.1250)  "
        "Acc@5:  93.7500 (93.7500)",
        "Test: [ 389/389]  Time: 0.112 (0.130)  Loss:  0.9906 (0.9123)  Acc@1:  75.0000 (76.4500)  "
        "Acc@5:  92.5000 (93.0100)"])
    train, result = recs
    assert (train["framework"], train["step"], train["epoch"], train["iter_in_epoch"]) == ("timm", 2553, 2, 50)
    assert (train["loss"], train["step_time_ms"], train["samples_per_s"], train["lr"]) == (6.912, 412.0, 1242.72, 1e-05)
    assert train["lanes_ms"] == {"input": 12.0}
    assert (result["kind"], result["step"], result["metrics"]) == (
        "eval", 2553, {"Loss": 0.9123, "Acc@1": 76.45, "Acc@5": 93.01})


def test_composer_epochs_of_unknown_length_count_on():
    """A data loader without a length: `[epoch=2][batch=3]`, no total, no `time/batch`: the
    epoch's batches count on from the last batch of the epoch before."""
    lines = []
    for epoch, batches in ((1, (2, 4)), (2, (2, 4))):
        for b in batches:
            lines += [f"[epoch={epoch}][batch={b}]:", "\t Train loss/train/total: 2.5"]
    recs, _ = feed_all(lines)
    assert [r["step"] for r in recs] == [2, 4, 6, 8]


def test_the_line_that_closes_a_composer_record_is_read_too():
    recs, _ = feed_all([
        "[batch=1/100]:",
        "\t Train loss/train/total: 6.8732",
        "Saving checkpoint to /ckpt/ep0-ba1-rank0.pt",
    ])
    assert [(r["kind"], r["step"]) for r in recs] == [("progress", 1), ("checkpoint", 1)]
    assert recs[1]["path"] == "/ckpt/ep0-ba1-rank0.pt"


def test_llmc_step_lines():
    """llm.c's `train_gpt2` prints a nanoGPT-style line with its own separators."""
    recs, d = feed_all([
        "step    1/74 | loss 7.577453 (+nanz)| norm 52.7733 (+nanz)| lr 8.57e-07 | 2851.20 ms | 45.6% bf16 MFU | 183886 tok/s",
        "step    2/74 | loss 7.344102 (+nanz)| norm 30.1234 (+nanz)| lr 1.71e-06 | 295.12 ms | 60.1% bf16 MFU | 1776543 tok/s"])
    assert d.framework == "nanogpt"
    assert [(r["step"], r["total_steps"], r["loss"], r["grad_norm"], r["step_time_ms"], r["tokens_per_s"])
            for r in recs] == [(1, 74, 7.577453, 52.7733, 2851.2, 183886.0), (2, 74, 7.344102, 30.1234, 295.12, 1776543.0)]
    assert [r["mfu"] for r in recs] == [45.6, 60.1]


def test_nanogpt_variants():
    r = one("iter 100: loss 3.1234, time 123.45ms, mfu 35.20%")
    assert (r["step"], r["loss"], r["step_time_ms"], r["mfu"]) == (100, 3.1234, 123.45, 35.2)
    r = one("iter 0: loss 4.2791, time 8123.45ms, mfu -100.00%")    # not measured yet
    assert (r["step"], r["step_time_ms"], "mfu" in r) == (0, 8123.45, False)
    r = one("step    1/74 | train loss 11.010109 | norm 15.4089 | lr 1.00e-06 | (1233.64 ms | 425 tok/s)")
    assert (r["step"], r["total_steps"], r["loss"], r["grad_norm"], r["step_time_ms"], r["tokens_per_s"]) == \
        (1, 74, 11.010109, 15.4089, 1233.64, 425)
    r = one("step 2000: train loss 2.9, val loss 3.1")
    assert r["kind"] == "eval" and r["loss"] == 3.1


@pytest.mark.parametrize("line, want", [
    ("epoch 1 iter 10 time (ms): 153.2 loss 2.0", {"step": 10, "step_time_ms": 153.2, "loss": 2.0}),
    ("Iter 30/100 | loss: 1.93 | throughput (samples/s): 55.1 | batch time (s) 0.42",
     {"step": 30, "samples_per_s": 55.1, "step_time_ms": 420.0}),
    ("Iter 31/100 | loss: 1.93 | throughput (tokens/s): 5500 | time (sec): 0.42 | max mem (MiB): 2048",
     {"step": 31, "tokens_per_s": 5500.0, "step_time_ms": 420.0, "mem_gb": 2.0}),
    ("step 5 | loss 2.0 | step time (s): 1.25 | mem (GB): 12.5", {"step": 5, "step_time_ms": 1250.0, "mem_gb": 12.5}),
    ("step 6/10 | loss 2.0 | time (ms) 153.2 | throughput (tokens/s): 12000",
     {"step": 6, "step_time_ms": 153.2, "tokens_per_s": 12000.0}),
    ("step 7 | loss (train): 2.0 | time: 1.5", {"step": 7, "step_time_ms": 1500.0}),     # no unit: no pair
])
def test_a_unit_in_brackets_after_the_key(line, want):
    """`time (ms): 153.2`: the unit comes between the key and its value, as hand-written loops
    print it (and DeepSpeed's PipelineEngine, `iter time (s): 0.457`)."""
    r = one(line)
    assert {k: r.get(k) for k in want} == want, r


def test_a_share_of_memory_is_no_amount_and_a_level_no_key():
    """`mem: 59%` (Meta's Lingua prints the peak share of the device's memory so) is no 59 GB;
    its logger's level before the time (`INFO    24-10-19`) is no `info: 24`."""
    r = one("INFO    24-10-19 18:47:39.823625 - 0:00:51 - step: 3  acc: 0  loss: 12.1798  grad: 1.00e+01  "
            "wps: 1.82e+04  lr: 1.20e-06  mem: 59%  pow: 391.807 W")
    assert (r["step"], r["loss"], r.get("mem_gb"), r["metrics"]["mem_pct"]) == (3, 12.1798, None, 59.0)
    assert "info" not in r["metrics"] and r["metrics"]["acc"] == 0


def test_meta_lingua_gives_its_steps_time_from_its_iteration_and_its_data_wait():
    """Meta Lingua's loop (and the many trainers copied from it) prints `iter:`, the seconds from
    the batch in hand to the optimizer step (CUDA events), and `data:`, the wait for the batch
    before it: together, the step's time; the wait is the input lane.  `grad:` is the grad norm.
    Before, `iter` was taken for a step number and dropped as no whole number."""
    r = one("INFO    24-10-15 12:34:57.289000 - 0:01:24 - step: 11  acc: 0  loss: 10.8412  grad: 1.10e+00  "
            "flops: 1.51e+14  wps: 2.50e+04  iter:  0.4612  data: 0.3021  lr: 3.00e-05  mem: 45%  pow: 400.5 W")
    assert (r["step"], r["loss"], r["grad_norm"], r["lr"], r["tokens_per_s"]) == (11, 10.8412, 1.1, 3e-05, 25000.0)
    assert r["timers_ms"] == {"iter": 461.2, "data": 302.1} and r["lanes_ms"] == {"input": 302.1}
    assert r["step_time_ms"] == 763.3
    # a whole number after the step is no time (nor a second step)
    r = one("step: 12  iter: 12  loss: 2.5")
    assert (r["step"], r.get("step_time_ms"), r.get("timers_ms")) == (12, None, None)


def test_accelerate_epoch_metrics():
    recs, _ = feed_all(["Accelerate launch config loaded from accelerate.yaml",
                        "epoch 2: {'accuracy': 0.85, 'f1': 0.9}"], "accelerate")
    ev = [r for r in recs if r["kind"] == "eval"]
    assert ev[0]["epoch"] == 2 and ev[0]["accuracy"] == 0.85


def test_epoch_results_and_an_epochs_training_numbers():
    """`epoch N: ` and an evaluation's metrics, as a dict or `key: value` pairs, is an evaluation
    of no step; an epoch's training loss, step or rate is none."""
    recs, _ = feed_all(["12/04/2026 10:01:41 - INFO - __main__ - epoch 3: perplexity: 25.31 eval_loss: 3.2311"])
    assert [(r["kind"], r["phase"], r["epoch"], r["loss"], r["perplexity"]) for r in recs] == [
        ("eval", "result", 3, 3.2311, 25.31)]
    recs, _ = feed_all(["epoch 1: {'exact_match': 71.2, 'f1': 80.3}"])
    assert [(r["kind"], r["epoch"], r["exact_match"], r["f1"]) for r in recs] == [("eval", 1, 71.2, 80.3)]
    for line in ("epoch 0: loss: 2.31", "epoch 0: train_loss: 0.5 perplexity: 3.1", "epoch 2: {'loss': 0.4}",
                 "epoch 1 train loss: 0.43", "epoch 4: step 20 acc 0.5", "epoch 0: lr: 0.1 accuracy: 0.5",
                 "epoch 0: starting"):
        recs, _ = feed_all([line])
        assert [r for r in recs if r["kind"] == "eval"] == [], line


def test_scores_that_example_scripts_log_bare():
    """The translation and summarization scripts' dicts and the QA script's `Evaluation metrics:`
    are evaluations of no step; other dicts, and such a dict with a training number, are none."""
    prefix = "12/04/2026 10:01:41 - INFO - __main__ - "
    recs, _ = feed_all([prefix + "{'bleu': 22.4132}", "{'rouge1': 41.2, 'rouge2': 18.9, 'rougeL': 29.1}",
                        prefix + "[RANK 0] Evaluation metrics: {'exact_match': 80.1, 'f1': 88.2}"])
    assert [(r["kind"], r["phase"], r["step"]) for r in recs] == [("eval", "result", None)] * 3
    assert (recs[0]["bleu"], recs[1]["rougeL"], recs[2]["exact_match"]) == (22.4132, 29.1, 80.1)
    for line in ("Predict metrics: {'exact_match': 80.1, 'f1': 88.2}", "{'bleu': 22.4, 'train_loss': 2.1}",
                 "{'rouge1': 41.2, 'epoch': 2}", "config: {'bleu': True}", "args {'rouge1': 'yes'}"):
        recs, _ = feed_all([line])
        assert [r for r in recs if r["kind"] == "eval"] == [], line


def test_a_message_after_a_redraw_that_ends_a_step_on_a_frameworks_stream():
    """A logger that writes to the bar's stream runs on after its redraw: on the Trainer's
    stream, after a redraw that gives a step too, the message is read (it once was only where
    the redraw gave none)."""
    recs, _ = feed_all(["***** Running training *****", "  Total optimization steps = 18",
                        "\r 11%|#         | 2/18 [00:00<00:00, 18.99it/s]\r 22%|##        | 4/18 [00:00<00:00, "
                        "18.99it/s][INFO|trainer.py:3984] 2026-01-01 10:00:00,000 >> Saving model checkpoint to "
                        "/tmp/out/checkpoint-4", "\r 33%|###       | 6/18 [00:00<00:00, 18.99it/s]"])
    assert [(r["kind"], r["step"]) for r in recs if r["kind"] != "eval"] == [
        ("progress", 2), ("checkpoint", 4), ("progress", 4), ("progress", 6)]
    (save,) = [r for r in recs if r["kind"] == "checkpoint"]
    assert (save["action"], save["path"]) == ("save", "/tmp/out/checkpoint-4")


SPREAD = ["{'accuracy': np.float32(0.3212),", " 'learning_rate': np.float32(0.0003),",
          " 'loss': np.float32(3.2101),", " 'step': 100,", " 'tags': ['a long value that pprint',",
          "          'puts on lines of its own'],", " 'train/perplexity': np.float32(24.8)}"]
"""A step's metrics as `pprint.pformat` spreads a dict wider than 80 characters."""


def test_a_dict_that_pprint_spread_over_lines_is_one_record():
    recs, d = feed_all(SPREAD)
    assert [(r["kind"], r["step"], r["loss"], r["lr"]) for r in recs] == [("progress", 100, 3.2101, 0.0003)]
    assert recs[0]["metrics"] == {"accuracy": 0.3212, "train/perplexity": 24.8}
    # each rank's apart, under torchrun's prefixes, their lines interleaved
    lines = [f"[rank{rank}]:{line}" for pair in zip(SPREAD, SPREAD) for rank, line in enumerate(pair)]
    recs, _ = feed_all(lines)
    assert sorted((r["rank"], r["step"]) for r in recs) == [(0, 100), (1, 100)]
    # read the same from a block of bytes, as the log probe reads a pipe
    d = Dispatcher()
    assert [r["step"] for r in d.feed_chunk("\n".join(SPREAD * 3) + "\n") + d.flush()] == [100, 100, 100]


def test_a_spread_dict_cut_short_gives_nothing_and_loses_no_other_line():
    """A line that pprint would not indent ends the dict unread, and is read as any other; a
    dict the stream ends in leaves no state behind."""
    recs, _ = feed_all(SPREAD[:3] + ["step 7 loss 2.5"] + SPREAD[3:])
    assert [(r["step"], r["loss"]) for r in recs] == [(7, 2.5)]
    d = Dispatcher()
    assert d.feed_chunk("\n".join(SPREAD[:4]) + "\n") + d.flush() == []
    assert [r["step"] for r in d.feed_chunk("step 8 loss 2.4\n") + d.flush()] == [8]


def test_dict_keys_named_like_record_slots():
    """A printed dict may hold `step`, `rank`, `kind` or `epoch` keys of its own: the record
    keeps its own slots (these once raised TypeError out of `feed`)."""
    r = one("{'loss': 2.5, 'step': 7, 'rank': 3, 'kind': 1, 'framework': 2}")
    assert (r["kind"], r["framework"], r["rank"], r["step"], r["loss"]) == ("progress", "hf_trainer", None, 7, 2.5)
    r = one("{'eval_loss': 1.5, 'eval_step': 4, 'eval_phase': 2}")
    assert (r["kind"], r["phase"], r["loss"]) == ("eval", "result", 1.5)
    recs, _ = feed_all(["Accelerate launch config loaded from accelerate.yaml",
                        "epoch 2: {'accuracy': 0.85, 'epoch': 1.5, 'phase': 3}"], "accelerate")
    ev = [r for r in recs if r["kind"] == "eval"]
    assert (ev[0]["epoch"], ev[0]["phase"], ev[0]["accuracy"]) == (2, "result", 0.85)


def test_printed_unix_time_is_the_records_time():
    """A `timestamp` that reads as a Unix time (s, ms, us or ns) is the record's own time,
    `log_time_s`, for `ridgescope ingest`; any other number stays a metric."""
    r = one("{'training_steps': 2, 'step_loss': 6.2, 'timestamp': 1593108597.2240496}")
    assert r["log_time_s"] == 1593108597.2240496 and "metrics" not in r
    assert one("step 5 loss 2.0 timestamp=1700000000123")["log_time_s"] == 1700000000.123
    assert one("step 5 loss 2.0 _timestamp=1700000000123456789")["log_time_s"] == approx(1700000000.123456789)
    r = one("{'training_steps': 2, 'step_loss': 6.2, 'timestamp': 12}")
    assert "log_time_s" not in r and r["metrics"] == {"timestamp": 12}
    assert "log_time_s" not in one("step 5 loss 2.0 timestamp=99999999999")     # between s and ms


def test_mxnet_steps_run_on_across_epochs():
    """MXNet prints each epoch's batches from 0: the step adds the batches printed in earlier
    epochs, per node, and keeps rising after a restart that goes back an epoch."""
    line = "Node[{}] Epoch[{}] Batch [{}-{}]\tSpeed: 100.0 samples/sec\taccuracy=0.5"
    shape = [(0, 0, 0, 20), (1, 0, 0, 20), (0, 0, 20, 40), (1, 0, 20, 40), (0, 1, 0, 20),
             (1, 1, 0, 20), (0, 1, 20, 40), (0, 0, 0, 20)]
    recs, _ = feed_all([line.format(*s) for s in shape])
    assert [(r["rank"], r["epoch"], r["iter_in_epoch"], r["step"]) for r in recs] == [
        (0, 0, 20, 20), (1, 0, 20, 20), (0, 0, 40, 40), (1, 0, 40, 40), (0, 1, 20, 60),
        (1, 1, 20, 60), (0, 1, 40, 80), (0, 0, 20, 100)]


MEGATRON_LM = [
    " [2025-08-01 09:31:44] iteration        1/    5000 | consumed samples:          128 | elapsed time "
    "per iteration (ms): 33186.0 | throughput per GPU (TFLOP/s/GPU): 91.0 | learning rate: 6.976744E-08 | "
    "global batch size:   128 | lm loss: 1.045013E+01 | loss scale: 1.0 | grad norm: 35.543 | "
    "number of skipped iterations:   0 | number of nan iterations:   0 |",
    "[Rank 0] (after 1 iterations) memory (MB) | allocated: 20115.05 | max allocated: 20115.08",
    "(min, max) time across ranks (ms):",
    "    forward-backward ...............................: (26094.39, 26095.09)",
    "    batch-generator ................................: (11.86, 27.48)",
    "    all-grads-sync .................................: (8.61, 9.23)",
    "    optimizer ......................................: (3407.56, 3409.92)",
]


def test_megatron_lm_dated_iterations_and_timer_blocks():
    """Megatron-LM today: a dated iteration line, then a block of timers, min and max across
    ranks (`--timing-log-option minmax`, the default) or max only."""
    recs, _ = feed_all(MEGATRON_LM + [
        " [2025-08-01 09:32:10] iteration        2/    5000 | elapsed time per iteration (ms): 25879.2 |",
        "max time across ranks (ms):",
        "    save-checkpoint ................................: 1234.50",
        "Traceback (most recent call last):",
        '  File "pretrain_gpt.py", line 1, in <module>',
        "RuntimeError: boom"])
    assert [(r["kind"], r["step"]) for r in recs] == [
        ("progress", 1), ("timing", 1), ("progress", 2), ("timing", 2), ("checkpoint", 2), ("error", 2)]
    first, timing = recs[0], recs[1]
    assert first["framework"] == "megatron" and first["tflops"] == 91.0 and first["step_time_ms"] == 33186.0
    assert timing["timers_ms"] == {"forward-backward": 26095.09, "batch-generator": 27.48,
                                   "all-grads-sync": 9.23, "optimizer": 3409.92}       # the slowest rank
    assert timing["timers_min_ms"]["batch-generator"] == 11.86
    assert timing["lanes_ms"] == {"compute": approx(26095.09 - 27.48 - 9.23 + 3409.92), "input": 27.48,
                                  "communication": 9.23}
    assert recs[3]["timers_ms"] == {"save-checkpoint": 1234.5} and "timers_min_ms" not in recs[3]
    assert recs[4]["duration_ms"] == 1234.5 and recs[5]["exception"] == "RuntimeError"


def test_megatron_validation_lines():
    recs, _ = feed_all([
        " iteration      100/    1000 | lm loss: 5.0 | elapsed time per iteration (ms): 100.0 |",
        " validation loss at iteration 100 | lm loss value: 3.0 | lm loss PPL: 20.0 |",
        " validation loss at iteration 2500 on 320-sample draw from validation set | lm loss value: "
        "1.360287E+01 | lm loss PPL: 8.084497E+05 |",
        " validation loss at iteration 2500 on test set | lm loss value: 1.3E+01 | lm loss PPL: 8.0E+05 |",
        " validation loss at the end of training for test data | lm loss value: 1.2E+01 | lm loss PPL: 7.0E+05 |"])
    evals = [(r["step"], r["phase"], r["loss"]) for r in recs if r["kind"] == "eval"]
    assert evals == [(100, "validation", 3.0), (2500, "validation", 13.60287), (2500, "test", 13.0),
                     (100, "test", 12.0)]


def test_gpt_neox_iteration_and_validation_lines():
    """GPT-NeoX's lines as its `training_log` formats them: samples/s before the iteration, its
    FLOP/s in a unit of the moment, and `lm_loss` with an underscore."""
    recs, _ = feed_all([
        " samples/sec: 51.234 | iteration       10/      50 | elapsed time per iteration (ms): 9876.5 |"
        " learning rate: 1.234E-04 | approx flops per GPU: 150.3TFLOPS | lm_loss: 7.123456E+00 |"
        " loss scale: 65536.0 | number of skipped iterations:   0 | number of nan iterations:   0 |",
        " samples/sec: 50.100 | iteration       20/      50 | elapsed time per iteration (ms): 10100.2 |"
        " learning rate: 1.500E-04 | approx flops per GPU: 900.5GFLOPS | lm_loss: 6.900000E+00 |",
        " validation results at iteration 20 | lm_loss value: 6.9E+00 | lm_loss_ppl value: 990 |"])
    assert [(r["kind"], r["step"], r["framework"]) for r in recs] == [
        ("progress", 10, "megatron"), ("progress", 20, "megatron"), ("eval", 20, "megatron")]
    ten, twenty, val = recs
    assert (ten["samples_per_s"], ten["step_time_ms"], ten["tflops"], ten["loss"]) == (51.234, 9876.5, 150.3, 7.123456)
    assert (ten["total_steps"], ten["loss_scale"], ten["lr"]) == (50, 65536.0, 1.234e-4)
    assert twenty["tflops"] == approx(0.9005)
    assert (val["phase"], val["loss"], val["ppl"]) == ("validation", 6.9, 990.0)


def test_megatron_timer_block_at_the_end_of_the_log():
    recs, d = feed_all(MEGATRON_LM)
    assert [r["kind"] for r in recs] == ["progress", "timing"] and not d.active.open


def test_a_timer_block_that_never_ends_stays_bounded():
    recs, _ = feed_all(MEGATRON_LM[:3] + [f"    timer-{i} ....: ({i}.0, {i}.5)" for i in range(5000)])
    assert len(recs[1]["timers_ms"]) == 128 and recs[1]["timers_ms"]["timer-127"] == 127.5


def test_nemo2_progress_printer():
    """NeMo 2.0 prints one line a step; its iteration counts from 0 in each epoch, global_step
    runs on (here behind a launcher's own `(task, pid=N)` prefix), and counts the steps before
    this one: the step is global_step + 1, as for NeMo's DLLogger lines."""
    recs, d = feed_all([
        "Training epoch 0, iteration 28/99 | lr: 5.6e-06 | global_batch_size: 32 | global_step: 28 | "
        "reduced_train_loss: 2.778 | train_step_timing in s: 0.189 | consumed_samples: 928 | "
        "val_loss: 2.861 | val_ppl: 17.57",
        "(pretraining, pid=4112) Training epoch 1, iteration 0/999 | lr: 2.999e-06 | global_batch_size: 512 | "
        "global_step: 19 | reduced_train_loss: 11.03 | train_step_timing in s: 46.86 | consumed_samples: 10240"])
    assert d.framework == "nemo"
    a, b = recs
    assert (a["step"], a["epoch"], a["iter_in_epoch"], a["loss"], a["step_time_ms"], a["lr"]) == (
        29, 0, 28, 2.778, 189.0, 5.6e-06)
    assert (a["consumed_samples"], a["global_batch_size"], a["metrics"]) == (
        928, 32, {"val_loss": 2.861, "val_ppl": 17.57})
    assert (b["step"], b["epoch"], b["iter_in_epoch"], b["step_time_ms"]) == (20, 1, 0, 46860.0)


def test_jax_metric_writer_lines():
    """CLU's LoggingWriter (Flax examples, T5X) logs `[step] key=value, ...` behind absl's prefix."""
    recs, d = feed_all([
        "I0919 14:15:27.775955 140151934879488 logging_writer.py:35] [100] steps_per_second=2.183623, "
        "train_accuracy=0.0013867187080904841, train_learning_rate=0.003165467409417033, train_loss=6.95107364654541",
        "I0709 15:35:52.025554 12803141632 logging_writer.py:48] [200] collection=train loss=3.25 "
        "timing/steps_per_second=8.1 timing/target_tokens_per_second=123456.7",
        "I0107 08:31:32.321915 140570526500608 logging_writer.py:35] [2000] eval_loss=1.5, eval_accuracy=0.61"])
    assert d.framework is None
    a, b, c = recs
    assert (a["kind"], a["step"], a["it_per_s"], a["lr"], a["loss"]) == (
        "progress", 100, 2.183623, 0.003165467409417033, 6.95107364654541)
    assert a["metrics"] == {"train_accuracy": 0.0013867187080904841}
    assert (b["step"], b["loss"], b["it_per_s"], b["tokens_per_s"]) == (200, 3.25, 8.1, 123456.7)
    assert (c["kind"], c["step"], c["metrics"]) == ("eval", 2000, {"eval_loss": 1.5, "eval_accuracy": 0.61})


def test_maxtext_step_lines():
    """MaxText (JAX) prints a step line with its time in seconds and per-device rates."""
    recs, d = feed_all([
        "completed step: 0, seconds: 44.923, TFLOP/s/device: 17.022, Tokens/s/device: 1094.129, "
        "total_weights: 196608, loss: 12.038",
        "completed step: 5, seconds: 20.585, tflop/s/device: 97.566, tokens/s/device: 1989.820, "
        "total_weights: 31457280, loss: 12.409, lr: 3.000e-04, grad_norm: 1.234e+01"])
    assert d.framework == "maxtext"
    a, b = recs
    assert (a["step"], a["step_time_ms"], a["tflops"], a["tokens_per_s_per_gpu"], a["loss"]) == (
        0, 44923.0, 17.022, 1094.129, 12.038)
    assert a["metrics"] == {"total_weights": 196608}
    assert (b["step"], b["step_time_ms"], b["tflops"], b["lr"], b["grad_norm"]) == (5, 20585.0, 97.566, 3e-4, 12.34)


def test_errors_and_traceback_single_event():
    recs, _ = feed_all([
        "Traceback (most recent call last):",
        '  File "train.py", line 10, in <module>',
        "    main()",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 80 GiB",
        "[rank2]:[E ProcessGroupNCCL.cpp:1] [Rank 2] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=10, NumelOut=10, Timeout(ms)=600000) ran for 600010 milliseconds"
        " before timing out.",
    ])
    assert [r["error"] for r in recs] == ["cuda_oom", "nccl_timeout"]
    assert recs[0]["traceback"] is True and recs[0]["frames"] == 1
    assert recs[1]["rank"] == 2 and recs[1]["op"] == "ALLREDUCE"


def test_device_memory_exhausted_under_xla_and_tensorflow():
    """JAX (XLA) and TensorFlow raise RESOURCE_EXHAUSTED where the device's memory runs out, in
    a traceback or on a line of its own: one `device_oom` each, with the bytes XLA tried to
    allocate; an NCCL error that ends a traceback is an `nccl_error`, a CUDA error a `cuda_error`."""
    def tb(last):
        return ["Traceback (most recent call last):", '  File "train.py", line 10, in <module>', "    step()", last]
    recs, _ = feed_all(
        tb("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
           "17179869184 bytes.")
        + tb("tensorflow.python.framework.errors_impl.ResourceExhaustedError:  OOM when allocating tensor with "
             "shape[256,64,112,112] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc")
        + tb("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of "
             "memory in memory space hbm. Used 17.5G of 15.48G hbm.")
        + ["jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1073741824 bytes."]
        + [f"[rank2]: {line}" for line in tb(
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
            "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5")]
        + tb("RuntimeError: CUDA error: uncorrectable ECC error encountered")
        + tb("RuntimeError: RESOURCE_EXHAUSTED is a name in this message, and no memory ran out"))
    assert [(r["error"], r.get("traceback"), r.get("tried_gb"), r["rank"]) for r in recs] == [
        ("device_oom", True, 16.0, None), ("device_oom", True, None, None), ("device_oom", True, None, None),
        ("device_oom", None, 1.0, None), ("nccl_error", True, None, 2), ("cuda_error", True, None, None),
        ("traceback", True, None, None)]


@pytest.mark.parametrize("line, signal, extra", [
    ("train.sh: line 12:  4242 Segmentation fault      (core dumped) python train.py", "SIGSEGV", {}),
    ("Fatal Python error: Segmentation fault", "SIGSEGV", {}),
    ("Fatal Python error: Aborted", None, {}),
    ("Bus error (core dumped)", "SIGBUS", {}),
    ("Aborted (core dumped)", "SIGABRT", {}),
    ("[rank1]:terminate called after throwing an instance of 'c10::DistBackendError'", "SIGABRT",
     {"exception": "c10::DistBackendError", "rank": 1})])
def test_a_process_that_died_of_a_signal(line, signal, extra):
    """The shell's, faulthandler's and libstdc++'s words for a crash that leaves no Python
    traceback: one `crash` event each.  torch's elastic agent says it with the exit code."""
    r = one(line)
    assert (r["kind"], r["error"], r.get("signal")) == ("error", "crash", signal)
    assert {k: r[k] for k in extra} == extra
    r = one("E1201 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -11) local_rank: 0 "
            "(pid: 4242) of binary: /usr/bin/python")
    assert (r["error"], r["exitcode"], r["signal"]) == ("child_failed", -11, "SIGSEGV")


def test_an_abort_says_what_was_thrown():
    """libstdc++ prints what the exception said on the line after `terminate called`: the crash
    carries it, and a watchdog's timeout that it names is still that timeout's event (once)."""
    recs, _ = feed_all([
        "[rank5]:terminate called after throwing an instance of 'c10::Error'",
        "[rank5]:  what():  CUDA error: an illegal memory access was encountered",
        "[rank3]:terminate called after throwing an instance of 'c10::DistBackendError'",
        "[rank3]:  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with "
        "exception: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, "
        "NumelIn=4, NumelOut=4, Timeout(ms)=600000) ran for 600004 milliseconds before timing out.",
        "[rank1]:terminate called after throwing an instance of 'std::runtime_error'",
        "[rank2]:step 5 loss 2.0",
        "[rank1]:step 5 loss 2.0"])
    assert [(r["error"], r["rank"], r.get("what", "")[:30]) for r in recs if r["kind"] == "error"] == [
        ("crash", 5, "CUDA error: an illegal memory "), ("crash", 3, "[PG ID 0 PG GUID 0(default_pg)"),
        ("nccl_timeout", 3, ""), ("crash", 1, "")]
    assert [(r["kind"], r["rank"]) for r in recs][-3:] == [("progress", 2), ("error", 1), ("progress", 1)]
    recs, _ = feed_all(["terminate called after throwing an instance of 'c10::Error'"])     # the log's last line
    assert [(r["error"], r["exception"]) for r in recs] == [("crash", "c10::Error")]
    recs, _ = feed_all(["Traceback (most recent call last):", '  File "a.py", line 1, in <module>',
                        "terminate called after throwing an instance of 'c10::Error'", "RuntimeError: boom"])
    assert [(r["error"], r["exception"]) for r in recs] == [("crash", "c10::Error"), ("traceback", "RuntimeError")]


@pytest.mark.parametrize("line, fields", [
    ("slurmstepd: error: Detected 1 oom_kill event in StepId=12345.0. Some of the step tasks have been OOM Killed.",
     {"error": "host_oom", "kills": 1, "slurm_step": "12345.0"}),
    ("slurmstepd: error: Detected 3 oom-kill event(s) in step 12345.batch cgroup.",
     {"error": "host_oom", "kills": 3, "slurm_step": "12345.batch"}),
    ("slurmstepd: error: *** JOB 12345 ON gpu-node-7 CANCELLED AT 2026-01-10T10:00:01 DUE TO NODE FAILURE ***",
     {"error": "cancelled", "slurm_step": "12345", "host": "gpu-node-7", "reason": "node failure"}),
    ("srun: error: gpu-node-13: tasks 4-6,9: Killed", {"error": "child_failed", "tasks": [4, 5, 6, 9]}),
    ("mpirun noticed that process rank 5 with PID 4242 on node gpu-node-14 exited on signal 6 (Aborted).",
     {"error": "child_failed", "signal": "SIGABRT", "pid": 4242}),
])
def test_the_schedulers_and_launchers_words_for_a_failure(line, fields):
    """Slurm's out-of-memory kills (of the host's memory, in its cgroup) and its cancels, srun's
    ranges of tasks, mpirun's signals: each line one error, of the job where no rank is named."""
    recs, _ = feed_all(["3: " + line if line.startswith("slurmstepd") else line])
    assert len(recs) == 1 and {k: recs[0].get(k) for k in fields} == fields
    assert recs[0]["rank"] == (5 if line.startswith("mpirun") else None)


def test_an_mpirun_report_without_its_exit_code_gives_nothing():
    """A report cut off before its exit code gives no record, and the lines after it are read."""
    recs, _ = feed_all(["mpirun detected that one or more processes exited with non-zero status, thus causing",
                        "the job to be terminated. The first process to do so was:", "",
                        "  Process name: [[24292,1],1]"] + ["-" * 20] * 5 + ["step 3/9 loss 2.0 step_time_ms 5.0"])
    assert [(r["kind"], r["step"]) for r in recs] == [("progress", 3)]
    # a report's first line while a traceback is open leaves the traceback to close
    recs, _ = feed_all(["Traceback (most recent call last):",
                        "mpirun detected that one or more processes exited with non-zero status, thus causing",
                        '  File "train.py", line 9, in <module>', "RuntimeError: boom"])
    assert [(r["error"], r.get("exception")) for r in recs] == [("traceback", "RuntimeError")]


def test_slurms_and_nccls_own_messages_go_to_no_frameworks_parser(monkeypatch):
    """`slurmstepd: task_p_pre_launch: ..` (one a task as a job starts: `tep` made it a keyword
    line), srun's notices and NCCL's bare version (one a rank) are no training's progress: the
    parsers are not asked, the events parser still reads Slurm's cancel."""
    from ridgescope.parsers.generic import GenericParser
    asked = []
    parse = GenericParser.parse
    monkeypatch.setattr(GenericParser, "parse", lambda self, line, *a, **k: asked.append(line) or parse(self, line, *a, **k))
    start = [f"{t}: slurmstepd: task_p_pre_launch: Using sched_affinity for tasks" for t in range(8)]
    recs, _ = feed_all(start + ["slurmstepd-gpu-node-7: pyxis: starting container ...",
                                "srun: Job step aborted: Waiting up to 62 seconds for job step to finish.",
                                "NCCL version 2.26.6+cuda12.8",
                                "slurmstepd: error: *** STEP 12345.0 ON gpu-node-7 CANCELLED AT 2026-01-10T10:00:01 ***",
                                "step 1 loss 2.5"])
    assert [(r["kind"], r.get("error")) for r in recs] == [("error", "cancelled"), ("progress", None)]
    assert asked == ["step 1 loss 2.5"]


@pytest.mark.parametrize("line", ["srun: Job step aborted: Waiting up to 62 seconds for job step to finish.",
                                  "Aborted!", "checking for segmentation faults in the kernel",
                                  "  traceback : Signal 15 (SIGTERM) received by PID 14145"])  # the agent's kill
def test_words_of_a_crash_in_other_lines_are_none(line):
    recs, _ = feed_all([line])
    assert recs == []


def test_resume_and_elastic_restart():
    recs, _ = feed_all(["Resuming training from iteration 1500",
                        "[default] Worker group FAILED. 2/3 attempts left; will restart worker group"])
    assert [(r["kind"], r["step"]) for r in recs] == [("restart", 1500), ("restart", None)]
    assert recs[1]["attempts_left"] == 2
    recs, _ = feed_all(["  Continuing training from epoch 3", "Resuming training from checkpoint with epoch 1 "
                        "and global step 8"])
    assert [(r["step"], r["epoch"]) for r in recs] == [(None, 3), (8, 1)]


def test_nccl_coll_line():
    r = one("node1:100:200 [3] NCCL INFO ReduceScatter: opCount 1f sendbuff 0x7f00 recvbuff 0x7f10 count 1024 "
            "datatype 9 op 0 root 0 comm 0x5500 [nranks=8] stream 0x6600", rank=3)
    assert (r["op"], r["opCount"], r["count"], r["datatype"], r["nranks"], r["rank"], r["device"]) == \
        ("ReduceScatter", 31, 1024, "bfloat16", 8, 3, 3)


def test_garbage_counted_and_skipped():
    d = Dispatcher()
    assert d.feed(b"\xff\xfe\x00binary") == []
    assert d.feed("\x00\x01\x02 noise step 1 loss 2") == []
    assert d.feed("x" * 2_000_000) == []
    assert d.feed("step 3/10 loss 1.0 " + "9" * 1_000_000)  is not None
    assert d.stats["garbage"] == 2 and d.stats["truncated"] == 2 and d.stats["lines"] == 4


def test_ansi_codes_stripped():
    r = one("\x1b[31mstep:  1  \x1b[32mloss: 12.57298  \x1b[34mtps: 462  \x1b[36mtflops: 38.94  \x1b[35mmfu: N/A\x1b[39m")
    assert (r["step"], r["loss"], r["tokens_per_s_per_gpu"]) == (1, 12.57298, 462)


def test_format_switch_and_forced():
    recs, d = feed_all([
        " iteration        1/     100 | elapsed time per iteration (ms): 10.0 | lm loss: 1.0E+00 |",
        "step: 2  loss: 2.0  tps: 10",
    ])
    assert [r["framework"] for r in recs] == ["megatron", "torchtitan"]
    assert d.stats["switches"] == 2
    recs, _ = feed_all(["step: 2  loss: 2.0  tps: 10"], log_format="megatron")
    assert all(r["framework"] != "torchtitan" for r in recs)
    with pytest.raises(ValueError):
        Dispatcher("nope")


def test_interleaved_ranks_keep_their_own_state():
    recs, _ = feed_all([
        "[rank0]:step:1/10 train_time:100ms step_avg:100ms",
        "[rank1]:step:1/10 train_time:110ms step_avg:110ms",
        "[rank1]:step:2/10 train_time:300ms step_avg:150ms",
        "[rank0]:step:2/10 train_time:160ms step_avg:80ms",
    ])
    st = {(r["rank"], r["step"]): r.get("step_time_ms") for r in recs}
    assert st[(1, 2)] == 190.0 and st[(0, 2)] == 60.0


def test_records_are_msgpack_serialisable():
    import msgpack
    recs, _ = feed_all(["step 1/2 loss 1.0 step_time_ms 3", "{'loss': 1.0}",
                        "node:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 100 - Init COMPLETE"])
    for r in recs:
        assert msgpack.unpackb(msgpack.packb(r)) == r


def test_ultralytics_validation_names():
    from ridgescope.parsers.loopbars import validation_names
    box = ["images", "instances", "box/P", "box/R", "box/mAP50", "box/mAP50-95"]
    assert validation_names("Class     Images  Instances      Box(P          R      mAP50  mAP50-95)     "
                            "Mask(P          R      mAP50  mAP50-95)") == (
        box + ["mask/P", "mask/R", "mask/mAP50", "mask/mAP50-95"], True)
    assert validation_names("classes   top1_acc   top5_acc") == (["top1_acc", "top5_acc"], True)
    # cut to fit a terminal: the names before the cut, and the rest of the open group
    assert validation_names("Class     Images  Instances      Box(P          R      mAP50  mA\u2026") == (box, False)
    assert validation_names("Class     Images  Instances      Box(P          R      mAP50  mAP50-95)     "
                            "Mask(P   \u2026") == (box + ["mask/P", "mask/R", "mask/mAP50", "mask/mAP50-95"], False)
    assert validation_names("Class     Images  Insta\u2026") == (["images"], False)
    assert validation_names("Class  \u2026") is None
    assert validation_names("Training") is None


def test_ultralytics_cut_label_reads_the_named_results_only():
    """A segmentation run on a narrow terminal: the label is cut inside the mask group, so the
    row's mask results have no names; the box results are still read, the row still an eval."""
    bar = "        1/1         0G      1.234      2.345      3.456          4        128: 100% \u2501\u2501\u2501 2/2 1.2it/s 1.6s"
    val = ("\r\x1b[K                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95)"
           "     Ma\u2026\x1b[0m: 100% \u2501\u2501\u2501 1/1 5.0it/s 0.2s")
    recs, _ = feed_all(["      Epoch    GPU_mem   box_loss   seg_loss   cls_loss  Instances       Size", bar, val,
                        "                   all          4          5      0.125       0.25        0.5      0.375"
                        "        0.1        0.2        0.3        0.4"])
    evals = [r for r in recs if r["kind"] == "eval"]
    assert [(r["step"], r["metrics"]) for r in evals] == [(2, {
        "images": 4, "instances": 5, "box/P": 0.125, "box/R": 0.25, "box/mAP50": 0.5, "box/mAP50-95": 0.375})]


@pytest.mark.parametrize("line, step", [
    ("Resuming training from out/pretrain/step-00000008/lit_model.pth", 8),   # LitGPT
    ("Resuming from step_120", 120),
])
def test_a_resume_from_a_checkpoint_named_for_its_step(line, step):
    (r,) = [r for r in feed_all([line])[0] if r["kind"] == "restart"]
    assert r["step"] == step


@pytest.mark.parametrize("report, slowest_input, gpu", [
    # Megatron-LM's docs (`megatron/core/README_STRAGGLER.md`), 32 H100s under `srun --label`
    ("0: INFO:megatron.core.utils:[2024-03-14 23:07:56] | MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: 3468.20ms/0 | "
     "MnPwr/Rnk: 601796W/8 | MxPwr/Rnk: 683801W/18 | MnTmp/Rnk: 52C/0 | MxTmp/Rnk: 65C/21 | MnUtl/Rnk: 97%/8 | "
     "MxUtl/Rnk: 100%/6 | MnClk/Rnk: 1950MHz/28 | MxClk/Rnk: 1980MHz/0 | MnDRtt/Rnk: 14.27ms/23 | "
     "MxDRtt/Rnk: 34.65ms/3 | MnEtpt/Rnk: 296.02TF/0 | MxEtpt/Rnk: 297.32TF/8", 3,
     {"power_mw": {"min": 601796.0, "min_rank": 8, "max": 683801.0, "max_rank": 18},
      "temp_c": {"min": 52.0, "min_rank": 0, "max": 65.0, "max_rank": 21},
      "util_pct": {"min": 97.0, "min_rank": 8, "max": 100.0, "max_rank": 6},
      "clock_mhz": {"min": 1950.0, "min_rank": 28, "max": 1980.0, "max_rank": 0},
      "tflops": {"min": 296.02, "min_rank": 0, "max": 297.32, "max_rank": 8}}),
    # a CPU run's: no counter of NVML's measured; the estimated throughput is Megatron's own
    ("INFO:megatron.core.utils:[2026-11-30 22:36:31] | MnRtt/Rnk: 3.40ms/1 | MxRtt/Rnk: 3.94ms/0 | MnPwr/Rnk: "
     "0.00W/0 | MxPwr/Rnk: 0.00W/0 | MnTmp/Rnk: 0.00C/0 | MxTmp/Rnk: 0.00C/0 | MnUtl/Rnk: 0.00%/0 | MxUtl/Rnk: "
     "0.00%/0 | MnClk/Rnk: 0.00MHz/0 | MxClk/Rnk: 0.00MHz/0 | MnDRtt/Rnk: 0.80ms/1 | MxDRtt/Rnk: 4.01ms/0 | "
     "MnEtpt/Rnk: 0.01TF/0 | MxEtpt/Rnk: 0.01TF/1", 0, {"tflops": {"min": 0.01, "min_rank": 0, "max": 0.01,
                                                             "max_rank": 1}}),
])
def test_megatron_straggler_report_gives_each_gpu_counters_extremes_and_their_ranks(report, slowest_input, gpu):
    """A rank held back by its clock or its heat shows in the report printed with its step."""
    iteration = (" [2024-03-14 23:07:56] iteration       10/     100 | consumed samples:          640 | "
                 "elapsed time per iteration (ms): 3468.2 | learning rate: 1.0E-04 | lm loss: 6.5E+00 |")
    recs, _ = feed_all([iteration, report])
    (timing,) = [r for r in recs if r["kind"] == "timing"]
    assert timing["step"] == 10 and timing["slowest_ranks"]["input"]["rank"] == slowest_input
    assert timing.get("gpu_extremes") == gpu


def test_a_framework_that_yields_to_the_active_one_does_not_take_its_stream():
    """Megatron-DeepSpeed: DeepSpeed's engine lines come between Megatron's iterations, and
    their records yield to Megatron's.  The stream stays Megatron's (it once switched twice at
    every step), with the same records: Megatron's, and DeepSpeed's from before Megatron's first
    line."""
    corpus = "tests/data/corpus/megatron/megatron-deepspeed_gpt3-125M_tokendrop_8gpu_timers_nccl-info.log"
    lines = (Path(__file__).resolve().parents[2] / corpus).read_text().splitlines()[2717:2725]
    recs, d = feed_all(lines)
    assert d.stats["switches"] == 2 and d.framework == "megatron"
    assert [(r["framework"], r["kind"], r["step"]) for r in recs] == [
        ("deepspeed", "progress", 10), ("deepspeed", "progress", 10), ("megatron", "progress", 10),
        ("megatron", "timing", 10), ("megatron", "progress", 20)]


def test_ray_trains_report_of_a_metrics_dict_does_not_take_the_loops_stream():
    """Ray Train 2.60's `Reporting training result N: TrainingReport(..., metrics={'loss': ..})`
    holds a dict like the HF Trainer's, as an argument: the loop's own lines keep the stream
    (it once switched to the Trainer's parser and back at every step, 44 times in a capture)."""
    run = (Path(__file__).resolve().parents[1] / "data" / "captured" /
           "ray-2.60.0_torchtrainer_2cpu-workers_train-v2_dedup-off.log").read_bytes()
    d = Dispatcher()
    recs = d.feed_chunk(run) + d.flush()
    # (the second switch: the driver's last line, `result.metrics: {'loss': 0.508, 'step': 12}`)
    assert d.stats["switches"] == 2 and {r["framework"] for r in recs if r["kind"] == "progress"} == {"nanogpt"}
    assert sorted((r["rank"], r["step"]) for r in recs if r["kind"] == "progress") == [
        (rank, step) for rank in (0, 1) for step in range(1, 13)]


@pytest.mark.parametrize("line, counts", [
    ("Epoch(train) [2][ 3/8]  lr: 1.0e-02  epoch: 5  loss: 1.5", ("mmengine", 11, 2, 3, 1.5)),
    ("[02/04 22:46:24] ppdet.engine.callbacks INFO: Epoch: [0] [2087/7312] learning_rate: 0.000029 loss: 4.5 "
     "iteration 8 epoch 5 eta: 0:10:00 batch_cost: 0.1664 data_cost: 0.0034 ips: 96.1758 images/s",
     ("generic", 2088, 0, 2087, 4.5)),
])
def test_a_line_whose_text_also_names_its_counts_keeps_its_bracketed_counts(line, counts):
    """`Epoch(train) [2][ 3/8]` and `Epoch: [0] [2087/7312]` are the record's epoch and
    iteration, whatever the rest of the line names (a key `epoch` or `iteration` there once
    made the parser raise, and the line was lost; found by the fuzz tests run longer)."""
    r = one(line)
    assert (r["framework"], r["step"], r["epoch"], r["iter_in_epoch"], r["loss"]) == counts


NEMO_RESUMED = "Restored all states from the checkpoint at /ckpt/tiny_gpt--reduced_train_loss=4.8702-epoch=1-last/weights"
NEMO_STEP = ("Training epoch 1, iteration {0}/29 | lr: 0.0001 | consumed_samples: 50 | global_batch_size: 2 |"
             " global_step: {0} | reduced_train_loss: 4.713 | train_step_timing in s: 0.02128")


@pytest.mark.parametrize("first, restart", [(24, 24), (7, 7), (0, None)])
def test_a_lightning_resume_that_names_no_step_restarts_before_its_first_step(first, restart):
    """NeMo names its checkpoints by their samples: its resume is at the step before the first
    one it draws, given right before that step; a run whose first step is 1 starts anew."""
    recs = [r for r in feed_all([
        "[NeMo I 2026-12-01 01:25:54 nemo_logger:139] resume_if_exists is set",
        "Restoring states from the checkpoint path at /ckpt/last/weights", NEMO_RESUMED,
        NEMO_STEP.format(first), NEMO_STEP.format(first + 1)])[0] if r["kind"] != "checkpoint"]
    assert [(r["kind"], r["step"]) for r in recs] == [("restart", restart)] * (restart is not None) + [
        ("progress", first + 1), ("progress", first + 2)]


def test_a_resume_that_names_its_step_is_not_given_twice():
    """A resume that prints its step after Lightning's message restarts there, once."""
    recs, _ = feed_all(["[NeMo I 2026-12-01 01:25:54 x:1] start", NEMO_RESUMED,
                        "Resuming training from iteration 24", NEMO_STEP.format(24)])
    assert [(r["kind"], r["step"]) for r in recs if r["kind"] != "checkpoint"] == [("restart", 24), ("progress", 25)]


def test_paddledetection_line_variants():
    """A long run's eta in days, and PaddleX's memory after the rate (`max_mem_allocated` MB is
    the record's memory)."""
    recs, _ = feed_all([
        "[02/04 22:46:24] ppdet.engine.callbacks INFO: Epoch: [0] [2087/7312] learning_rate: 0.000029 loss: 4.504654"
        " loss_cls: 1.374781 eta: 67 days, 10:28:48 batch_cost: 0.1664 data_cost: 0.0034 ips: 96.1758 images/s,"
        " max_mem_reserved: 42653 MB, max_mem_allocated: 31490 MB",
        "[07/21 14:40:44] ppdet.engine INFO: Epoch: [3] [  0/200] learning_rate: 0.000000 loss: 5331.523438"
        " eta: 1 day, 22:18:02 batch_cost: 18.5622 data_cost: 17.9648 ips: 1.7239 images/s"])
    assert [(r["step"], r["step_time_ms"], r["lanes_ms"]["input"]) for r in recs] == [
        (2088, 166.4, 3.4), (601, 18562.2, 17964.8)]
    assert recs[0]["mem_gb"] == approx(31490 / 1024) and recs[0]["metrics"] == {
        "loss_cls": 1.374781, "max_mem_reserved": 42653}
    assert "eta" not in recs[1].get("metrics", {})


def test_coco_summary_is_one_result():
    """pycocotools' table: one eval result at its last row, named as papers name the rows; a
    keypoints table has 10 rows, a table with no type line before it no prefix."""
    rows = [(" Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets= 20 ] = 0.651", "AP"),
            (" Average Precision  (AP) @[ IoU=0.50      | area=   all | maxDets= 20 ] = 0.862", "AP50"),
            (" Average Precision  (AP) @[ IoU=0.75      | area=   all | maxDets= 20 ] = 0.713", "AP75"),
            (" Average Precision  (AP) @[ IoU=0.50:0.95 | area=medium | maxDets= 20 ] = 0.611", "APm"),
            (" Average Precision  (AP) @[ IoU=0.50:0.95 | area= large | maxDets= 20 ] = 0.724", "APl"),
            (" Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets= 20 ] = 0.702", "AR20"),
            (" Average Recall     (AR) @[ IoU=0.50      | area=   all | maxDets= 20 ] = 0.891", "AR50"),
            (" Average Recall     (AR) @[ IoU=0.75      | area=   all | maxDets= 20 ] = 0.760", "AR75"),
            (" Average Recall     (AR) @[ IoU=0.50:0.95 | area=medium | maxDets= 20 ] = 0.659", "ARm"),
            (" Average Recall     (AR) @[ IoU=0.50:0.95 | area= large | maxDets= 20 ] = 0.767", "ARl")]
    lines = ["Epoch: [0]  [9/10]  eta: 0:00:00  loss: 1.0 (1.0)  time: 0.1  data: 0.01",
             "Evaluate annotation type *keypoints*", "DONE (t=0.05s)."] + [line for line, _ in rows]
    recs, _ = feed_all(lines + [line for line, _ in rows])
    evals = [r for r in recs if r["kind"] == "eval"]
    assert [(r["step"], r["phase"]) for r in evals] == [(10, "result"), (10, "result")]
    assert evals[0]["metrics"] == {f"keypoints/{name}": num for (line, name), num in
                                   zip(rows, (0.651, 0.862, 0.713, 0.611, 0.724, 0.702, 0.891, 0.76, 0.659, 0.767))}
    assert set(evals[1]["metrics"]) == {name for _, name in rows}      # the second table: no type line


def test_detectron2_evaluation_is_at_the_iteration_its_writer_prints_next():
    """Detectron2 evaluates in an iteration's hooks, before its writer prints that iteration: with
    a line every 20 iterations (`iter: 4979`, `4999`), the table printed after 4979 is at 4999;
    the last evaluation, after `Total training time`, is at the last iteration."""
    def d2(it):
        return (f"[11/30 20:12:12 d2.utils.events]:  eta: 0:01:00  iter: {it}  total_loss: 1.5  time: 0.4000  "
                "data_time: 0.0030  lr: 0.01  ")
    table = ["[11/30 20:12:09 d2.evaluation.fast_eval_api]: Evaluate annotation type *bbox*"] + [
        f" Average {kind} @[ IoU={iou} | area={area} | maxDets={dets:>3} ] = 0.107"
        for kind, iou, area, dets in (
            ("Precision  (AP)", "0.50:0.95", "   all", 100), ("Precision  (AP)", "0.50     ", "   all", 100),
            ("Precision  (AP)", "0.75     ", "   all", 100), ("Precision  (AP)", "0.50:0.95", " small", 100),
            ("Precision  (AP)", "0.50:0.95", "medium", 100), ("Precision  (AP)", "0.50:0.95", " large", 100),
            ("Recall     (AR)", "0.50:0.95", "   all", 1), ("Recall     (AR)", "0.50:0.95", "   all", 10),
            ("Recall     (AR)", "0.50:0.95", "   all", 100), ("Recall     (AR)", "0.50:0.95", " small", 100),
            ("Recall     (AR)", "0.50:0.95", "medium", 100), ("Recall     (AR)", "0.50:0.95", " large", 100))]
    recs, _ = feed_all([d2(4959), d2(4979)] + table + [d2(4999), d2(5019)] +
                       ["[11/30 20:12:16 d2.engine.hooks]: Total training time: 0:00:14 (0:00:02 on hooks)"] + table)
    assert [(r["step"], r["metrics"]["bbox/AP"]) for r in recs if r["kind"] == "eval"] == [
        (4999, 0.107), (5019, 0.107)]
    recs, _ = feed_all([d2(19)] + table)      # one line: no period known yet
    assert [r["step"] for r in recs if r["kind"] == "eval"] == [19]


@pytest.mark.parametrize("line, kind", [
    ("[11/30 19:38:56] ppdet.utils.checkpoint INFO: Save checkpoint: /out/ppyoloe", "checkpoint"),
    ("save checkpoint every 1000 steps", None),                   # a setting, not a message
    ("Namespace(data_path='/data', resume='', start_epoch=0, epochs=90)", None),
    ("{'resume': False, 'epoch': 3}", None),
    ("resume: true  epoch: 4", None),
    ("Resuming: loading from iteration 5", "restart"),
    ("Resuming training from out", "restart"),                   # nanoGPT: a path, no step
    ("Resuming training from scratch", None),
    ("Resuming training from checkpoint if it exists", None),
    ("resume_from_checkpoint=None,", None),                     # the Trainer's arguments, no resume
    ("resume_from_checkpoint=/out/v0-20261201/checkpoint-8,", "restart"),
    ("run sh: `python sft.py --model /m --resume_from_checkpoint /out/checkpoint-8 --max_steps 20`", None),
])
def test_settings_are_no_events(line, kind):
    recs, _ = feed_all([line])
    assert [r["kind"] for r in recs] == ([kind] if kind else [])


def test_ms_swift_megatron_dicts_name_their_iteration():
    """ms-swift's Megatron trainer names its step `'iteration': '5/20'`; its run-mean step time
    gives the steps' own, once two dicts show that the run began at step 0."""
    recs, _ = feed_all([
        "{'loss': 2.1, 'grad_norm': 1.5, 'learning_rate': 0.0001, 'iteration': '1/20', "
        "'elapsed_time': '1s', 'remaining_time': '19s', 'memory(GiB)': 12.5, 'train_speed(s/it)': 1.012345}",
        "{'loss': 2.0, 'grad_norm': 1.4, 'learning_rate': 0.0001, 'iteration': '2/20', "
        "'elapsed_time': '2s', 'remaining_time': '18s', 'memory(GiB)': 12.5, 'train_speed(s/it)': 1.256789}"])
    assert [(r["step"], r["total_steps"], r.get("step_time_ms"), r["mem_gb"]) for r in recs] == [
        (1, 20, None, 12.5), (2, 20, 1501.233, 12.5)]


def test_ms_swift_means_count_from_the_step_its_arguments_say_it_resumed_at():
    """Resumed at 8, logging every 2: the first dict's mean is of steps 9-10, the next one's
    gives 11-12; without the arguments' line the count is not known, and no time is given."""
    dicts = ["{'loss': 2.1, 'learning_rate': 0.0001, 'global_step/max_steps': '10/20', "
             "'train_speed(s/it)': 0.5123}",
             "{'loss': 2.0, 'learning_rate': 0.0001, 'global_step/max_steps': '12/20', "
             "'train_speed(s/it)': 0.7456}"]
    recs, _ = feed_all(["resume_from_checkpoint=/out/v0/checkpoint-8,"] + dicts)
    assert [(r["kind"], r["step"], r.get("step_time_ms")) for r in recs] == [
        ("restart", 8, None), ("progress", 10, None), ("progress", 12, 978.9)]   # (4*0.7456-2*0.5123)/2
    recs, _ = feed_all(dicts)
    assert [r.get("step_time_ms") for r in recs] == [None, None]

def test_detectron2_times_from_its_mean_once_it_says_where_it_started():
    """A run resumed at iteration 100, printing every 20: its first line's mean is that of the
    iterations timed so far (from 102 on), the next line's gives the 20 between; a log with no
    `Starting training` line gives no time (the mean's count is not known)."""
    head = "[11/30 20:12:01 d2.engine.train_loop]: Starting training from iteration 100"
    lines = ["[11/30 20:12:12 d2.utils.events]:  eta: 0:01:00  iter: 119  total_loss: 1.5  time: 0.4000  "
             "data_time: 0.0030  lr: 0.01  ",
             "[11/30 20:12:20 d2.utils.events]:  eta: 0:00:50  iter: 139  total_loss: 1.4  time: 0.4500  "
             "data_time: 0.0030  lr: 0.01  "]
    recs, _ = feed_all([head] + lines)
    assert [(r["step"], r["step_time_ms"]) for r in recs] == [(119, 400.0), (139, 495.0)]   # (38*450-18*400)/20
    recs, _ = feed_all(lines)
    assert [r.get("step_time_ms") for r in recs] == [None, None]


def test_detectron2_run_from_its_start_needs_no_starting_line():
    """A log cut before `Starting training`, whose first line is at the end of the first writer
    period (iteration 19 of 20): the run began at 0, so the second line's mean gives the time of
    the 20 iterations between.  A first line elsewhere leaves the count unknown: no time."""
    def line(i, mean):
        return (f"[11/30 20:12:12 d2.utils.events]:  eta: 0:01:00  iter: {i}  total_loss: 1.5  "
                f"time: {mean:.4f}  data_time: 0.0030  lr: 0.01  ")
    recs, _ = feed_all([line(19, 0.4), line(39, 0.45), line(59, 0.45)])
    assert [(r["step"], r.get("step_time_ms")) for r in recs] == [
        (19, None), (39, 495.0), (59, 450.0)]       # (38*450-18*400)/20
    recs, _ = feed_all([line(19, 0.4), line(59, 0.45), line(99, 0.45)])     # 19 is no period's end here
    assert [r.get("step_time_ms") for r in recs] == [None, None, None]


def test_tensorflow_logging_tensor_hook_needs_its_prefix_or_its_seconds():
    """`loss = .., step = N (T sec)` is tf.estimator's, and so is such a line behind
    `INFO:tensorflow:`; a loop of one's own printing `key = value` pairs stays generic."""
    own, _ = feed_all(["epoch = 1, step = 100, loss = 0.5", "epoch = 1, step = 200, loss = 0.4"])
    assert [(r["framework"], r["step"], r["loss"]) for r in own] == [("generic", 100, 0.5), ("generic", 200, 0.4)]
    tf, d = feed_all(["INFO:tensorflow:loss = 0.7, step = 0", "INFO:tensorflow:loss = 0.6, step = 100 (12.5 sec)"])
    assert d.framework == "tensorflow"
    assert [(r["step"], r["loss"], r.get("step_time_ms")) for r in tf] == [(0, 0.7, None), (100, 0.6, 125.0)]
    bare, d = feed_all(["loss = 0.6, step = 100 (12.5 sec)"])
    assert d.framework == "tensorflow" and bare[0]["step"] == 100


OD_V2_STEP = ["INFO:tensorflow:Step 48100 per-step time 0.117s",
              "I1113 21:47:13.077878 140227122984768 model_lib_v2.py:700] Step 48100 per-step time 0.117s"]
OD_V2_LOSSES = ["{'Loss/BoxClassifierLoss/classification_loss': 0.005494753,",
                " 'Loss/RPNLoss/objectness_loss': 0.00037709906,",
                " 'Loss/regularization_loss': 0.0,",
                " 'Loss/total_loss': 0.037611857,",
                " 'learning_rate': np.float32(3.7432907e-05)}"]
"""model_lib_v2's step (research/object_detection/model_lib_v2.py in tensorflow/models: `Step {}
per-step time {:.3f}s`, then `pprint.pformat(logged_dict_np, width=40)`), each message printed by
TensorFlow's logger and absl's; NumPy 2 prints each value inside its type."""


def _od_v2_print(loggers=("INFO:tensorflow:", "I1113 21:47:13.078210 140227122984768 model_lib_v2.py:701] ")):
    lines = []
    for prefix in loggers:
        lines += [prefix + OD_V2_LOSSES[0]] + OD_V2_LOSSES[1:]
    return lines


@pytest.mark.parametrize("lines", [
    OD_V2_STEP + _od_v2_print(),                                   # two loggers
    OD_V2_STEP[:1] + _od_v2_print(("INFO:tensorflow:",)),          # TensorFlow's alone
    OD_V2_STEP[1:] + _od_v2_print(("I1113 21:47:13.078210 1402 model_lib_v2.py:701] ",)),   # absl's alone
])
def test_tensorflow_object_detection_losses_follow_their_step(lines):
    """The TF2 Object Detection API's step prints no loss on its line: its losses come as a dict
    over the lines after.  One record a step, with the total loss, the learning rate and each
    loss; the next step and the dict's second print add nothing."""
    run = lines + ["INFO:tensorflow:Step 48200 per-step time 0.090s"] + _od_v2_print()[:5]
    for chunk in (False, True):
        d = Dispatcher()
        recs = d.feed_chunk("\n".join(run) + "\n") + d.flush() if chunk else feed_all(run)[0]
        assert [(r["kind"], r["step"], r["step_time_ms"], r["loss"], r["lr"]) for r in recs] == [
            ("progress", 48100, 117.0, 0.037611857, 3.7432907e-05),
            ("progress", 48200, 90.0, 0.037611857, 3.7432907e-05)]
        assert recs[0]["metrics"] == {"loss/boxclassifierloss/classification_loss": 0.005494753,
                                      "loss/rpnloss/objectness_loss": 0.00037709906,
                                      "loss/regularization_loss": 0.0}


def test_tensorflow_object_detection_step_whose_losses_do_not_come():
    """A step whose dict another line cuts off, or that ends the log, still gives its record
    and time, with what came of the dict; the other line is read as any other."""
    recs, _ = feed_all(OD_V2_STEP + [OD_V2_STEP[0].replace("48100", "48200"),
                                     "INFO:tensorflow:" + OD_V2_LOSSES[0],
                                     "Traceback (most recent call last):", '  File "train.py", line 1, in <module>',
                                     "RuntimeError: boom", OD_V2_STEP[0].replace("48100", "48300")])
    assert [(r["kind"], r["step"], r.get("step_time_ms"), r.get("loss")) for r in recs] == [
        ("progress", 48100, 117.0, None), ("progress", 48200, 117.0, None), ("error", 48200, None, None),
        ("progress", 48300, 117.0, None)]
    assert "metrics" not in recs[0] and list(recs[1]["metrics"]) == ["loss/boxclassifierloss/classification_loss"]


STRUCTURED = [
    '{"asctime": "2026-01-10 10:00:01,000", "levelname": "INFO", "name": "train", '
    '"message": "step 1/100 loss 2.3100 step_time_ms 150.2"}',
    '{"level": 30, "time": 1767866401000, "pid": 7, "msg": "step 2/100 loss 2.2000 step_time_ms 151.0"}',
    '{"message": "metrics", "step": 3, "loss": 2.1}',
    '{"message": "Traceback (most recent call last):"}', '{"message": "  File \\"train.py\\", line 9, in <module>"}',
    '{"message": "RuntimeError: the loader died"}',
]


def test_a_structured_loggers_lines_are_read_as_their_messages():
    """A script that logs JSON (python-json-logger's `message`, pino's `msg`): each message is
    read as the line it would have been, a traceback logged a line a message as one error; one
    that gives nothing leaves the object to be read as a printed dict (numbers in fields of
    their own)."""
    for chunk in (False, True):
        d = Dispatcher()
        recs = d.feed_chunk("\n".join(STRUCTURED) + "\n") + d.flush() if chunk else feed_all(STRUCTURED)[0]
        assert [(r["kind"], r["step"], r.get("loss"), r.get("step_time_ms"), r.get("exception")) for r in recs] == [
            ("progress", 1, 2.31, 150.2, None), ("progress", 2, 2.2, 151.0, None), ("progress", 3, 2.1, None, None),
            ("error", 3, None, None, "RuntimeError")]


def test_tensorflow_orbit_dict_cut_off_by_another_line():
    """An Orbit dict over several lines that another line breaks into still gives its record,
    with what it held; the other line is read as any other."""
    recs, _ = feed_all(["train | step:     10 | steps/sec:   12.5 | output: ",
                        "    {'learning_rate': 0.001,", "     'model_loss': 0.5,",
                        "Traceback (most recent call last):", '  File "train.py", line 1, in <module>',
                        "RuntimeError: boom"])
    assert [(r["kind"], r["step"]) for r in recs] == [("progress", 10), ("error", 10)]
    assert (recs[0]["lr"], recs[0]["metrics"], recs[0]["step_time_ms"]) == (0.001, {"model_loss": 0.5}, 80.0)


def test_a_clock_is_no_step_time():
    """PyTorch/XLA's `test_train_mp_*` scripts print the wall clock as `Time=21:35:07`: the hours
    were read as a 21 s step.  A number followed by `:` and a digit is no value."""
    recs, _ = feed_all([
        "| Training Device=xla:0/2 Epoch=1 Step=20 Loss=0.01571 Rate=798.11 GlobalRate=981.24 Time=21:35:09"])
    assert [(r["step"], r["epoch"], r["loss"], r.get("step_time_ms")) for r in recs] == [(20, 1, 0.01571, None)]
    assert (recs[0]["rank"], recs[0]["samples_per_s"], recs[0]["metrics"]) == (2, 798.11, {"globalrate": 981.24})
    # a time of its own still is one
    assert feed_all(["step 3 loss 2.0 time 1.5s"])[0][0]["step_time_ms"] == 1500.0


@pytest.mark.parametrize("text,is_victim", [
    ("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:561] Connection closed by "
     "peer [127.0.0.1]:41654. This is typically caused by a remote worker crashing.", True),
    ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection reset by peer", True),
    ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 5000ms for "
     "recv operation to complete", True),
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
     "remote process exited or there was a network error, NCCL version 2.19.3", True),
    ("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, OpType=_ALLGATHER_BASE) ran for "
     "300051 milliseconds before timing out.", True),
    ("torch.distributed.DistNetworkError: Broken pipe", True),
    ("RuntimeError: shape mismatch in batch 3 (user bug)", False),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", False),
    ("RuntimeError: CUDA error: peer access is not supported between these two devices", False),
    ("ValueError: the remote code of this model is not trusted", False),
])
def test_victim_errors_say_another_process_failed(text, is_victim):
    from ridgescope.parsers.victims import victim
    assert victim(text) is is_victim


@pytest.mark.parametrize("lines", [
    # the MNIST example as a terminal shows its tab, and Kubeflow's and Katib's copy (`loss=`)
    ["Train Epoch: 1 [0/60000 (0%)]   Loss: 2.329474", "Train Epoch: 1 [640/60000 (1%)] Loss: 1.425025"],
    ["  Train Epoch: 1 [0/60000 (0%)]\tloss=2.3000", "  Train Epoch: 1 [640/60000 (1%)]\tloss=2.2135"],
])
def test_mnist_example_line_variants(lines):
    recs, _ = feed_all(lines)
    assert [(r["kind"], r["step"], r["epoch"]) for r in recs] == [("progress", 1, 1), ("progress", 2, 1)]
    assert recs[1]["metrics"]["sample"] == 640 and recs[0]["loss"] in (2.329474, 2.3)


def test_mlperf_logger_lines_behind_a_label_and_their_counts():
    """MLPerf's logger behind srun's label; a step under the library's own constant; a count of
    samples where no step is given (`step_from`); a line cut short gives nothing."""
    lines = [
        ' 0: :::MLLOG {"namespace": "", "time_ms": 1719843792116, "event_type": "POINT_IN_TIME", "key": '
        '"tracked_stats", "value": {"throughput": 14214.65962521748}, "metadata": {"file": "run_pretraining.py", '
        '"lineno": 1850, "epoch_num": 799502}}',
        ':::MLLOG {"namespace": "", "time_ms": 1721026805975, "event_type": "POINT_IN_TIME", "key": "tracked_stats", '
        '"value": {"throughput": 1.9257918929116467}, "metadata": {"file": "custom_callbacks.py", "step_num": 3072}}',
        ':::MLLOG {"namespace": "", "time_ms": 1721026805975, "event_type": "INTERVAL_END", "key": "block_stop", '
        '"value": null, "metadata": {"samples_count": 3072}}',
        ':::MLLOG {"namespace": "", "time_ms": 1721026806000, "event_type": "POINT_IN_TIME", "key": "eval_acc',
    ]
    recs, _ = feed_all(lines)
    assert [(r["rank"], r["step"], r.get("step_from"), r["metrics"]["throughput"]) for r in recs] == [
        (0, 799502, "epoch_num", 14214.65962521748), (None, 3072, None, 1.9257918929116467)]


def test_mlperf_run_stop_says_whether_the_target_was_reached():
    """`run_stop`'s status (`success`: the quality target reached; `aborted`: not) ends the
    evaluations, after the step reached; one without a status gives nothing."""
    lines = [':::MLLOG {"time_ms": 1, "key": "tracked_stats", "value": {"throughput": 2.5}, "metadata": {"step": 300}}',
             ':::MLLOG {"namespace": "", "time_ms": 1593113039764, "event_type": "INTERVAL_END", "key": "run_stop", '
             '"value": null, "metadata": {"file": "train.py", "lineno": 595, "status": "aborted"}}',
             ':::MLLOG {"time_ms": 3, "key": "run_stop", "value": null, "metadata": {}}']
    recs, _ = feed_all(lines)
    (end,) = [r for r in recs if r["kind"] == "eval"]
    assert (end["step"], end["phase"], end["status"], end["log_time_s"]) == (300, "end", "aborted", 1593113039.764)


def test_mlperf_evaluation_with_its_own_step_after_the_streams():
    """An evaluation whose metadata names a step, after lines that gave the stream's: the
    record's step is the stream's, the logger's own rides along; a value that is no number
    gives none, not an error."""
    lines = [
        ':::MLLOG {"time_ms": 1, "key": "tracked_stats", "value": {"throughput": 2.5, "flag": true, "nested": {"a": 1}}, '
        '"metadata": {"step": 3072}}',
        ':::MLLOG {"time_ms": 2, "key": "eval_accuracy", "value": {"a": 1}, "metadata": {"step": 3100, "samples_count": 9}}',
    ]
    recs, d = feed_all(lines)
    assert [(r["kind"], r["step"]) for r in recs] == [("progress", 3072), ("eval", 3072)]
    assert recs[0]["metrics"] == {"throughput": 2.5}
    assert (recs[1]["logged_step"], recs[1]["samples_count"], recs[1]["metrics"]) == (3100, 9, {"accuracy": None})
    assert d.stats["garbage"] == 0


_TRAIN_BATCH = "0: TRAIN [0][9/10]\tTime 0.075 (0.087)\tData 9.49e-05 (1.78e-02)\tTok/s 232016 (195956)\tLoss/tok 9.6103 (10.0141)"
_TEST_BATCH = "0: TEST [0][{}/3]\tTime 0.401 (0.401)\tDecoder iters 149.0 (149.0)\tTok/s 22612 (22612)"
_EVAL_START = (':::MLLOG {"namespace": "", "time_ms": 1593112759986, "event_type": "INTERVAL_START", '
               '"key": "eval_start", "value": null, "metadata": {"epoch_num": 1}}')


@pytest.mark.parametrize("evaluation", [
    [_EVAL_START, _TEST_BATCH.format(0), _TEST_BATCH.format(1)],    # GNMT's order
    [_TEST_BATCH.format(0), _EVAL_START, _TEST_BATCH.format(1)],
])
def test_one_evaluation_told_by_mlperfs_logger_and_a_meter_starts_once(evaluation):
    """MLPerf's logger (bare) and the meter's first TEST batch (rank 0's) begin the same
    evaluation: one start, from whichever came first.  The meter's next evaluation, at a later
    step, starts again."""
    recs, _ = feed_all([_TRAIN_BATCH, *evaluation, _TRAIN_BATCH.replace("[9/10]", "[10/10]"),
                        _TEST_BATCH.format(0)])
    starts = [(r["step"], r["framework"]) for r in recs if r["kind"] == "eval"]
    first = "mlperf" if evaluation[0] is _EVAL_START else "generic"
    assert starts == [(10, first), (11, "generic")]



_ESPNET = "[host] 2024-05-01 10:00:{:02d},000 (trainer:811) INFO: {}epoch:train:{}-{}batch: iter_time=0.002, loss=2.000, train_time=0.100"


def test_espnet_and_funasr_intervals():
    """FunASR's lines name the run's update count: the step.  ESPnet's count batches within
    the epoch: an epoch that begins with no results line for the one before goes on after the
    last batch printed (`step_inferred`); a results line gives the exact count; an interval of
    another key than `train` gives nothing."""
    funasr = ("[gpu01] 2023-04-23 18:59:48,924 (trainer:777) INFO: 2epoch:train:1-50batch:50num_updates: "
              "iter_time=0.008, forward_time=0.302, loss=0.192, backward_time=0.231, optim_step_time=0.117, "
              "optim0_lr0=7.484e-06, train_time=0.753")
    (r,), _ = feed_all([funasr])
    assert (r["framework"], r["step"], r["epoch"], r["lr"], r["lanes_ms"]) == (
        "espnet", 50, 2, 7.484e-06, {"input": 8.0, "compute": 650.0})
    lines = [_ESPNET.format(0, 1, 1, 10), _ESPNET.format(1, 1, 11, 20), _ESPNET.format(2, 2, 1, 10),
             "[host] 2024-05-01 10:00:03,000 (trainer:394) INFO: 2epoch results: [train] loss=2.000, "
             "time=1 minute and 2.5 seconds, total_count=45, [valid] loss=1.500, acc=0.900, total_count=5",
             _ESPNET.format(4, 3, 1, 10), _ESPNET.format(5, 3, 11, 20).replace("train:", "valid:")]
    recs, d = feed_all(lines)
    assert [(r["kind"], r["step"], r.get("step_inferred", False)) for r in recs] == [
        ("progress", 10, False), ("progress", 20, False), ("progress", 30, True), ("eval", 45, False),
        ("progress", 55, False)]
    assert recs[3]["metrics"] == {"loss": 1.5, "acc": 0.9} and d.stats["garbage"] == 0


def _ignite_bar(epoch: int | None, n: int, total: int = 10, loss: float = 2.0) -> str:
    desc = f"Epoch [{epoch}/3]: " if epoch else "Iteration: "
    return f"{desc}[{n}/{total}]  {n * 10}%|\u2588         , loss={loss} [00:01<00:02]"


def test_ignite_example_prints_alone_and_the_bars_of_other_engines():
    """The example's prints alone (no bar, no engine logger) are read by the generic parser; the
    results' single space (Ignite's current examples) too.  Once a trainer's bar counts epochs,
    a bar without them is another engine's (an evaluator's) and gives nothing; a bar whose
    description names an evaluation neither."""
    recs, d = feed_all(["Epoch[1] Iteration[10/20] Loss: 0.54", "Epoch[1] Iteration[20/20] Loss: 0.31",
                        "Validation Results - Epoch: 1 Avg accuracy: 0.95 Avg loss: 0.16"])
    assert [(r["kind"], r["step"], r["framework"]) for r in recs] == [
        ("progress", 10, "ignite"), ("progress", 20, "ignite"), ("eval", 20, "ignite")]
    assert recs[2]["metrics"] == {"accuracy": 0.95, "loss": 0.16} and recs[2]["subset"] == "validation"

    lines = [_ignite_bar(1, 1), _ignite_bar(1, 2), _ignite_bar(None, 3, 5), _ignite_bar(None, 4, 5),
             "Validation: [2/5]  40%|\u2588  , acc=0.5 [00:01<00:02]", _ignite_bar(1, 3), _ignite_bar(1, 4)]
    recs, d = feed_all(lines)
    assert [r["step"] for r in recs] == [2, 3, 4, 5] and d.stats["garbage"] == 0

    # the bar alone gives an epoch's length: its results come at its last step; an evaluator's
    # run inside the trainer's, after the bar's last redraw of the step, too
    recs, _ = feed_all(["2026-12-03 05:31:50,001 trainer INFO: Engine run starting with max_epochs=3.",
                        _ignite_bar(1, 8), _ignite_bar(1, 9),
                        "2026-12-03 05:31:51,424 evaluator INFO: Engine run starting with max_epochs=1.",
                        "Training Results - Epoch: 1  Avg accuracy: 0.34 Avg loss: 2.15"])
    assert [(r["kind"], r["step"], r.get("phase")) for r in recs] == [
        ("progress", 9, None), ("progress", 10, None), ("eval", 10, "start"), ("eval", 10, "result")]


def test_ignite_single_epoch_bar_and_a_restart_in_the_same_stream():
    """A run of one epoch draws `Iteration: [n/T]` (a count's record is the next step's, see
    `ignite.py`): the first such bar's length is the trainer's,
    an evaluator's of another length gives nothing.  A run resumed in the same stream gives its
    steps again from the iteration it resumed at, after the last step the bar drew before."""
    lines = [_ignite_bar(None, 1), _ignite_bar(None, 2), _ignite_bar(None, 1, 4), _ignite_bar(None, 2, 4),
             _ignite_bar(None, 3)]
    recs, _ = feed_all(lines)
    assert [r["step"] for r in recs] == [2, 3, 4]
    lines = [_ignite_bar(1, 5), _ignite_bar(1, 6), _ignite_bar(1, 7),
             "2026-12-03 05:28:05,049 trainer INFO: Engine run resuming from iteration 4, epoch 0 until 3 epochs",
             _ignite_bar(1, 5, loss=1.5), _ignite_bar(1, 6, loss=1.4)]
    recs, _ = feed_all(lines)
    assert [(r["kind"], r["step"]) for r in recs] == [
        ("progress", 6), ("progress", 7), ("progress", 8), ("restart", 4), ("progress", 6), ("progress", 7)]
    assert recs[-1]["loss"] == 1.4


_ICEFALL = ("2024-05-17 01:{:02d}:00,000 INFO [train.py:1056] ({}/2) Epoch {}, batch {}, loss[loss=0.5, "
            "simple_loss=0.6, over 19153.00 frames. ], tot_loss[loss=0.55, over 37589436.30 frames. ], "
            "batch size: 130, lr: 4.50e-02, grad_scale: 2.0")


def test_icefall_ranks_epochs_and_validations():
    """Two ranks' lines, interleaved, each named by its `(R/W)`; a new epoch goes on after the
    last batch printed of the one before (`step_inferred`: up to `log_interval` - 1 short); a
    validation is an evaluation from its start to the memory line after its result.  A log that
    begins in a later epoch counts from its own start, inferred."""
    lines = [_ICEFALL.format(0, 0, 1, 0), _ICEFALL.format(0, 1, 1, 0), _ICEFALL.format(1, 1, 1, 50),
             _ICEFALL.format(1, 0, 1, 50),
             "2024-05-17 01:02:00,000 INFO [train.py:1088] (0/2) Computing validation loss",
             "2024-05-17 01:03:00,000 INFO [train.py:1097] (0/2) Epoch 1, validation: loss=0.2, over 944034.00 frames.",
             "2024-05-17 01:03:00,001 INFO [train.py:1098] (0/2) Maximum memory allocated so far is 17215MB",
             _ICEFALL.format(4, 0, 2, 0), _ICEFALL.format(5, 0, 2, 50)]
    recs, d = feed_all(lines)
    assert [(r["kind"], r["rank"], r["step"], r.get("phase"), r.get("step_inferred", False)) for r in recs] == [
        ("progress", 0, 1, None, False), ("progress", 1, 1, None, False), ("progress", 1, 51, None, False),
        ("progress", 0, 51, None, False), ("eval", 0, 51, "start", False), ("eval", 0, 51, "result", False),
        ("eval", 0, 51, "end", False), ("progress", 0, 52, None, True), ("progress", 0, 102, None, True)]
    assert recs[5]["metrics"] == {"loss": 0.2, "frames": 944034.0} and recs[6]["mem_gb"] == approx(16.81, abs=0.01)
    assert d.stats["garbage"] == 0

    recs, _ = feed_all([_ICEFALL.format(0, 0, 5, 100), _ICEFALL.format(1, 0, 5, 150)])
    assert [(r["step"], r["epoch"], r["step_inferred"]) for r in recs] == [(101, 5, True), (151, 5, True)]


def test_speechbrain_a_checkpoint_between_a_counts_redraws_gives_its_step_once():
    """A mid-epoch checkpoint's line comes between redraws of the same count: the count's step is
    given before the checkpoint, at its step, and its later redraws give it no second time."""
    bar = " 50%|\u2588\u2588\u2588\u2588\u2588     | {}/20 [00:01<00:01,  9.50it/s, train_loss={}]"
    lines = ["speechbrain.utils.epoch_loop - Going into epoch 2", bar.format(10, 2.31),
             "speechbrain.utils.checkpoints - Saved an intra-epoch checkpoint in results/save/CKPT+2026",
             bar.format(10, 2.30), bar.format(20, 2.29)]
    recs, d = feed_all(lines)
    assert [(r["kind"], r["step"]) for r in recs] == [("progress", 30), ("checkpoint", 30), ("progress", 40)]
    assert (recs[0]["loss"], recs[0]["epoch"]) == (2.31, 2) and d.stats["garbage"] == 0


def test_speechbrain_the_next_epochs_announcement_before_this_epochs_last_redraws():
    """Under torchrun's `--tee` the logger's lines and the bar come from two files: `Going into
    epoch 3` and the summary of epoch 2 can come before epoch 2's last redraws.  The bar's count
    starting again begins the epoch; its last count is epoch 2's step 20, and the save after
    the summary is at the step the summary named, not the bar's count drawn before it."""
    bar = " 90%|\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588 | {}/10 [00:01<00:00,  4.2it/s, train_loss={}]"
    lines = ["speechbrain.utils.epoch_loop - Going into epoch 2", bar.format(8, 2.31), bar.format(9, 2.30),
             "speechbrain.utils.train_logger - epoch: 2, lr: 1.00e-01, steps: 20, optimizer: SGD - train "
             "loss: 2.30 - valid loss: 2.29, valid ACC: 1.19e-01",
             "speechbrain.utils.checkpoints - Saved an end-of-epoch checkpoint in out1/save/CKPT+2026",
             "speechbrain.utils.epoch_loop - Going into epoch 3", bar.format(9, 2.30), bar.format(10, 2.29),
             bar.format(0, 2.26), bar.format(1, 2.26)]
    recs, d = feed_all(lines)
    assert [(r["kind"], r["step"]) for r in recs] == [
        ("progress", 18), ("progress", 19), ("eval", 20), ("checkpoint", 20), ("progress", 20),
        ("progress", 21)]
    assert [r.get("epoch") for r in recs if r["kind"] == "progress"] == [2, 2, 2, 3]
    assert d.stats["garbage"] == 0


def test_a_redraw_and_the_other_pipes_line_behind_one_torchrun_prefix():
    """torchrun's `--tee` gives a rank's stdout and stderr one prefix.  A bar's redraw waits for
    its newline (the next `\r`) when a line logged to stdout comes: the two are two lines, and
    the summary is read (before, it was glued to the redraw and neither read).  A redraw's part
    that begins with `\r` (a launcher that keeps it) goes on the bar's line."""
    data = (b"[default0]:speechbrain.utils.epoch_loop - Going into epoch 1\n"
            b"[default0]: 90%|\xe2\x96\x88\xe2\x96\x88 | 9/10 [00:01<00:00,  3.76it/s, train_loss=2.3]"
            b"[default0]:speechbrain.utils.train_logger - epoch: 1, lr: 1.00e-01, steps: 10, optimizer: SGD "
            b"- train loss: 2.30 - valid loss: 2.29, valid ACC: 1.19e-01\n")
    d = Dispatcher()
    recs = d.feed_chunk(data) + d.flush()
    assert [(r["kind"], r["rank"], r["step"]) for r in recs] == [("progress", 0, 9), ("eval", 0, 10)]
    assert recs[1]["metrics"]["loss"] == 2.29 and recs[0]["loss"] == 2.3
    kept = TeeParts()
    joined, _ = kept.join(b"[default0]:\r 10%| 1/10 [00:00<00:01, 6.1it/s][default0]:\r 20%| 2/10 [00:00<00:01, 6.1it/s]\n")
    assert joined == b"[default0]:\r 10%| 1/10 [00:00<00:01, 6.1it/s]\r 20%| 2/10 [00:00<00:01, 6.1it/s]\n"


def test_icefall_a_ranks_checkpoint_is_that_ranks():
    """The events of an icefall line (a checkpoint's save) are the rank its `(R/W)` names, at
    that rank's step."""
    lines = [_ICEFALL.format(0, 0, 1, 50), _ICEFALL.format(0, 1, 1, 0),
             "2024-01-14 01:03:00,826 INFO [checkpoint.py:75] (0/2) Saving checkpoint to zipformer/exp/epoch-1.pt"]
    recs, _ = feed_all(lines)
    assert [(r["kind"], r["rank"], r["step"]) for r in recs] == [
        ("progress", 0, 51), ("progress", 1, 1), ("checkpoint", 0, 51)]
    assert recs[2]["path"] == "zipformer/exp/epoch-1.pt"


def test_a_steps_evaluation_line_is_an_evaluation():
    """A loop's line of a step's evaluation results alone (nanochat's `Step 00200 | Validation
    bpb: 0.8123` after its step line, a script's `eval_loss`): an eval record at that step, with
    its values; a line of other values with no progress field stays nothing."""
    recs, _ = feed_all([
        "step 00200 (42.30%) | loss: 1.224567 | lrm: 1.00 | dt: 2989.44ms | tok/sec: 529,882 | mfu: 74.13 | "
        "epoch: 1 | total time: 3.12m",
        "Step 00200 | Validation bpb: 0.8123",
        "step: 300, eval_loss: 2.1, eval_accuracy: 0.5",
        "step 301 | val/ppl: 7.5",
        "step 302 | lrm: 1.0",
        "step 303 | interval: 4"])
    assert [(r["kind"], r["step"]) for r in recs] == [("progress", 200), ("eval", 200), ("eval", 300), ("eval", 301)]
    assert (recs[0]["step_time_ms"], recs[0]["loss"], recs[0]["tokens_per_s"], recs[0]["mfu"]) == (
        2989.44, 1.224567, 529882, 74.13)
    assert [r.get("metrics") for r in recs[1:]] == [
        {"validation_bpb": 0.8123}, {"eval_loss": 2.1, "eval_accuracy": 0.5}, {"val/ppl": 7.5}]
    assert all(r["phase"] == "result" for r in recs[1:])


def test_a_rank_tag_names_the_lines_rank():
    """A loop that tags its line with its rank (Picotron's `[rank 7] Step: ..`, from its last
    pipeline stage; prime-rl's `[Rank 0] step: ..`, as in PrimeIntellect-ai/prime-rl#20): the
    line's rank, where no launcher prefix names one; `Memory usage` is its memory."""
    recs, _ = feed_all([
        "03:26:55 [INFO] [TRAIN] [Rank 0] step: 8, loss: 975.9991, tokens_per_second: 76957.79, mfu: 42.46",
        "[rank 7] Step: 12    | Loss: 7.1234 | Global batch size:   1.05M | Tokens/s:   9.59K | "
        "Tokens/s/GPU:   1.20K | Tokens:  12.58M | MFU: 12.33% | Memory usage:  32.55GB",
        "[rank2]:[rank 7] Step: 13    | Loss: 7.1 | MFU: 12.33%"])
    assert [(r["rank"], r["step"], r["loss"], r["mfu"]) for r in recs] == [
        (0, 8, 975.9991, 42.46), (7, 12, 7.1234, 12.33), (2, 13, 7.1, 12.33)]
    assert (recs[1]["mem_gb"], recs[1]["tokens_per_s"]) == (32.55, 9590)
    assert not any("rank" in r.get("metrics", {}) for r in recs)


def test_open_clip_lines():
    """open_clip's train.py today (its format in `open_clip_train/train.py`): the per-GPU rate
    after the total says the total is one; each loss its own; a log that starts inside an epoch
    learns a step's samples from the lines' common divisor; the next epoch runs on; the
    evaluation after epoch 0 is at that epoch's last step."""
    line = ("2024-10-02,10:00:{:02d} | INFO | Train Epoch: {} [{:>8}/1024000 ({}%)] Data (t): 0.012 Batch (t): 0.450, "
            "9102.22/s, 1137.78/s/gpu LR: 0.000500 Logit Scale: 14.286 Contrastive_loss: 6.1234 (6.2000) "
            "Loss: 6.1234 (6.2000)")
    recs, _ = feed_all([line.format(0, 0, 4096 * 101, 40), line.format(1, 0, 4096 * 201, 80),
                        line.format(2, 0, 4096 * 250, 100), line.format(3, 1, 4096, 0),
                        "2024-10-02,10:01:00 | INFO | Eval Epoch: 1 [32 / 5000]\tClip Loss: 2.100000\t",
                        "2024-10-02,10:01:09 | INFO | Eval Epoch: 1 image_to_text_mean_rank: 2.3887\t"
                        "image_to_text_R@1: 0.4132\tclip_val_loss: 0.0076\tepoch: 1\tnum_samples: 5000"])
    # (the first line, at 40%, waits for the second: its 413,696 samples alone are no step's; the
    # two show 4,096)
    assert [(r["kind"], r["step"]) for r in recs] == [
        ("progress", 101), ("progress", 201), ("progress", 250), ("progress", 251), ("eval", 250)]
    third = recs[2]
    assert (third["samples_per_s"], third["step_time_ms"], third["lanes_ms"], third["loss"], third["lr"]) == (
        9102.22, 450.0, {"input": 12.0}, 6.1234, 0.0005)
    assert third["metrics"] == {"logit_scale": 14.286, "contrastive_loss": 6.1234}
    assert (recs[3]["epoch"], recs[3]["iter_in_epoch"], recs[3]["iters_per_epoch"]) == (1, 1, 250)
    assert (recs[4]["loss"], recs[4]["metrics"]) == (
        0.0076, {"image_to_text_mean_rank": 2.3887, "image_to_text_R@1": 0.4132, "clip_val_loss": 0.0076})


def test_torchtune_memory_and_the_losses_of_openrlhf_and_sd_scripts():
    """torchtune's metric logger names its peak allocated GiB `peak_memory_alloc`; OpenRLHF's SFT
    bar names the step's loss `gpt_loss` (its `loss_mean` is a moving average, no step's);
    kohya's sd-scripts shows one loss in its bar, the moving average `avr_loss`."""
    r = one("Step 25 | loss:1.2345 lr:2e-05 tokens_per_second_per_gpu:1234.5 peak_memory_active:12.3 "
            "peak_memory_alloc:12.1 peak_memory_reserved:14.1")
    assert (r["step"], r["loss"], r["mem_gb"], r["tokens_per_s_per_gpu"]) == (25, 1.2345, 12.1, 1234.5)
    r = one("Train epoch [1/1]:  10%|\u2588         | 10/100 [00:10<01:30,  1.00s/it, gpt_loss=1.23, loss_mean=1.2, lr=5e-6]")
    assert (r["step"], r["loss"], r["lr"]) == (10, 1.23, 5e-6)
    r = one("steps:  10%|\u2588         | 100/1000 [01:00<09:00,  1.66it/s, avr_loss=0.123]")
    assert (r["step"], r["total_steps"], r["loss"], r["it_per_s"]) == (100, 1000, 0.123, 1.66)


def test_steps_that_count_in_their_epoch_run_on_over_the_epochs():
    """MindSpore's LossMonitor (`epoch: %s step: %s, loss is %s`, its source's print: the step
    in its epoch, both from 1) and a loop's own print that counts from 0: each epoch's steps
    run on after those before, once a new epoch's step is lower than the last; an earlier
    epoch (a run started again) counts as printed."""
    recs, _ = feed_all(["epoch: 1 step: 1, loss is 2.3021603", "epoch: 1 step: 1875, loss is 0.1203",
                        "Train epoch time: 12345.678 ms, per step time: 6.584 ms",
                        "epoch: 2 step: 1, loss is 0.1021", "epoch: 2 step: 1875, loss is 0.0821",
                        "epoch: 3 step: 1875, loss is 0.0521", "epoch: 1 step: 1, loss is 2.31"])
    assert [(r["step"], r["epoch"], r["loss"], r.get("iter_in_epoch")) for r in recs if r["kind"] == "progress"] == [
        (1, 1, 2.3021603, None), (1875, 1, 0.1203, None), (1876, 2, 0.1021, 1), (3750, 2, 0.0821, 1875),
        (5625, 3, 0.0521, 1875), (1, 1, 2.31, None)]
    # TimeMonitor's epoch time, at the epoch's last step (`mindspore.py`)
    assert [(r["step"], r["mean_step_time_ms"]) for r in recs if r["kind"] == "timing"] == [(1875, 6.584)]
    recs, _ = feed_all([f"epoch: {e}, step: {i}, loss: 2.5" for e in (0, 1) for i in (0, 10, 20)])
    assert [r["step"] for r in recs] == [0, 10, 20, 21, 31, 41]
    # a step that runs over the run, its epoch printed beside it, stays as printed
    recs, _ = feed_all(["epoch: 1 step: 90, loss: 2.5", "epoch: 2 step: 100, loss: 2.4", "epoch: 2 step: 110, loss: 2.3"])
    assert [r["step"] for r in recs] == [90, 100, 110]


def test_an_evaluation_line_of_a_step_counted_in_its_epoch_runs_on_and_moves_no_count():
    recs, _ = feed_all(["epoch 1 step 10 loss 2.5", "epoch 1 step 20 loss 2.4", "epoch 2 step 10 loss 2.3",
                        "epoch 2 step 5 val_loss 2.6", "epoch 2 step 20 loss 2.2", "epoch 3 step 10 loss 2.1"])
    assert [(r["kind"], r["step"]) for r in recs] == [
        ("progress", 10), ("progress", 20), ("progress", 30), ("eval", 25), ("progress", 40), ("progress", 50)]


@pytest.mark.parametrize("line", ["2024-01-01 10:00:00,123 INFO step 7 loss 3.0", "23:59:10 WARNING step 7 loss 3.0",
                                  "INFO step 7 loss 3.0"])
def test_a_loggers_level_before_a_lowercase_key_is_no_part_of_it(line):
    """`%(asctime)s %(levelname)s %(message)s`: the level is no word of the key after it (read
    as one key, `INFO step`, the line had no step)."""
    r = one(line)
    assert (r["step"], r["loss"]) == (7, 3.0)


def test_rich_handlers_source_after_the_message_is_no_value():
    """Rich's logging handler right-aligns the record's source after its message (`train.py:42`):
    where the line was logged, no metric."""
    r = one("[12/06/26 10:00:00] INFO     step 7 loss 3.0                                      train.py:42")
    assert (r["step"], r["loss"], "metrics" in r) == (7, 3.0, False)


def test_a_capitalised_span_before_a_measure_makes_it_that_spans_measure():
    """`Epoch Time 12.5` is the epoch's time and `Val Loss 2.9` the validation's loss: read as the
    step's `Time` and `Loss`, an epoch's 12.5 s was a 12,500 ms step and a validation loss printed
    first was the training loss.  `Data Time` is the data loader's share (the input lane)."""
    r = one("Epoch: 1, Step: 101, Val Loss: 2.9, Train Loss: 2.31, Data Time: 0.02, Epoch Time: 12.5, Time: 0.5")
    assert (r["step"], r["loss"], r["step_time_ms"], r["lanes_ms"]) == (101, 2.31, 500.0, {"input": 20.0})
    assert r["metrics"] == {"val_loss": 2.9, "epoch_time": 12.5}
    r = one("Epoch: 1, Global Step: 5, Total Time: 99.0, Loss: 1.0")
    assert (r["step"], r["loss"], "step_time_ms" in r, r["metrics"]) == (5, 1.0, False, {"total_time": 99.0})


@pytest.mark.parametrize("line,step,ms", [
    ("global step 5: loss: 0.7497 (0.92 sec/step)    Accuracy: 0.5", 5, 920.0),     # TF-Slim's, copied
    ("Epoch   3 Step    1000 [0.512 sec/Step, Train_Loss=0.45123, Avg_Loss=0.46000]", 1000, 512.0),
    ("step 7 loss 2.0 120 ms/step", 7, 120.0),
])
def test_a_steps_time_as_a_number_and_its_unit_alone(line, step, ms):
    r = one(line)
    assert (r["step"], r["step_time_ms"]) == (step, ms)


@pytest.mark.parametrize("line", ["INFO:root:step 5 loss 2.0 time 0.5", "INFO:__main__:step 5 loss 2.0 time 0.5",
                                  "Train:loss 2.0 step:5 time 0.5"])
def test_a_loggers_or_phases_name_before_a_colon_qualifies_no_key(line):
    """Only a name of words joined by `_` qualifies the key after its colon (`max_size:time`)."""
    r = one(line)
    assert (r["step"], r["loss"], r["step_time_ms"]) == (5, 2.0, 500.0)


def test_a_collectives_rank_is_its_devices_rank_in_the_widest_communicator():
    """A collective's line names its communicator, no rank: a tensor-parallel group's collective
    on rank 5's device is rank 5's (its rank in the group is 1), and so is the group's init."""
    host = "node1:4242:4300 [1] NCCL INFO "
    recs, _ = feed_all([
        host + "ncclCommInitRankConfig comm 0xaaa0 rank 5 nranks 16 cudaDev 1 nvmlDev 1 busId 1a000 commId 0x1 - Init COMPLETE",
        host + "ncclCommInitRankConfig comm 0xbbb0 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 1a000 commId 0x2 - Init COMPLETE",
        "node1:4242:4242 [1] NCCL INFO AllGather: opCount 3 sendbuff 0x1 recvbuff 0x2 count 1024 datatype 7 op 0 root 0 "
        "comm 0xbbb0 [nranks=2] stream 0x3",
        "node2:4242:4242 [1] NCCL INFO AllGather: opCount 3 sendbuff 0x1 recvbuff 0x2 count 1024 datatype 7 op 0 root 0 "
        "comm 0xbbb0 [nranks=2] stream 0x3"])
    assert [(r["kind"], r["rank"], r.get("comm_rank")) for r in recs] == [
        ("nccl_init", 5, 5), ("nccl_init", 5, 1), ("nccl_coll", 5, None), ("nccl_coll", None, None)]


def test_mindformers_loss_monitor_lines():
    """MindFormers' MFLossMonitor (its format in `mindformers/core/callback/callback.py`): the
    epoch's step runs on over the epochs (as the callback counts its summaries' global step),
    the step time in ms, the model's TFLOPS per device, the loss with its mean where the
    dataset is not sunk, the one-element norm with or without its colon; the bar after gives
    nothing, and a norm of two elements is no norm."""
    head = "2025-04-07 15:34:{:02d},308 - [mindformers/core/callback/callback.py:529] - INFO - "
    lines = [head.format(27) + "{ Epoch:[  1/  2], step:[   18/   19], loss: 10.633, per_step_time: 1752ms, lr: 1e-05, "
             "overflow cond: False, loss_scale: 1.0, global_norm: [1.508834], train_throughput_per_npu: 170.738T",
             head.format(27) + "  94.7% |███████████████████████████████████████████████   | 2.28311 samples/s/p  0:00:01 }",
             head.format(29) + "{ Epoch:[  2/  2], step:[    1/   19], loss:[9.673/9.981], per_step_time: 1754ms, "
             "lr: 9.981987e-06, overflow cond: True, loss_scale: 65536.0, global_norm [10.579812]",
             head.format(31) + "{ Epoch:[  2/  2], step:[    2/   19], loss: 9.287, per_step_time: 1756ms, "
             "overflow cond: False, loss_scale: 1.0, global_norm: [1 31049], train_throughput_per_npu: 170.319T"]
    recs, _ = feed_all(lines)
    assert [(r["kind"], r["framework"], r["step"], r["epoch"], r["total_steps"]) for r in recs] == [
        ("progress", "mindformers", 18, 1, 38), ("progress", "mindformers", 20, 2, 38),
        ("progress", "mindformers", 21, 2, 38)]
    first, second, third = recs
    assert (first["loss"], first["step_time_ms"], first["lr"], first["grad_norm"], first["tflops"]) == (
        10.633, 1752.0, 1e-05, 1.508834, 170.738)
    assert first["metrics"] == {"loss_scale": 1.0}
    assert (second["loss"], second["grad_norm"], second["metrics"]) == (9.673, 10.579812, {"loss_scale": 65536.0,
                                                                                           "overflow": 1})
    assert "grad_norm" not in third and "lr" not in third and third["tflops"] == 170.319
