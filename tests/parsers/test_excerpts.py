"""Logs of frameworks outside the corpus, as their users pasted them into public issues
(`tests/data/excerpts/SOURCES.tsv`): LitGPT, Nanotron, torchtune, OLMo, TensorFlow's Object
Detection API, a trainer whose keys are hyphenated, and more.  Each file is read line by line and
in one block, as `ingest` and the log probe read; both must give the same records."""
from __future__ import annotations

from pathlib import Path

import pytest
from pytest import approx

from ridgescope.parsers import Dispatcher
from ridgescope.parsers.template import TeePrefix, guess

from .conftest import feed_all

EXCERPTS = Path(__file__).resolve().parents[1] / "data" / "excerpts"


def read(name: str) -> list[dict]:
    data = (EXCERPTS / name).read_bytes()
    by_line, _ = feed_all(data.splitlines())
    d = Dispatcher()
    in_block = d.feed_chunk(data) + d.flush()
    assert by_line == in_block
    return by_line


def progress(recs: list[dict]) -> list[dict]:
    return [r for r in recs if r["kind"] == "progress"]


def test_every_excerpt_has_its_source():
    listed = {line.split("\t")[0] for line in (EXCERPTS / "SOURCES.tsv").read_text().splitlines()[1:]}
    assert listed == {p.name for p in EXCERPTS.glob("*.log")}
    for line in (EXCERPTS / "SOURCES.tsv").read_text().splitlines()[1:]:
        assert "https://github.com/" in line.split("\t")[1]


def test_litgpt_pretrain_steps_are_optimizer_steps():
    """5 iterations a step: the step is `step`, and the printed time, one iteration's, is no
    step's time."""
    recs = progress(read("litgpt_pretrain_gpt2-124m.log"))
    assert [r["step"] for r in recs] == list(range(610140, 610201, 10))
    assert {r["framework"] for r in recs} == {"litgpt"}
    first = recs[0]
    assert first["loss"] == 2.846 and first["epoch"] == 34
    assert first["metrics"] == {"iter": 3050700, "val_loss": 2.861, "iter_time_ms": 112.2}
    assert not any("step_time_ms" in r for r in recs)


def test_litgpt_finetune_accumulating_iterations_give_no_record():
    """Only the iterations marked `(optimizer.step)` end a step; the validation comes after the
    step its iteration ends (iteration 4800 of 8 a step: step 600)."""
    recs = read("litgpt_finetune_optimizer-step-marks.log")
    assert [(r["kind"], r["step"]) for r in recs] == [
        ("progress", 220), ("progress", 225), ("eval", 600), ("progress", 605)]
    assert recs[0]["loss"] == 1.5947 and recs[0]["metrics"]["iter_time_ms"] == 263.85
    assert recs[2] == {"kind": "eval", "rank": None, "step": 600, "framework": "litgpt",
                       "phase": "result", "duration_ms": 3778.02, "metrics": {"val_loss": 1.7258}}


@pytest.mark.parametrize("lines,want", [
    # lit-gpt 2023: iterations from 0, one a step: the iteration's time is the step's
    (["iter 0 step 1: loss 10.9819, iter time: 1036.84ms (optimizer.step)",
      "iter 1 step 2: loss 10.9613, iter time: 412.50ms (optimizer.step)"],
     [(1, 10.9819, 1036.84), (2, 10.9613, 412.5)]),
    # 2024 on, no accumulation: iter and step move together, and the line is marked
    (["Epoch 1 | iter 7 step 7 | loss train: 1.671, val: n/a | iter time: 156.28 ms (step)"],
     [(7, 1.671, 156.28)]),
    # the first iterations of an accumulating run: step 0 is no step
    (["Epoch 1 | iter 1 step 0 | loss train: 1.657, val: n/a | iter time: 298.27 ms",
      "Epoch 1 | iter 4 step 1 | loss train: 1.585, val: n/a | iter time: 181.34 ms (step)"],
     [(1, 1.585, None)]),
])
def test_litgpt_line_variants(lines, want):
    recs, _ = feed_all(lines)
    assert [(r["step"], r["loss"], r.get("step_time_ms")) for r in recs] == want


def test_litgpt_validation_and_checkpoint():
    recs, _ = feed_all(["iter 8 step 8: loss 2.0, iter time: 100.00ms (optimizer.step)", "Validating ...",
                        "iter 8: val loss 2.1000, val time: 512.00 ms",
                        "Saving checkpoint to '/out/step-00000008/lit_model.pth'"])
    assert [(r["kind"], r.get("phase"), r["step"]) for r in recs] == [
        ("progress", None, 8), ("eval", "result", 8), ("checkpoint", "start", 8)]
    assert recs[1]["duration_ms"] == 512.0
    assert recs[2]["path"] == "/out/step-00000008/lit_model.pth"


def test_nanotron_suffixed_numbers_and_step_time():
    """`11.5K` ms is 11,500 ms; the logger's `[INFO|DP=0|PP=0|TP=0|host]` head gives no metric."""
    recs = progress(read("nanotron_iteration-lines.log"))
    assert [r["step"] for r in recs] == [991, 992, 993, 327281, 327282]
    first, late = recs[0], recs[3]
    assert (first["step_time_ms"], first["loss"], first["total_steps"]) == (272.0, 9.63, 1000)
    assert (first["tokens_per_s"], first["tokens_per_s_per_gpu"], first["tflops"]) == (2350.0, 294.0, 0.00744)
    assert first["metrics"]["consumed_tokens"] == 634_000
    assert first["metrics"]["cuda_max_memory_reserved"] == 570e6
    assert not {"dp", "pp", "tp"} & set(first["metrics"])
    assert (late["step_time_ms"], late["tokens_per_s"], late["tokens_per_s_per_gpu"]) == (11500.0, 22800.0, 11400.0)
    assert late["metrics"]["consumed_tokens"] == approx(85.8e9)
    assert late["total_steps"] == 378950 and late["grad_norm"] == 1.25


def test_torchtune_stdout_logger():
    recs = progress(read("torchtune_stdout-logger.log"))
    assert [(r["step"], r["lr"]) for r in recs] == [(s, 2e-05) for s in range(1, 6)]
    assert recs[0]["loss"] == approx(2.085338592529297)
    assert recs[2]["tokens_per_s_per_gpu"] == approx(655.9372371931469)


def test_olmo_console_metrics():
    recs = read("olmo_console-metrics.log")
    assert [(r["kind"], r["step"], r["framework"]) for r in recs] == [("progress", s, "olmo") for s in (1, 2, 3)]
    one, two = recs[0], recs[1]
    assert (one["loss"], one["grad_norm"], one["total_steps"], one["epoch"]) == (12.18, 231.7, 739328, 0)
    assert one["mem_gb"] == approx(46911 / 1024)
    assert one["metrics"]["train/Perplexity"] == 195153
    assert two["loss"] == approx(1.7872662283480167e-06)
    assert (two["tokens_per_s_per_gpu"], two["it_per_s"]) == (26668, 0.0254)
    assert "step_time_ms" not in two        # a mean over a window of steps


OLMO_CORE = [
    "2025-01-10 12:00:01.000\tnode-1:0\tolmo_core.train.callbacks.console_logger:93\tINFO\t[step=9/100,epoch=0]",
    "2025-01-10 12:00:02.000\tnode-1:0\tolmo_core.train.callbacks.console_logger:93\tINFO\t[step=10/100,epoch=0,eta=0h03m]",
    "    train/CE loss=3.412",
    "    train/PPL=30.32",
    "    optim/total grad norm=0.4513",
    "    optim/LR (group 0)=0.0004",
    "    throughput/device/TPS=41,230",
    "    throughput/device/BPS=2.500",
    "    throughput/device/data loading (s)=0.0021",
    "    throughput/device/MFU=38.20",
    "2025-01-10 12:00:02.400\tnode-1:0\tolmo_core.train.callbacks.console_logger:93\tINFO\t[step=11/100,epoch=0]",
]


def test_olmo_core_console_logger():
    """A bare header at a step with no metrics; BPS is one over the step's time, and the data
    loading time is its input lane."""
    recs, _ = feed_all(OLMO_CORE)
    assert [r["step"] for r in recs] == [9, 10, 11]
    ten = recs[1]
    assert (ten["loss"], ten["grad_norm"], ten["lr"], ten["mfu"]) == (3.412, 0.4513, 0.0004, 38.2)
    assert (ten["tokens_per_s_per_gpu"], ten["it_per_s"], ten["step_time_ms"]) == (41230, 2.5, 400.0)
    assert ten["lanes_ms"] == {"input": 2.1} and ten["metrics"] == {"train/PPL": 30.32}


def test_olmo_evaluation():
    lines = ["2024-08-06 10:00:44 host:0  olmo.train:908  INFO    [step=4/10,epoch=0]",
             "    train/CrossEntropyLoss=2.5",
             "2024-08-06 10:01:44 host:0  olmo.train:1070  INFO    Running evaluation for 'c4_en-validation'...",
             "2024-08-06 10:01:46 host:0  olmo.train:1085  INFO    [eval_step=2/2]",
             "2024-08-06 10:01:46 host:0  olmo.train:1090  INFO    c4_en-validation",
             "    eval/c4_en-validation/CrossEntropyLoss=3.215",
             "2024-08-06 10:01:47 host:0  olmo.train:1026  INFO    Saving checkpoint...",
             "2024-08-06 10:01:49 host:0  olmo.train:1028  INFO    Checkpoint saved to /ckpt/step4"]
    recs, _ = feed_all(lines)
    assert [(r["kind"], r.get("phase"), r["step"]) for r in recs] == [
        ("progress", None, 4), ("eval", "start", 4), ("eval", "result", 4),
        ("checkpoint", "start", 4), ("checkpoint", "end", 4)]
    assert recs[1]["label"] == "c4_en-validation"
    assert recs[2]["metrics"] == {"eval/c4_en-validation/CrossEntropyLoss": 3.215}


def test_hyphenated_keys_and_units_after_a_space():
    recs = progress(read("pithtrain_hyphenated-keys.log"))
    assert [(r["step"], r["step_time_ms"], r["loss"]) for r in recs] == [
        (1, 73352.0, 2.6636), (2, 28823.0, 2.5949), (3, 27786.0, 2.652)]
    first = recs[0]
    assert (first["lr"], first["grad_norm"], first["tokens_per_s"], first["mem_gb"]) == (1e-06, 20.2657, 28590, 63.65)
    assert first["total_steps"] == 15 and first["metrics"] == {"load-balance-loss": 0.001807}


@pytest.mark.parametrize("line,want", [
    ("step 5 | iter time: 263.85 ms | loss 2.1", 263.85),
    ("step: 5, step_time: 1.5 s, loss: 2.1", 1500.0),
    ("step=5 time=120 ms loss=2.1", 120.0),
    ("step 5 loss 2.1 time 0.25", 250.0),          # no unit: seconds, as before
])
def test_a_unit_after_a_space(line, want):
    recs, _ = feed_all([line])
    assert recs[0]["step_time_ms"] == want and recs[0]["loss"] == 2.1


def test_verl_step_line_behind_rays_prefix():
    """The driver's metrics, no rank; `timing_s/step` is the step's time and the rollout, log-prob
    and update phases its compute lane (the reward and advantage phases get none)."""
    (rec,) = read("verl_ppo-step-metrics.log")
    assert (rec["kind"], rec["step"], rec["rank"], rec["framework"]) == ("progress", 4, None, "verl")
    assert (rec["loss"], rec["grad_norm"], rec["mfu"], rec["mem_gb"]) == (0.01, 0.279, 17.7, 106.729)
    assert rec["step_time_ms"] == 1_630_262.0
    assert rec["timers_ms"] == {"gen": 1_400_087.0, "reward": 41_094.0, "old_log_prob": 39_616.0,
                                "ref": 40_340.0, "adv": 813.0, "update_actor": 75_486.0}
    assert rec["lanes_ms"] == {"compute": approx(1_400_087 + 39_616 + 40_340 + 75_486)}
    assert rec["metrics"]["critic/score/mean"] == -0.643 and rec["metrics"]["response_length/max"] == 9723


def test_verl_validation_is_an_evaluation():
    (rec,) = read("verl_validation-before-training.log")
    assert (rec["kind"], rec["phase"], rec["step"]) == ("eval", "result", 0)
    assert rec["metrics"]["val-core/openai/gsm8k/acc/mean@1"] == 0.508


def test_verl_line_with_validation_and_checkpoint_phases():
    line = ("step:20 - actor/pg_loss:-0.004 - actor/grad_norm:0.5 - val-core/gsm8k/acc/mean@1:0.71 - "
            "timing_s/gen:30.0 - timing_s/update_weights:2.5 - timing_s/update_actor:10.0 - "
            "timing_s/testing:15.0 - timing_s/save_checkpoint:8.0 - timing_s/step:66.0")
    recs, _ = feed_all([line])
    assert [(r["kind"], r["step"]) for r in recs] == [("progress", 20), ("eval", 20)]
    assert recs[0]["step_time_ms"] == 66_000.0
    assert recs[0]["lanes_ms"] == {"compute": 40_000.0, "communication": 2_500.0, "checkpoint": 8_000.0}
    assert recs[1]["metrics"] == {"val-core/gsm8k/acc/mean@1": 0.71}


def test_ms_swift_log_dicts_name_their_step():
    """ms-swift's dicts carry `'global_step/max_steps': '78/176'`, its memory and its speed."""
    recs = read("ms-swift_dpo-log-dicts.log")
    assert [(r["step"], r["total_steps"], r["framework"]) for r in recs] == [(78, 176, "hf_trainer"),
                                                                            (79, 176, "hf_trainer")]
    first = recs[0]
    assert (first["loss"], first["lr"], first["mem_gb"], first["it_per_s"]) == (0.21932983, 6.8e-07, 63.16, 0.011239)
    assert first["epoch"] == 0.89 and first["rewards_margins"] == 10.0625


def test_metric_logger_under_mpirun_and_a_timestamp():
    """DeiT's MetricLogger: the step is the run's (epoch 2 of 1251 batches, batch 150 from 0);
    `time` and `data` (20-iteration means) give the step's time and input lane, `max mem` MB."""
    recs = progress(read("deit_metric-logger_mpirun-timestamps.log"))
    assert [r["step"] for r in recs] == [2 * 1251 + i + 1 for i in range(150, 201, 10)]
    first = recs[0]
    assert (first["rank"], first["epoch"], first["iter_in_epoch"], first["iters_per_epoch"]) == (0, 2, 150, 1251)
    assert (first["loss"], first["lr"], first["step_time_ms"]) == (6.861, 0.000201, 1055.2)
    assert first["lanes_ms"] == {"input": 3.5} and first["mem_gb"] == approx(8249 / 1024)


def test_metric_logger_to_the_epoch_end():
    recs = read("mae_metric-logger_epoch-end.log")
    assert [r["step"] for r in recs] == [2 * 208 + i + 1 for i in (40, 60, 80, 100, 120, 140, 160, 180, 200, 207)]
    assert recs[-1]["loss"] == 0.3961 and recs[-1]["step_time_ms"] == 117.4


def test_metric_logger_evaluation():
    recs, _ = feed_all([
        "Epoch: [0]  [ 9/10]  eta: 0:00:01  lr: 0.1  loss: 6.9 (6.9)  time: 0.5000  data: 0.0100  max mem: 100",
        "Test:  [ 0/50]  eta: 0:00:20  loss: 6.5 (6.5)  acc1: 1.0 (1.0)  acc5: 5.0 (5.0)  time: 0.4  data: 0.3  max mem: 100",
        "Test:  [49/50]  eta: 0:00:00  loss: 6.4 (6.4)  acc1: 1.2 (1.1)  acc5: 5.2 (5.1)  time: 0.1  data: 0.0  max mem: 100",
        "* Acc@1 1.100 Acc@5 5.100 loss 6.420"])
    assert [(r["kind"], r.get("phase"), r["step"]) for r in recs] == [
        ("progress", None, 10), ("eval", "start", 10), ("eval", "result", 10)]
    assert recs[2]["metrics"] == {"acc1": 1.1, "acc5": 5.1, "loss": 6.42}


def test_torchvision_evaluation_results():
    recs = read("torchvision-reference_evaluate-results.log")
    assert [(r["kind"], r["phase"], r["metrics"]) for r in recs] == [
        ("eval", "result", {"acc1": 78.392, "acc5": 93.592}), ("eval", "result", {"acc1": 76.092, "acc5": 92.656})]


@pytest.mark.parametrize("line, metrics", [
    ("Test:  Acc@1 76.130 Acc@5 92.862", {"acc1": 76.13, "acc5": 92.862}),
    ("Test: EMA Acc@1 76.2 Acc@5 92.9", {"acc1": 76.2, "acc5": 92.9}),
    (" * Acc@1 76.130 Acc@5 92.862", {"acc1": 76.13, "acc5": 92.862}),
    ("====Test:  Acc@1 70.3;  Acc@5 89.8;  loss 1.234", {"acc1": 70.3, "acc5": 89.8, "loss": 1.234}),
    ("Test Acc@1 55.000", {"acc1": 55.0}),
])
def test_accuracy_results_after_a_metric_logger_epoch(line, metrics):
    """The step of the result is the last training step read; a batch's own `Acc@1 45.0 (76.4)`
    (its value and the mean so far) is no result."""
    recs, _ = feed_all([
        "Epoch: [0]  [ 9/10]  eta: 0:00:01  lr: 0.1  loss: 6.9 (6.9)  time: 0.5000  data: 0.0100  max mem: 100",
        "Test: [ 10/50]\tTime 0.036 (0.039)\tLoss 2.6388 (0.9189)\tAcc@1 45.000 (76.451)\tAcc@5 55.000 (93.474)",
        line])
    results = [r for r in recs if r.get("phase") == "result"]
    assert [(r["step"], r["metrics"]) for r in results] == [(10, metrics)]


def test_swin_meter_lines():
    """`Train: [30/300][400/2859]`: epoch 30 (from 0) of 300; `time` is the step's own, `eta` and
    `lr` share a tab-separated item, `mem` is MB."""
    recs = progress(read("swin-style_train-meter_epoch-of-total.log"))
    assert [r["step"] for r in recs] == [30 * 2859 + i + 1 for i in (400, 410, 420)]
    first = recs[0]
    assert (first["step_time_ms"], first["loss"], first["lr"], first["grad_norm"]) == (426.0, 2.3499, 0.000872, 2.2358)
    assert first["lanes_ms"] == {"input": 0.7} and first["mem_gb"] == approx(16138 / 1024)
    assert first["metrics"] == {"wd": 0.05, "model time": 0.4253}


def test_detectron2_printer():
    """Detectron2's `time` is the run's mean so far: no step time; `max_mem` M is MB."""
    recs = progress(read("detectron2_events.log"))
    assert [r["step"] for r in recs] == [1259, 1279, 19, 119, 197900]
    assert [r["loss"] for r in recs] == [1.012, 0.971, 1.36, 9.214, 0.035]
    assert not any("step_time_ms" in r for r in recs)
    assert recs[0]["metrics"]["time_mean_ms"] == 332.2 and recs[0]["mem_gb"] == approx(3961 / 1024)


def test_detectron2_printer_with_the_steps_own_times():
    line = ("[06/01 10:00:00 d2.utils.events]:  eta: 0:10:00  iter: 99  total_loss: 1.2  loss_cls: 0.5  "
            "time: 0.3000  last_time: 0.9100  data_time: 0.0100  last_data_time: 0.6000   lr: 0.001  max_mem: 3.96 GB")
    (rec,), _ = feed_all([line])
    assert (rec["step"], rec["step_time_ms"], rec["lanes_ms"], rec["mem_gb"]) == (99, 910.0, {"input": 600.0}, 3.96)
    assert rec["metrics"] == {"loss_cls": 0.5, "time_mean_ms": 300.0}


def test_dlrm_lines():
    recs = read("dlrm_training-and-testing.log")
    assert [(r["kind"], r["step"], r["framework"]) for r in recs if r["kind"] != "checkpoint"] == [
        ("progress", s, "dlrm") for s in (1024, 2048, 3072, 4096, 1000)]
    assert (recs[0]["step_time_ms"], recs[0]["loss"], recs[0]["metrics"]) == (15.12, 0.476438, {"accuracy": 78.931})
    tests, _ = feed_all(["Testing at - 2048/4096 of epoch 1, loss 0.455, accuracy 79.900 %, best 79.900 %"])
    assert tests == [{"kind": "eval", "rank": None, "step": 4096 + 2048, "framework": "dlrm", "phase": "result",
                      "metrics": {"loss": 0.455, "accuracy": 79.9, "best": 79.9}}]


def test_torchtune_bar_behind_a_role_rank_and_local_rank_prefix():
    """torchtune's bar label holds the run's step and its loss (`1|26|Loss: 1.2436`); tqdm draws
    a step's count first under the step before's label, so a step keeps the times it was first
    drawn with.  Its multi-node runs' prefix (`[trainer0|0]:`) is guessed from the log."""
    data = (EXCERPTS / "torchtune_multinode-bar_role-prefix.log").read_bytes()
    template = guess(data)
    assert template == "[${role_name}${rank}|${local_rank}]:"
    d = Dispatcher(tee_prefix=TeePrefix(template))
    recs = d.feed_chunk(data) + d.flush()
    assert [(r["rank"], r["step"]) for r in recs] == [(0, s) for s in range(25, 32)]
    by_step = {r["step"]: r for r in recs}
    assert (by_step[26]["loss"], by_step[26]["epoch"], by_step[26]["elapsed_s"]) == (1.2436443567276, 1, 405.0)
    assert (by_step[27]["loss"], by_step[27]["elapsed_s"]) == (1.1958776712417603, 420.0)


def test_yolox_lines():
    """`epoch: 8/40, iter: 1340/1816` in a log that starts at epoch 8: whether the iteration is
    the epoch's is not known before an epoch ends, so the step is as printed; loguru's
    `| yolox.core.trainer:246 - ` gives no metric; `mem: 34235Mb`, `data_time` the input lane."""
    recs = progress(read("yolox_trainer-lines.log"))
    assert [(r["step"], r["epoch"]) for r in recs] == [(i, 8) for i in (1340, 1350, 1360, 1370)]
    first = recs[0]
    assert (first["step_time_ms"], first["loss"], first["lanes_ms"]) == (1270.0, 98.0, {"input": 548.0})
    assert first["mem_gb"] == approx(34235 / 1024)
    assert "yolox.core.trainer" not in first["metrics"] and first["metrics"]["iou_loss"] == 4.6


def test_iterations_of_an_epoch_run_on_across_epochs():
    """Once an epoch begins with a lower iteration, the iteration is the epoch's: the step
    runs on (YOLOX's lines; epochs from 1, or from 0 where the stream shows an epoch 0)."""
    line = "2021-10-18 20:51:36 | INFO | yolox.core.trainer:246 - epoch: {}/40, iter: {}/1816, iter_time: 1.270s, total_loss: 98.0"
    recs, _ = feed_all([line.format(e, i) for e, i in ((8, 1810), (9, 10), (9, 20))])
    assert [r["step"] for r in recs] == [1810, 8 * 1816 + 10, 8 * 1816 + 20]
    assert (recs[1]["iter_in_epoch"], recs[1]["iters_per_epoch"], recs[1]["total_steps"]) == (10, 1816, 72640)
    recs, _ = feed_all([f"epoch: {e}/3, iter: {i}/2, loss: 1.0, iter_time: 0.5s" for e in range(3) for i in (1, 2)])
    assert [r["step"] for r in recs] == [1, 2, 3, 4, 5, 6]


def test_paddle_suites_batch_and_reader_cost():
    """The Paddle suites' `batch_cost` is the batch's seconds, `reader_cost` its wait for data,
    `ips` samples/s; PaddleSeg's `iter: 20/500` counts the run's iterations."""
    ocr = progress(read("paddleocr-style_openrec.log"))
    assert [(r["step"], r["step_time_ms"], r["lanes_ms"]["input"], r["samples_per_s"]) for r in ocr] == [
        (100, 180.23, 9.71, 355.10891), (110, 181.64, 10.58, 352.35357)]
    seg = progress(read("paddleseg_train.log"))
    assert [(r["step"], r["total_steps"], r["step_time_ms"], r["lanes_ms"]["input"]) for r in seg] == [
        (20, 500, 534.4, 72.73), (40, 500, 348.3, 2.05), (60, 500, 353.2, 2.04)]


def test_paddlenlp_trainer_dicts_name_their_step():
    recs = progress(read("paddlenlp_trainer-dicts.log"))
    assert [(r["step"], r["loss"], r["epoch"]) for r in recs] == [(150, 0.1856, 2.0), (160, 0.1202, 2.13),
                                                                  (170, 0.1087, 2.27)]


def test_the_pytorch_tutorials_epoch_and_step_in_brackets():
    recs, _ = feed_all(["Epoch [1/5], Step [100/600], Loss: 0.2345", "Epoch [1/5], Step [600/600], Loss: 0.1345",
                        "Epoch [2/5], Step [100/600], Loss: 0.1045"])
    assert [(r["step"], r["epoch"], r["loss"]) for r in recs] == [(100, 1, 0.2345), (600, 1, 0.1345), (700, 2, 0.1045)]
    assert recs[2]["total_steps"] == 3000


def test_a_step_that_runs_on_into_the_next_epoch_is_the_runs():
    """`epoch 2/3 step 400/900` after `epoch 1/3 step 300/900`: the step did not start again
    with the epoch, so it (and its total) is the run's; a log that starts later (a resumed run)
    keeps its steps rising."""
    recs, _ = feed_all(["epoch 1/3 step 300/900 loss 2.0", "epoch 2/3 step 400/900 loss 1.9",
                        "epoch 3/3 step 700/900 loss 1.8"])
    assert [(r["step"], r["epoch"], r.get("total_steps")) for r in recs] == [(300, 1, None), (400, 2, 900), (700, 3, 900)]
    recs, _ = feed_all(["epoch 2/3 step 400/900 loss 1.9", "epoch 3/3 step 700/900 loss 1.8"])
    assert [r["step"] for r in recs] == [400, 700]


def test_ultralytics_bars_under_their_column_header():
    """Each epoch's final bar: the batch counts in its epoch (16 an epoch), its values are the
    header's columns; the validation bar after it is no training step, and the `all` line after
    that is the validation's result, named by the validation bar's label."""
    recs = read("ultralytics_yolov8_epoch-bars.log")
    results = [(r["step"], r["metrics"]) for r in recs if r["kind"] == "eval"]
    recs = progress(recs)
    assert [(r["step"], r["epoch"]) for r in recs] == [(69 * 16 + 16, 70), (70 * 16 + 16, 71), (71 * 16 + 16, 72)]
    assert [step for step, _ in results] == [r["step"] for r in recs]
    assert results[0][1] == {"images": 722, "instances": 1444, "box/P": 0.989, "box/R": 0.99, "box/mAP50": 0.993,
                             "box/mAP50-95": 0.681}
    first = recs[0]
    assert (first["loss"], first["mem_gb"], first["it_per_s"], first["total_steps"]) == (2.6356, 6.73, 2.78, 16000)
    assert first["metrics"] == {"box_loss": 1.081, "cls_loss": 0.4706, "dfl_loss": 1.084, "instances": 10.0,
                                "size": 640.0}


def test_ultralytics_redraws_run_on_across_epochs():
    """Ultralytics sets a batch's losses before the bar counts it: `0/2` with the first batch's
    losses, then `1/2` with the same, then `1/2` with the second's, then `2/2`."""
    header = "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size"
    frames = [(0, 1), (1, 1), (1, 2), (2, 2)]   # (the bar's count, the batch whose losses it shows)
    bars = "\r".join(f"      {e}/2      1.2G      1.{b}      2.0      1.5         32        640:  {50 * n}%|█     | "
                     f"{n}/2 [00:0{n}<00:00,  1.00it/s]" for e in (1, 2) for n, b in frames)
    recs, _ = feed_all([header, bars])
    assert [(r["step"], r["epoch"], r["loss"]) for r in recs] == [(1, 1, 4.6), (2, 1, 4.7), (3, 2, 4.6), (4, 2, 4.7)]


def test_tf_slim_steps_printed_twice_give_one_record_each():
    """TF-slim's `global step N: loss = X (T sec/step)`, each line printed by two handlers: one
    record a step, with the step's own time; the counters between give nothing."""
    recs = read("tf-slim_object-detection_printed-twice.log")
    assert [(r["kind"], r["step"]) for r in recs] == [("progress", n) for n in range(1, 9)]
    assert {r["framework"] for r in recs} == {"tensorflow"}
    assert (recs[0]["step_time_ms"], recs[0]["loss"]) == (57126, 79.3501)     # the first step's setup
    assert (recs[4]["step_time_ms"], recs[4]["loss"]) == (20205, 62.5264)


def test_tf_object_detection_v2_through_two_loggers():
    """model_lib_v2's `Step N per-step time Ts loss=X`, through TensorFlow's logger and absl's:
    one record each 100 steps, with the time of the step it follows."""
    recs = read("tf-object-detection-v2_model-lib-v2_per-step-time.log")
    assert [r["step"] for r in recs] == list(range(100, 900, 100))
    assert [r["step_time_ms"] for r in recs[:3]] == [813, 831, 844]
    assert (recs[-1]["loss"], recs[-1]["framework"]) == (2.155, "tensorflow")


def test_fairseq_simple_format_steps_are_updates():
    """fairseq's default format off a terminal: the step is `num_updates`, not the batch of the
    epoch before it (`epoch 001:    100 / 1975`)."""
    recs = read("fairseq_simple_train-inner.log")
    assert [(r["kind"], r["step"]) for r in recs] == [("progress", n) for n in range(100, 501, 100)]
    first = recs[0]
    assert {r["framework"] for r in recs} == {"fairseq"}
    assert (first["loss"], first["lr"], first["grad_norm"], first["epoch"]) == (12.834, 1.009, 1.448, 1)
    assert (first["it_per_s"], first["tokens_per_s"], first["bsz"], first["train_wall"]) == (2.15, 130830, 1960, 48)


def test_fairseq_before_0_9_epoch_means_and_validations():
    """The releases before 0.9 name no logger: an epoch's means are a summary at its last
    update, a validation an evaluation whose `valid_` keys lose their prefix."""
    recs = read("fairseq_legacy_epoch-summary-valid.log")
    assert [(r["kind"], r["step"], r.get("summary")) for r in recs] == [
        ("progress", 21896, True), ("eval", 21896, None), ("progress", 22897, None),
        ("progress", 23897, None), ("progress", 24633, True), ("eval", 24633, None)]
    valid = recs[1]
    assert (valid["loss"], valid["epoch"], valid["subset"], valid["phase"]) == (6.43844, 8, "valid", "result")
    assert valid["metrics"] == {"nll_loss": 5.23288, "ppl": 37.61, "best": 6.43844}
    assert (recs[4]["loss"], recs[4]["wall"]) == (6.233, 5195)


def test_fairseq_hydra_validation_then_a_timed_save():
    """fairseq-hydra-train's logger prefix, a validation's JSON result (its task's scores kept),
    then the save: begun at update 85, and the time its writer took."""
    recs = read("fairseq_hydra-train_validation-checkpoint.log")
    assert [(r["kind"], r["step"], r["phase"]) for r in recs] == [
        ("eval", None, "start"), ("eval", 85, "result"), ("checkpoint", 85, "start"),
        ("checkpoint", 85, "end"), ("checkpoint", 85, "end")]
    assert recs[1]["loss"] == 729.494 and recs[1]["metrics"]["wer"] == 100.393
    assert {r["path"] for r in recs[2:]} == {"checkpoints/checkpoint_best.pt"}
    assert [r.get("duration_ms") for r in recs[2:]] == [None, None, approx(3387.64, abs=0.01)]


def test_metaseq_save_timed_by_its_writer():
    recs = read("metaseq_checkpoint-save.log")
    saves = [r for r in recs if r["kind"] == "checkpoint"]
    assert [(r["step"], r["action"], r["phase"]) for r in saves] == [
        (10, "save", "start"), (10, "save", "start"), (10, "save", "end"), (10, "save", "end")]
    assert saves[3]["duration_ms"] == approx(1219.46, abs=0.01)
    assert saves[3]["path"].endswith("/checkpoint_10-model_part-0-shard0.pt")
    assert recs[-1]["kind"] == "eval" and recs[-1]["phase"] == "start"
    assert recs[-1]["subset"] == "valid/thread_<redacted>_downsample"


def test_fairseq_moe_two_shards_saved_then_the_epoch_means():
    recs = read("fairseq-moe_json_checkpoint-save.log")
    saves = [r for r in recs if r["kind"] == "checkpoint"]
    assert [(r["phase"], r.get("path")) for r in saves] == [
        ("start", None), ("start", "./checkpoint_last-rank-0-shard0.pt"), ("end", "./checkpoint_last-rank-0-shard0.pt"),
        ("start", "./checkpoint_last-shared-shard0.pt"), ("end", "./checkpoint_last-shared-shard0.pt"),
        ("end", "./checkpoint_last-rank-0-shard0.pt")]
    assert {r["step"] for r in saves} == {25}
    assert [r.get("duration_ms") for r in saves][-1] == approx(49164.28, abs=0.01)
    means = progress(recs)
    assert len(means) == 1 and means[0]["summary"] is True
    assert (means[0]["step"], means[0]["loss"], means[0]["it_per_s"], means[0]["grad_norm"]) == (25, 17.131, 0.11, 12.484)


def errors(name: str) -> list[tuple]:
    return [(r["rank"], r["error"], r.get("seq"), r.get("last_enqueued"), r.get("last_completed"),
             r.get("timed_out_rank")) for r in read(name) if r["kind"] == "error"]


def test_nccl_watchdog_says_which_rank_timed_out_and_how_far_each_got():
    """Rank 2 is told (the dump signal) that rank 6 timed out; rank 7 times out at collective
    460631 and says it had completed the one before: one error a line, with the numbers that
    tell the ranks apart."""
    assert errors("openrlhf_nccl-timeout_dump-signal.log") == [
        (2, "nccl_dump", None, 460631, 460630, 6), (7, "nccl_timeout", 460631, None, None, None),
        (7, "nccl_watchdog", 460631, 460631, 460630, None)]
    assert errors("prime-rl_nccl-alltoall-timeout_rank0.log") == [(0, "nccl_dump", None, 1261, 1259, 13)]
    assert errors("accelerate_nccl-timeout_local-rank-dump.log") == [(1, "nccl_dump", None, 22, 21, 1)]


def test_nccl_watchdog_status_of_each_pytorch_release():
    """Earlier releases' `Timeout at NCCL work` in process group 1 (not the default: its rank is the
    launcher's), and later releases' `failure detected by watchdog at work sequence id`."""
    assert errors("llamafactory_nccl-timeout_pg1.log") == [
        (rank, "nccl_watchdog", 7753, 7755, 7752, None) for rank in (0, 2, 6)]
    recs = [r for r in read("llamafactory_nccl-timeout_pg1.log") if r["kind"] == "error"]
    assert {(r["pg_id"], r.get("pg_name")) for r in recs} == {(1, None)}
    assert errors("arctictraining_nccl-timeout_watchdog-status.log") == [
        (5, "nccl_watchdog", 120049, 120051, 120048, None)]


def test_nccl_heartbeat_monitor_ends_a_rank_whose_watchdog_hung():
    recs = [r for r in read("arctictraining_nccl-heartbeat_watchdog-stuck.log") if r["kind"] == "error"]
    assert [(r["rank"], r["error"]) for r in recs] == [(7, "nccl_heartbeat"), (2, "nccl_timeout")]
    assert (recs[0]["stuck_s"], recs[0]["pg_id"], recs[0]["pg_name"], recs[0]["pg_rank"]) == (480, 0, "default_pg", 7)


def test_megatron_gradient_check_names_the_rank_whose_gradients_went_bad():
    """Megatron checks each rank's gradients before they are reduced: the rank it names (the
    job's, whatever the line's prefix), its node and device."""
    (first,) = read("pai-megatron-patch_nan-grad-norm_assertion.log")
    assert (first["kind"], first["error"], first["rank"], first["device"]) == ("error", "nan_inf", 11, 3)
    assert "severity" not in first         # fatal, not a warning
    (second,) = read("nemo2_nan-grad-norm_rerun-state-machine.log")
    assert (second["error"], second["rank"], second["host"], second["device"]) == ("nan_inf", 2, "dcfai-xe9680-01", 2)


def test_nccl_link_failures_name_the_peer_once_a_link():
    """NCCL's warnings of a failed link name the peer at its other end: one `nccl_net` error a
    peer and failure, with the host and device that saw it (each connection's and channel's
    repeat of it is no new failure); a warning that names no peer stays `nccl_warn`."""
    (ib,) = read("nccl_ib-completion-error_retries-exceeded.log")
    assert (ib["error"], ib["peer"], ib["ib_status"], ib["vendor_err"], ib["direction"]) == (
        "nccl_net", "10.216.210.236", 12, 129, "Recv")
    assert (ib["host"], ib["device"]) == ("kp-ddp-worker-0", 4)
    (reset,) = read("nccl-tests_socket-recv-reset-by-peer.log")
    assert (reset["peer"], reset["reason"], reset["host"]) == ("11.1.128.128", "Connection reset by peer", "dgxh100-4")
    recs = read("nccl-tests_socket-connect-abort_peer-closed.log")
    assert [(r["error"], r.get("peer"), r.get("reason")) for r in recs] == [
        ("nccl_net", "10.0.0.2", "Software caused connection abort"), ("nccl_warn", None, None),
        ("nccl_net", "node1", "Connection closed by remote peer"), ("nccl_warn", None, None)]


def test_loss_scaler_overflows_are_skipped_steps_with_the_scale_they_left():
    """fairseq's and apex amp's overflow messages, one skipped step each: a warning with the loss
    scale the scaler goes on with, at the step the rank had reached."""
    recs = read("fairseq_fp16-overflow_min-scale-warnings.log")
    overflows = [r for r in recs if r["kind"] == "error"]
    assert {(r["error"], r["severity"], r["step"]) for r in overflows} == {("loss_scale_overflow", "warning", 10198)}
    assert [r["new_loss_scale"] for r in overflows] == [0.5 / 2 ** n for n in range(1, 13)]
    note, step = read("fairseq_fp16-overflow_loss-scale-note.log")
    assert (note["error"], note["new_loss_scale"], step["step"], step["loss_scale"]) == (
        "loss_scale_overflow", 1024.0, 3600, 1399.0)
    ofa = read("ofa_fairseq-trainer_gradient-overflow-notes.log")
    assert [r["new_loss_scale"] for r in ofa] == [64.0, 32.0, 16.0, 8.0, 4.0, 2.0, 1.0]
    amp = read("apex-amp_gradient-overflow_tiny-scales.log")
    assert len(amp) == 14 and {r["error"] for r in amp} == {"loss_scale_overflow"}
    assert amp[0]["new_loss_scale"] == 8.165126103939127e-202 and amp[-1]["new_loss_scale"] == 9.967194951097568e-206


def test_espnet_tutorial_lines_from_epoch_2_on():
    """ESPnet's tutorial quotes a log from its second epoch on, with no results line: the epoch
    before is counted as long as this one's last printed batch (steps 30 and 40, inferred)."""
    recs = read("espnet_tutorial_train-log.log")
    assert [(r["step"], r["epoch"], r["iter_in_epoch"], r["step_inferred"]) for r in recs] == [
        (30, 2, 10, True), (40, 2, 20, True)]
    assert (recs[0]["loss"], recs[0]["lr"], recs[0]["step_time_ms"]) == (50.873, 1.0, 203.0)
    assert recs[1]["lanes_ms"] == {"input": approx(0.0428), "compute": 129.0}
    assert recs[1]["timers_ms"] == {"data": approx(0.0428), "forward": 68.0, "backward": 55.0, "optimizer": 6.0}
    assert recs[0]["metrics"] == {"loss_att": 35.801, "loss_ctc": 65.945, "acc": 0.471}


def test_icefall_zipformer_line_names_its_rank():
    """Every rank logs to the console behind `(R/W)`: the rank of a line no launcher labels.
    Zipformer's `ScheduledFloat: ..., batch_count=152746.67, ans=0.2` lines are no steps."""
    recs = read("icefall_zipformer_grad-scale-small_8gpu.log")
    (r,) = recs
    assert (r["framework"], r["rank"], r["step"], r["epoch"], r["iter_in_epoch"]) == ("icefall", 7, 14301, 1, 14300)
    assert (r["loss"], r["lr"], r["loss_scale"]) == (0.6675, 0.0273, 6.103515625e-05)
    assert r["metrics"] == {"simple_loss": 0.6511, "pruned_loss": 0.2501, "ctc_loss": 0.4594, "frames": 19153.0,
                            "tot_loss": 0.6085, "batch_size": 130}
    assert "step_inferred" not in r


def test_icefall_2022_recipes_count_batches_from_the_first_epoch():
    """April 2022's lines count epochs from 0 and print no lr; June's from 1, with lr: the
    step is the batch + 1 of the log's first epoch, exact."""
    recs = read("icefall_conformer-ctc_2022.log")
    assert [(r["step"], r["epoch"], r["loss"]) for r in recs] == [
        (501, 0, 0.7423), (551, 0, 1.007), (601, 0, 1.043), (651, 0, 1.027), (701, 0, 0.8798)]
    assert recs[0]["metrics"]["att_loss"] == 0.7367 and "lr" not in recs[0]
    recs = read("icefall_pruned-transducer-stateless5_aishell4.log")
    assert [(r["step"], r["lr"], r["metrics"]["batch_size"]) for r in recs] == [
        (6, 0.003, 18), (7, 0.003, 22), (8, 0.003, 29), (9, 0.003, 18), (10, 0.003, 25)]


def test_zipvoice_prints_its_global_batch_index():
    recs = read("zipvoice_train_wrapper-clocks.log")
    assert [(r["step"], r["iter_in_epoch"], r["loss"], r["lr"], r["loss_scale"]) for r in recs] == [
        (50, 49, 0.06789, 0.0001, 65536.0), (100, 99, 0.07778, 0.0001, 65536.0), (150, 149, 0.07169, 0.0001, 65536.0)]


def test_icefall_validation_lines_are_evaluations_of_rank_0():
    recs = read("icefall_zipformer_validation-lines_grep.log")
    assert [(r["kind"], r["rank"], r["epoch"]) for r in recs] == [
        ("eval", 0, e) for e in (23, 24, 24, 25, 25, 26, 26, 27)]
    assert recs[0]["metrics"] == {"loss": 0.1505, "simple_loss": 0.2502, "pruned_loss": 0.02537, "frames": 944034.0}


def test_llama2c_steps_and_the_evaluation_inside_a_step():
    """llama2.c's `N | loss .. | lr .. | ..ms | mfu ..%`: the step logged after an evaluation
    and its checkpoint took their time too (870 s against ~8.5), with the evaluation and the
    save at that step."""
    recs = read("llama2c_train-py_tinystories_mps.log")
    prog = progress(recs)
    assert [r["step"] for r in prog] == list(range(490, 660, 10))
    assert {r["framework"] for r in recs} == {"nanogpt"}
    first = prog[0]
    assert (first["loss"], first["lr"], first["step_time_ms"], first["mfu"]) == (5.7543, 4.9e-05, 8060.78, 0.21)
    slow = [r["step"] for r in prog if r["step_time_ms"] > 100_000]
    assert slow == [500, 600]
    evals = [(r["step"], r["loss"], r["train_loss"]) for r in recs if r["kind"] == "eval"]
    assert evals == [(500, 5.9544, 5.7373), (600, 5.8008, 5.5033)]
    assert [r["step"] for r in recs if r["kind"] == "checkpoint"] == [500, 600]
    # both ran at the top of iteration 500 (600), inside the time its line prints
    assert all(r["before_step"] for r in recs if r["kind"] in ("eval", "checkpoint"))
    assert all(r["step_time_wall"] for r in prog)


def test_tokens_per_gpu_in_slashed_words():
    """`tokens/gpu/sec` is a rate per GPU; `test loss` another loss, kept among the metrics."""
    prog = progress(read("modula_train-gpt_tokens-per-gpu.log"))
    assert [r["step"] for r in prog] == list(range(10, 120, 10))
    assert (prog[0]["loss"], prog[0]["tokens_per_s_per_gpu"], prog[0]["mfu"]) == (3.11, 9378.4, 63.91)
    assert prog[-1]["metrics"] == {"test_loss": 2.61} and "tokens_per_s" not in prog[-1]


def test_llamafactory_trainer_log_jsonl():
    """LLaMA-Factory's own log file, ingested to back-fill a run: `current_steps` is the step,
    a `null` is no value, and the elapsed time of the run (`5:13:22`) is no step time."""
    prog = progress(read("llamafactory_trainer-log-jsonl_last-steps.log"))
    assert [(r["step"], r["total_steps"], r.get("loss")) for r in prog] == [
        (3200, 3235, 4.4671), (3210, 3235, 4.4577), (3220, 3235, 4.4458), (3230, 3235, 4.4598), (3235, 3235, None)]
    assert prog[0]["lr"] == approx(1.4439610072863874e-08) and prog[0]["epoch"] == 0.99
    assert not any("step_time_ms" in r for r in prog)


def test_deepspeed_old_breakdown_with_zero_optimizer_timers():
    """DeepSpeed before 0.10 names the rank inside the line (`rank=0 time (ms) | forward: ..`);
    the micro-batch lines give nothing, each step's line one timing record.  ZeRO's optimizer
    timers, printed before the step's line (here glued to the bar's redraw), join that step:
    their all-gather, inside `step`, is communication, not compute."""
    recs = read("deepspeed-0.5_wall-clock-breakdown_rank-equals_hf-bar.log")
    timing = [r for r in recs if r["kind"] == "timing"]
    assert [(r["rank"], r["step"]) for r in timing] == [(0, 1), (0, 2)]
    assert timing[0]["lanes_ms"] == {"compute": approx(316.0 + 514.96 + 663.59), "communication": 232.28}
    second = timing[1]
    assert second["timers_ms"]["optimizer_allgather"] == 3.3 and second["timers_ms"]["step"] == 659.09
    assert second["lanes_ms"] == {"compute": approx(316.87 + 514.24 + 659.09 - 3.3),
                                  "communication": approx(226.67 + 3.3)}


def test_unsloth_banner_names_the_trainer_and_its_bar():
    """Unsloth logs its own banner in place of the Trainer's: its last line of numbers names
    the Trainer, whose bar (of the banner's 312 steps, so the training's) then gives the steps.
    Unsloth's `step, loss` print after each redraw is no step of its own."""
    recs = read("unsloth-2024.10_banner_bar-with-step-loss-prints.log")
    assert [(r["kind"], r["framework"], r["step"], r["total_steps"]) for r in recs] == [
        ("progress", "hf_trainer", step, 312) for step in range(1, 82, 10)]
    assert recs[0]["it_per_s"] == approx(1 / 25.72, rel=1e-4) and recs[0]["elapsed_s"] == 25


def test_nemo_rl_timing_block_gives_the_step_s_lanes():
    """NeMo RL's step block with no header before it: one record, its total step time the step's
    time, its phases the lanes (generation, log-probs and training compute; the batch's sampling
    and processing input; the weights' sync communication; the rest none)."""
    (rec,) = read("nemo-rl_grpo-async_training-results-timing.log")
    assert (rec["kind"], rec["framework"], rec["step"], rec["loss"]) == ("progress", "nemo_rl", None, 0.1032)
    assert rec["step_time_ms"] == 66550 and len(rec["timers_ms"]) == 8
    assert rec["timers_ms"]["exposed_generation"] == 32520 and rec["timers_ms"]["training_prep"] == 1060
    assert rec["lanes_ms"] == {"compute": approx(32520 + 25050 + 4780), "input": approx(1380 + 230),
                               "communication": 130}
    assert rec["metrics"] == {"avg_reward": 0.3486, "buffer_size": 64}


def test_nemo_rl_validation_inside_a_step():
    """A validation's bullets, printed deeper inside step 2 of 2: one eval record at that step,
    after the warnings printed among its lines."""
    (rec,) = read("nemo-rl_dpo_step-validation-results.log")
    assert (rec["kind"], rec["framework"], rec["step"], rec["phase"], rec["loss"]) == (
        "eval", "nemo_rl", 2, "result", 0.6645)
    assert rec["metrics"] == {"sft_loss": 0.0, "preference_loss": 0.6645, "accuracy": 1.0,
                              "rewards_chosen_mean": 0.7755}


def test_prime_rl_step_lines():
    """prime-rl's `Step N | Time: 0.60s | ... | Throughput: 3324 tokens/s`: a step's time, and a
    throughput in tokens, its unit after a space."""
    prog = progress(read("prime-rl_sft-trainer_step-lines.log"))
    assert [(r["step"], r["step_time_ms"]) for r in prog] == [(0, 5130), (1, 600), (2, 350), (3, 360), (4, 360)]
    first = prog[1]
    assert (first["loss"], first["grad_norm"], first["lr"], first["mfu"]) == (12.3125, 28.4812, 1e-06, 1.0)
    assert first["tokens_per_s"] == 3324 and "samples_per_s" not in first


def test_minimind_epochs_counted_from_0():
    """MiniMind's 2024 lines: the epoch and its step both from 0, every 100th step logged;
    `epoch_Time` is the minutes left of the epoch, no step time."""
    recs = read("minimind-2024_pretrain_epochs-from-0.log")
    assert len(recs) == 19 and {r["framework"] for r in recs} == {"minimind"}
    assert [r["step"] for r in recs] == list(range(0, 1900, 100))
    assert [r["loss"] for r in recs[:3]] == [8.863, 5.251, 4.716]
    assert (recs[16]["lr"], recs[16]["epoch"], recs[16]["iters_per_epoch"], recs[16]["total_steps"]) == (
        0.00019999, 0, 24681, 19 * 24681)
    assert not any("step_time_ms" in r or "metrics" in r for r in recs)


def test_minimind_epochs_counted_from_1():
    recs = read("minimind-2024_pretrain_epochs-from-1.log")
    assert [r["step"] for r in recs] == list(range(31000, 32800, 100))
    assert (recs[6]["loss"], recs[6]["lr"], recs[6]["epoch"], recs[6]["total_steps"]) == (3.816, 0.000143334263, 1, 44160)


def test_minimind_comma_separated_items():
    recs = read("minimind-2026_pretrain_logger-lines.log")
    assert [r["step"] for r in recs] == list(range(100, 1100, 100))
    assert (recs[0]["loss"], recs[0]["lr"], recs[0]["metrics"]) == (
        7.4568, 0.00049999, {"logits_loss": 7.4568, "aux_loss": 0.0})
    assert not any("step_time_ms" in r for r in recs)


def test_minimind_steps_run_on_over_epochs():
    """The step counts in its epoch (from 1, to the epoch's last): the next epoch's steps come
    after it, and a stream that starts in a later epoch numbers its steps from there."""
    line = "Epoch:[{}/2]({}/300), loss: 2.5, logits_loss: 2.5, aux_loss: 0.0000, lr: 0.0004, epoch_time: 1.0min"
    recs, _ = feed_all([line.format(1, 200), line.format(1, 300), line.format(2, 100)])
    assert [(r["step"], r["epoch"], r["iter_in_epoch"]) for r in recs] == [(200, 1, 200), (300, 1, 300), (400, 2, 100)]
    recs, _ = feed_all([line.format(2, 100)])
    assert recs[0]["step"] == 400


def test_llm_c_mfu_on_a_gpu_it_does_not_know():
    """llm.c prints `-100.0% bf16 MFU` where it knows no peak for the GPU: no MFU, not 100 %."""
    recs = read("llm.c_train-gpt2cu_unknown-gpu-mfu.log")
    assert [r["step"] for r in recs] == list(range(61, 72)) and {r["framework"] for r in recs} == {"nanogpt"}
    assert (recs[0]["loss"], recs[0]["grad_norm"], recs[0]["lr"], recs[0]["step_time_ms"], recs[0]["tokens_per_s"]) == (
        3.208939, 1.48, 3e-4, 44.57, 91886)
    assert not any("mfu" in r for r in recs)


def test_pytorch_xla_processes_name_their_ranks():
    """PyTorch/XLA's `Device=xla:0/R` names the process's global ordinal: four processes' lines,
    interleaved, each step once a rank; `Rate=` is the device's samples a second."""
    recs = read("pytorch-xla_test-train-mp-mnist_4-processes.log")
    assert [(r["step"], r["rank"]) for r in recs[:4]] == [(280, 0), (280, 3), (280, 2), (280, 1)]
    assert sorted((r["rank"], r["step"]) for r in recs) == [(rank, step) for rank in range(4) for step in (280, 300, 320)]
    third = recs[2]
    assert (third["epoch"], third["loss"], third["samples_per_s"], third["metrics"]) == (1, 0.01022, 1769.84, {"globalrate": 239.69})
    assert not any("step_time_ms" in r for r in recs)


def test_open_clip_fork_counts_samples_not_steps():
    """NegCLIP's open_clip lines: the bracket counts samples (64 a step here, as its first line
    gives), so the lines are steps 1, 101, .. of 1710 an epoch; `Batch (t)` is the step's time
    (the interval's mean) and `Data (t)` its data wait; the lone rate is left a metric."""
    recs = read("negclip-open-clip_train-epoch-lines.log")
    assert [r["step"] for r in recs] == [1, 101, 201, 301, 401, 501, 601]
    assert {(r["framework"], r["epoch"], r["iters_per_epoch"]) for r in recs} == {("open_clip", 0, 1710)}
    first, second = recs[0], recs[1]
    assert (first["loss"], first["step_time_ms"], first["lanes_ms"], first["lr"]) == (1.0672, 18240.0, {"input": 14173.0}, 0.0)
    assert (second["loss"], second["step_time_ms"], second["timers_ms"], second["lr"]) == (0.97884, 559.0, {"data": 158.0}, 1e-06)
    assert second["metrics"] == {"samples/s": 36.0876, "logit_scale": 99.995}
    assert not any("samples_per_s" in r for r in recs)


def test_open_clip_log_cut_inside_an_epoch_numbers_its_first_line_by_the_next():
    """A log whose first line is no epoch's start (`(3%)`): that line's samples are 101 steps'
    and give no divisor alone; it waits for the rank's next line, which does.  A lone such
    line is read at the stream's end, by its own samples."""
    lines = (EXCERPTS / "negclip-open-clip_train-epoch-lines.log").read_bytes().splitlines()[2:]
    d = Dispatcher()
    recs = d.feed_chunk(b"\n".join(lines) + b"\n") + d.flush()
    assert [(r["step"], r["loss"]) for r in recs[:2]] == [(101, 0.97884), (201, 0.87522)]
    assert [r["step"] for r in recs] == [101, 201, 301, 401, 501, 601]
    (lone,), _ = feed_all(lines[:1])
    assert (lone["step"], lone["iters_per_epoch"]) == (1, 16)


@pytest.mark.parametrize("line,want", [
    # 2019's, with a space in its step's total; 2025's, with sentences and batch sizes
    ("[2019-12-09 17:54:47,997 INFO] Step 50/ 5000; acc:   5.35; ppl: 1497.24; xent: 7.31; lr: 1.00000;  84/336 tok/s;"
     "    890 sec", (50, 5000, 7.31, 336, 890)),
    ("[2025-03-06 13:49:38,771 INFO] Step 400/12000; acc: 17.9; ppl: 1441.5; xent: 7.3; lr: 0.00002; sents:  530183; "
     "bsz: 1241/1532/166; 11915/14711 tok/s;   2684 sec;", (400, 12000, 7.3, 14711, 2684)),
])
def test_opennmt_statistics_line_variants(line, want):
    (rec,), _ = feed_all([line])
    assert (rec["step"], rec["total_steps"], rec["loss"], rec["tokens_per_s"], rec["elapsed_s"]) == want


def test_opennmt_statistics():
    """OpenNMT-py's statistics, every 50 steps: `xent` its loss, the target's words a second its
    rate, `sec` the time since training began (which `ingest` times its steps by)."""
    recs = read("opennmt-py-0.8_summarization_step-statistics.log")
    assert [r["step"] for r in recs] == list(range(2250, 2700, 50))
    first = recs[0]
    assert (first["loss"], first["lr"], first["tokens_per_s"], first["elapsed_s"], first["total_steps"]) == (
        4.05, 0.00028, 261, 6641, 200000)
    assert first["metrics"] == {"acc": 31.18, "ppl": 57.53}


def test_mmcv_text_logger_finds_the_iteration_that_waited_for_its_batch():
    """MMDetection 2.x through mmcv's TextLoggerHook, every iteration: iteration 17 took 4.79 s,
    3.01 s of it waiting for its batch (the input lane); `memory` is MB, `time` and `data_time`
    seconds, each cascade stage's losses its own metrics."""
    recs = read("mmdet-2.x_cascade-mask-rcnn_slow-iteration.log")
    assert [(r["framework"], r["step"], r["epoch"], r["iters_per_epoch"]) for r in recs] == [
        ("mmcv", 15, 1, 678), ("mmcv", 16, 1, 678), ("mmcv", 17, 1, 678)]
    slow = recs[2]
    assert (slow["step_time_ms"], slow["lanes_ms"], slow["loss"], slow["lr"], slow["mem_gb"]) == (
        4791.0, {"input": 3010.0}, 2.7928, 0.0002, approx(9581 / 1024))
    assert (slow["metrics"]["s0.loss_mask"], slow["metrics"]["s2.acc"]) == (0.4606, 79.6875)
    assert [r["step_time_ms"] for r in recs[:2]] == [1269.0, 1447.0]


def test_mmcv_text_logger_an_eta_over_a_day_and_the_2018_form():
    recs = read("mmdet-2.x_faster-rcnn_eta-over-a-day.log")
    assert [r["step"] for r in recs] == [2150, 2200, 2250, 2300, 2350]
    assert (recs[0]["lr"], recs[0]["step_time_ms"], recs[0]["loss"], recs[0]["metrics"]) == (
        0.02, 391.0, 1.0037, {"loss_rpn_cls": 0.1059, "loss_rpn_bbox": 0.0825, "loss_cls": 0.4929,
                              "acc": 90.0684, "loss_bbox": 0.3225})
    old = read("mmdet-0.x_faster-rcnn_text-logger.log")
    assert [(r["step"], r["step_time_ms"], r["lanes_ms"]["input"], r["loss"]) for r in old] == [
        (2 * 2500 + 50, 1090.0, 15.0, 0.0394), (2 * 2500 + 100, 1023.0, 6.0, 0.0403), (2 * 2500 + 150, 1047.0, 7.0, 0.0408)]
    assert not any("mem_gb" in r for r in old)


def test_mmcv_text_logger_by_iterations_and_its_evaluation():
    """mmcv's `Iter [i/N]` (a runner by iterations: the run's step) and an evaluation's result,
    `Epoch(val) [1][625]` / `Iter(val) [500]`, which prints its batches and no total."""
    recs, _ = feed_all([
        "2021-06-01 12:00:00,000 - mmseg - INFO - Iter [150/80000]\tlr: 9.984e-03, eta: 8:01:02, time: 0.362, "
        "data_time: 0.008, memory: 4005, decode.loss_seg: 1.2345, decode.acc_seg: 60.1, loss: 1.6789",
        "2021-06-01 12:01:00,000 - mmseg - INFO - Iter(val) [500]\taAcc: 0.8123, mIoU: 0.4012, mAcc: 0.5234",
        "2021-06-01 12:02:00,000 - mmdet - INFO - Epoch(val) [1][625]\tbbox_mAP: 0.3620, bbox_mAP_50: 0.5590"])
    assert [(r["kind"], r["step"]) for r in recs] == [("progress", 150), ("eval", 150), ("eval", 150)]
    assert (recs[0]["total_steps"], recs[0]["step_time_ms"], recs[0]["mem_gb"]) == (80000, 362.0, approx(4005 / 1024))
    assert recs[1]["metrics"] == {"aacc": 0.8123, "miou": 0.4012, "macc": 0.5234}
    assert (recs[2]["epoch"], recs[2]["metrics"]) == (1, {"bbox_map": 0.362, "bbox_map_50": 0.559})


def test_slowfast_json_stats():
    """PySlowFast's meters: iteration 90 of 159 in epoch 10 is the run's step 9 * 159 + 90; `dt`
    the iteration's time, `dt_data` its input lane and `dt_net` its compute."""
    recs = read("slowfast_ava_json-stats.log")
    assert [(r["framework"], r["step"], r["epoch"], r["total_steps"]) for r in recs] == [
        ("slowfast", 9 * 159 + 90, 10, 50 * 159), ("slowfast", 9 * 159 + 100, 10, 50 * 159)]
    first = recs[0]
    assert (first["step_time_ms"], first["lanes_ms"], first["loss"], first["lr"], first["mem_gb"]) == (
        4992.87, {"input": 6.28, "compute": 4986.58}, 2.40392, 0.00038, 4.68)
    assert first["metrics"] == {"top1_err": 12.5, "top5_err": 0.0}


def test_slowfast_epoch_lines():
    """The epoch's means give nothing; a validation epoch is an evaluation at its epoch's last
    step; a line cut inside its JSON, or another logger's `json_stats`, gives nothing."""
    head = '[08/12 10:11:12][INFO] logging.py:  93: json_stats: '
    recs, _ = feed_all([
        head + '{"_type": "train_iter", "dt": 0.4, "dt_data": 0.1, "dt_net": 0.3, "epoch": "1/196", '
               '"eta": "1 day, 2:03:04", "gpu_mem": "5.12G", "iter": "1251/1251", "loss": 6.9, "lr": 0.001}',
        head + '{"_type": "train_epoch", "dt": 0.4, "epoch": "1/196", "loss": 6.8, "lr": 0.001}',
        head + '{"RAM": "12.3/503.1G", "_type": "val_epoch", "epoch": "1/196", "gpu_mem": "5.12G", '
               '"min_top1_err": 90.1, "time_diff": 12.3, "top1_err": 90.1, "top5_err": 80.2}',
        head + '{"_type": "train_iter", "dt": 0.4, "epoch": "2/196", "iter": "10/1',
        head + '{"cur_iter": "12", "eta": "4:42:19", "split": "test_iter", "time_diff": 0.93468}'])
    assert [(r["kind"], r["step"]) for r in recs] == [("progress", 1251), ("eval", 1251)]
    assert recs[1]["metrics"] == {"min_top1_err": 90.1, "top1_err": 90.1, "top5_err": 80.2}


def test_deepspeed_chat_step3_lines_with_no_deepspeed_line_before_them():
    """A paste from the middle of a DeepSpeed-Chat RLHF run: its step lines (printed 0-based) and
    the `|E2E latency=` line after each, which times the step before it; an inf loss is no loss."""
    recs = read("dschat_step3_e2e-latency_inf-loss.log")
    assert {r["framework"] for r in recs} == {"deepspeed"}
    steps = progress(recs)
    assert [(r["step"], r.get("loss")) for r in steps] == [(3184, 30.921875), (3185, None), (3186, None)]
    assert steps[0]["losses"]["cri_loss"] == 30.515625
    timing = [(r["step"], r["step_time_ms"], r["lanes_ms"]["compute"]) for r in recs if r["kind"] == "timing"]
    assert timing == [(None, 2120.0, 2010.0), (3184, 2140.0, 2040.0), (3185, 2160.0, 2060.0)]
    alone = progress(read("dschat_step3_reward-collapse_step-lines.log"))
    assert [(r["framework"], r["step"], r["epoch"]) for r in alone] == [("deepspeed", s, 0) for s in range(260, 264)]
    assert alone[2]["loss"] == -0.1837158203125


def test_deepspeed_chat_step3_lines_since_mid_2023():
    """DeepSpeed-Chat's step 3 prints, as its source writes them since mid-2023 (no paste of them
    found): `Epoch: 0 | Step: 10 | PPO Epoch: 1 | Actor Loss: ..`, with the step's total and the
    advantage in later versions, then three lines of throughput: one timing record a step, its
    end-to-end time the step's, generation and training its compute."""
    recs, _ = feed_all([
        "Epoch: 0 | Step: 10 | PPO Epoch: 1 | Actor Loss: 0.123 | Critic Loss: 0.456 | Unsupervised Loss: 0.0",
        "End-to-End => Latency: 2.12s, TFLOPs: 5.23, Samples/sec: 1.89, Time/seq 0.53s, Batch Size: 4, "
        "Total Seq. Length: 512",
        "Generation => Latency: 1.59s, Per-token Latency 6.21 ms, TFLOPs: 1.20, BW: 300.10 GB/sec, "
        "Answer Seq. Length: 256",
        "Training   => Latency: 0.42s, TFLOPs: 20.10",
        "Actor Model Parameters => 1.316 B, Critic Model Parameters => 0.331 B",
        "Epoch: 0 | Step: 11 | Total Steps: 477 | PPO Epoch: 1 | Actor Loss: -0.5 | Critic Loss: 0.25 | "
        "Unsupervised Loss: 0.0 | Advantage: 0.01 | Return: -0.2",
        "End-to-End => Latency: 9.50s, TFLOPs: 1.10, Samples/sec: 0.42, Time/seq 2.37s, Batch Size: 4, "
        "Total Seq. Length: 512"])
    assert [(r["kind"], r["step"]) for r in recs] == [("progress", 11), ("timing", 11), ("progress", 12), ("timing", 12)]
    first, timing, second, cut = recs
    assert first["framework"] == "deepspeed" and first["loss"] == 0.123 and first["epoch"] == 0
    assert first["losses"] == {"actor_loss": 0.123, "critic_loss": 0.456, "unsupervised_loss": 0.0}
    assert (timing["step_time_ms"], timing["tflops"], timing["samples_per_s"]) == (2120.0, 5.23, 1.89)
    assert timing["timers_ms"] == {"generate_time": 1590.0, "training_time": 420.0}
    assert timing["lanes_ms"] == {"compute": 2010.0}
    assert (second["total_steps"], second["loss"], second["metrics"]) == (477, -0.5, {"advantage": 0.01, "return": -0.2})
    # the log ends before the step's generation and training lines: its time alone, at the end
    assert (cut["step_time_ms"], "lanes_ms" in cut) == (9500.0, False)


def test_axolotl_peak_memory_in_its_log_dicts():
    recs = progress(read("axolotl_memory-in-log-dicts.log"))
    assert [(r["framework"], r["epoch"], r["loss"], r["mem_gb"]) for r in recs[:3]] == [
        ("hf_trainer", 1, 4.75, 25.45), ("hf_trainer", 2, 2.0312, 34.89), ("hf_trainer", 3, 0.8984, 34.89)]
    assert recs[0]["grad_norm"] == 98.5 and len(recs) == 5


def test_mlx_lm_iteration_lines():
    """mlx-lm's `Iter N: Train loss .., Learning Rate .., It/sec .., Tokens/sec .., Peak mem ..
    GB`: `Learning Rate`, two capitalised words, is one key because `Rate` alone names none (a
    capitalised word before a key that is one stays out of it: `SUCCESS Step 0`, prime-rl's)."""
    recs = progress(read("mlx-lm_lora_iter-lines.log"))
    assert [(r["step"], r["loss"], r["lr"], r["it_per_s"], r["tokens_per_s"], r["mem_gb"]) for r in recs[:2]] == [
        (860, 0.413, 1e-06, 0.247, 159.343, 100.759), (870, 0.271, 1e-06, 0.319, 144.595, 100.759)]
    assert len(recs) == 5


def test_fairseq_py_of_2017_batch_lines_count_steps_over_epochs():
    """fairseq-py of 2017 prints no update count: a batch line's step is the epochs before times
    their batches, plus the batch (an update each); the epoch's means and its validation give
    no record, as they name no step."""
    recs = read("fairseq-py-2017_epoch-batch-lines.log")
    assert [r["step"] for r in recs] == [9 * 8223 + b for b in range(2000, 9000, 1000)] + [
        10 * 8223 + b for b in (1000, 2000, 3000)]
    first = recs[0]
    assert (first["framework"], first["epoch"], first["iter_in_epoch"], first["iters_per_epoch"]) == (
        "fairseq", 10, 2000, 8223)
    assert (first["loss"], first["lr"], first["grad_norm"], first["tokens_per_s"], first["wpb"]) == (
        1.27, 0.001, 2.1427, 962, 908)


def test_liger_kernel_efficiency_callback_keys():
    """Liger-Kernel's `EfficiencyCallback` adds the step's peak memory, in MB, and its tokens a
    second to the Trainer's log dicts."""
    recs = progress(read("liger-kernel_efficiency-callback_log-dicts.log"))
    assert [(r["framework"], r["loss"], r["tokens_per_s"]) for r in recs] == [
        ("hf_trainer", 75.1831, 18801.85), ("hf_trainer", 74.5029, 18835.9), ("hf_trainer", 75.81, 18920.33)]
    assert recs[0]["mem_gb"] == approx(26279.24 / 1024, abs=1e-6)


def test_returnn_step_lines():
    """RETURNN's PyTorch engine: `ep 55 train, step 1347, ce 0.324, ..., grad_norm:p2 3.388, ...,
    max_size:time 291200, ..., mem_usage:cuda:0 67.8GB, 0.855 sec/step, ...`.  The step's time is
    the number before `sec/step`; `max_size:time`, the batch's longest sequence, is no time (read
    as one, the step took 291,200 s); `grad_norm:p2` is the grad norm and `mem_usage:cuda:0` the
    device's memory, after its index."""
    recs = progress(read("returnn_torch-engine_step-lines_tee3.log"))
    assert [(r["rank"], r["step"], r["epoch"], r["step_time_ms"], r["grad_norm"], r["mem_gb"]) for r in recs] == [
        (0, 1347, 55, 855.0, 3.388, 67.8), (3, 1347, 55, 838.0, 3.388, 66.8)]
    assert (recs[0]["metrics"]["ce"], recs[0]["metrics"]["max_size:time"]) == (0.324, 291200)
