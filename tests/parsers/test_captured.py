"""Outputs captured from the frameworks' own code where no public log shows the format
(tests/data/captured/README.md says how each was made)."""
from __future__ import annotations

import io
import random
import re
from pathlib import Path

import pytest
from pytest import approx
from tqdm import tqdm

from ridgescope.parsers import Dispatcher
from ridgescope.parsers.olmo import OlmoParser
from ridgescope.parsers.template import TeePrefix

from .conftest import feed_all

CAPTURED = Path(__file__).resolve().parents[1] / "data" / "captured"


def parse_file(name: str) -> list[dict]:
    d = Dispatcher()
    out = d.feed_chunk((CAPTURED / name).read_bytes())
    return out + d.flush()


def test_lightning_rich_bar_on_a_terminal():
    """Each step's last redraw is one record; epoch 1's steps run on after epoch 0's 8."""
    recs = parse_file("lightning-2.6.6_rich-15.0.0_richprogressbar_tty.log")
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [r["step"] for r in prog] == list(range(1, 17))
    assert {r["framework"] for r in recs} == {"lightning"}
    by_step = {r["step"]: r for r in prog}
    assert (by_step[1]["loss"], by_step[1]["epoch"], by_step[1]["iters_per_epoch"]) == (1.093, 0, 8)
    assert not any("total_steps" in r for r in prog)    # the bar counts an epoch's steps, not the run's
    assert (by_step[8]["loss"], by_step[9]["epoch"], by_step[9]["loss"]) == (0.719, 1, 0.851)
    assert by_step[2]["it_per_s"] == 8.13
    assert "metrics" not in by_step[8]                      # no validation had run yet
    assert by_step[9]["metrics"] == {"val_loss": 0.747}     # the first validation's result
    # the last redraw of step 16, after the second validation, replaced the one before it
    assert (by_step[16]["loss"], by_step[16]["metrics"]) == (0.537, {"val_loss": 0.691})
    (ev,) = [r for r in recs if r["kind"] == "eval"]
    assert (ev["phase"], ev["batches"], ev["total_batches"]) == ("Validation", 2, 4)


def test_lightning_rich_bar_into_a_pipe():
    """Into a pipe Rich prints only the final state: one record, with the metrics that the
    console's width wrapped onto the next line."""
    (r,) = parse_file("lightning-2.6.6_rich-15.0.0_richprogressbar_pipe.log")
    assert (r["kind"], r["framework"], r["step"], r["epoch"], r["loss"], r["it_per_s"]) == (
        "progress", "lightning", 16, 1, 1.987, 8.11)
    assert r["metrics"] == {"val_loss": 1.018}


def test_lightning_rich_bars_left_after_each_epoch_into_a_pipe():
    """With `leave=True` each epoch's final state is printed, every one at the same count
    (8/8): each is its epoch's last step, not a redraw of the one before."""
    recs = parse_file("lightning-2.6.6_rich-15.0.0_richprogressbar-leave_3-epochs_pipe.log")
    assert [(r["kind"], r["step"], r["epoch"], r["loss"], r["metrics"]) for r in recs] == [
        ("progress", 8, 0, 0.517, {"val_loss": 1.067}),
        ("progress", 16, 1, 0.429, {"val_loss": 1.053}),
        ("progress", 24, 2, 0.417, {"val_loss": 1.051})]


def test_lightning_max_steps_ends_the_run_inside_an_epoch():
    """`max_steps=13` over epochs of 8: the last epoch's bar counts the 5 steps left (`5/5`),
    which run on after epoch 0's 8, to step 13."""
    recs = parse_file("lightning-2.6.6_tqdmprogressbar_max-steps-13-of-8-step-epochs_pipe.log")
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [(r["step"], r["epoch"], r["iter_in_epoch"], r["iters_per_epoch"]) for r in prog] == (
        [(n, 0, n, 8) for n in range(1, 9)] + [(8 + n, 1, n, 5) for n in range(1, 6)])
    assert (prog[0]["loss"], prog[8]["loss"], prog[12]["loss"]) == (1.76, 1.44, 0.468)


def test_lightning_log_read_from_its_second_epoch_on():
    """A log that starts at epoch 1 (a window, a file rotated): the epochs before it ran as
    many steps as its bar counts to, so its steps are still 9-16."""
    text = (CAPTURED / "lightning-2.6.6_tqdmprogressbar_pipe.log").read_bytes().decode()
    d = Dispatcher()
    recs = d.feed_chunk(text[text.index("\rEpoch 1:") + 1:]) + d.flush()
    assert [r["step"] for r in recs if r["kind"] == "progress"] == list(range(9, 17))


def test_a_datasets_map_bar_in_a_lightning_run_is_no_step():
    """A `train_dataloader` that maps a dataset, called again before each epoch
    (`reload_dataloaders_every_n_epochs=1`), draws its `Map:` bar (here drawn by tqdm as
    `datasets` labels it) once Lightning has claimed the stream: not a training step, and the
    training bar's steps stay as they were."""
    text = (CAPTURED / "lightning-2.6.6_tqdmprogressbar_pipe.log").read_bytes().decode()
    drawn = io.StringIO()
    for _ in tqdm(range(1000), desc="Map", unit=" examples", file=drawn, mininterval=0, miniters=100):
        pass
    epoch_1 = text.index("\rEpoch 1:")
    d = Dispatcher()
    mapped = d.feed_chunk(f"{text[:epoch_1]}\n{drawn.getvalue()}{text[epoch_1 + 1:]}") + d.flush()
    assert "Map: 100%" in drawn.getvalue()
    assert mapped == parse_file("lightning-2.6.6_tqdmprogressbar_pipe.log")
    assert [r["step"] for r in mapped if r["kind"] == "progress"] == list(range(1, 17))


def test_lightning_tqdm_bar_one_eval_record_per_pass():
    """Lightning's default bar: a record per step, and one per validation pass (its last
    redraw, at the training step it followed), never one per validation batch."""
    recs = parse_file("lightning-2.6.6_tqdmprogressbar_pipe.log")
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [r["step"] for r in prog] == list(range(1, 17))
    assert (prog[0]["loss"], prog[7]["loss"], prog[7]["metrics"], prog[15]["loss"]) == (
        2.07, 0.71, {"val_loss": 1.2}, 0.732)
    evals = [(r["phase"], r["step"], r["batches"], r["total_batches"]) for r in recs if r["kind"] == "eval"]
    assert evals == [("Sanity Checking DataLoader 0", None, 2, 2), ("Validation DataLoader 0", 8, 4, 4),
                     ("Validation DataLoader 0", 16, 4, 4)]


def test_lightning_tqdm_bar_over_a_loader_with_no_length():
    """Training batches from an iterable with no length (a streaming dataset's): Lightning's
    bar counts with no total and no percentage (`Epoch 0: |          | 8/? [...]`), from 0 each
    epoch, and is reset to 0 before it is relabelled with the next epoch.  The steps run on
    across epochs; one evaluation record per pass, at the step it followed."""
    recs = parse_file("lightning-2.6.6_tqdmprogressbar_iterable-no-length_pipe.log")
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [(r["step"], r["epoch"]) for r in prog] == [(n, (n - 1) // 8) for n in range(1, 17)]
    assert {r["framework"] for r in recs} == {"lightning"} and not any("total_steps" in r for r in prog)
    assert (prog[0]["loss"], prog[7]["loss"], prog[7]["metrics"], prog[8]["loss"], prog[15]["loss"]) == (
        0.838, 1.14, {"val_loss": 0.869}, 0.829, 1.05)
    evals = [(r["phase"], r["step"], r["batches"]) for r in recs if r["kind"] == "eval"]
    assert evals == [("Sanity Checking DataLoader 0", None, 2), ("Validation DataLoader 0", 8, 4),
                     ("Validation DataLoader 0", 16, 4)]


def test_hf_trainer_5_bar_and_string_valued_dicts():
    """Transformers 5: values printed as strings, the first dict on the bar's own line.  Each log
    dict joins the step its bar showed; each evaluation gets the step it ran at (5, 10, 15 and
    the last), which the redraw after its dict shows, where the redraw before it lagged."""
    recs = parse_file("transformers-5.24.0_trainer_tqdm_pipe.log")
    assert {r["framework"] for r in recs} == {"hf_trainer"}
    logged = {r["step"]: r for r in recs if r["kind"] == "progress" and "loss" in r and not r.get("summary")}
    assert sorted(logged) == [2, 4, 6, 8, 10, 12, 14, 16]
    assert (logged[2]["loss"], logged[2]["grad_norm"], logged[2]["lr"], logged[2]["epoch"]) == (
        1.062, 3.903, 4.688e-05, 0.25)
    assert (logged[16]["loss"], logged[16]["total_steps"], logged[16]["it_per_s"]) == (1.676, 16, 12.41)
    evals = [(r["step"], r["loss"], r["epoch"]) for r in recs if r["kind"] == "eval"]
    assert evals == [(5, 1.351, 0.625), (10, 1.351, 1.25), (15, 1.351, 1.875), (16, 1.351, 2)]
    (summary,) = [r for r in recs if r.get("summary")]
    assert (summary["duration_ms"], summary["samples_per_s"], summary["loss"]) == (1290.0, 99.24, 1.56)


def test_hf_trainer_pipes_read_apart():
    """The same run's two pipes, as `ridgescope run` reads them.  Stdout: the log dicts, with
    no step.  Stderr alone: the bar, unlabelled, gives no step; taken as HF's (`adopt`: stdout
    showed HF) at any point of the run, it gives every step the bar drew, those before too,
    each once, and never one of an evaluation's bar (`0/2`, drawn as each evaluation starts)."""
    out = parse_file("transformers-5.24.0_trainer_tqdm_two-pipes_stdout.log")
    logged = [(r["loss"], r["epoch"]) for r in out if r["kind"] == "progress" and not r.get("summary")]
    assert logged[:2] == [(0.5646, 0.25), (1.746, 0.5)] and len(logged) == 8
    assert [(r["step"], r["loss"], r["duration_ms"]) for r in out if r["kind"] == "eval"] == [
        (None, 1.002, 107.8), (None, 1.001, 105.5), (None, 1.001, 106.1), (None, 1.001, 107.2)]
    assert all(r["step"] is None for r in out)

    bar = (CAPTURED / "transformers-5.24.0_trainer_tqdm_two-pipes_stderr.log").read_bytes()
    assert _by_kind(parse_file("transformers-5.24.0_trainer_tqdm_two-pipes_stderr.log"), "progress") == []
    drawn = [2, 4, 5, 6, 8, 10, 12, 14, 15, 16]
    evaluations = 0
    for cut in [m.start() for m in re.finditer(rb"\r", bar)]:
        d = Dispatcher()
        assert _by_kind(d.feed_chunk(bar[:cut]), "progress") == []
        assert d.adopt("hf_trainer") and d.framework == "hf_trainer"
        steps = [(r["step"], r["total_steps"]) for r in _by_kind(d.feed_chunk(bar[cut:]) + d.flush(), "progress")]
        assert steps == [(n, 16) for n in drawn], (cut, steps)
        evaluations += bar[cut:].startswith(b"\r  0%|          | 0/2 ")
    assert evaluations == 4      # adopted just before each evaluation's bar, too
    d = Dispatcher()
    assert not d.adopt("accelerate") and not d.adopt("megatron") and d.framework is None


def test_trl_sft_trainer_steps_with_trls_own_metrics():
    """TRL's `SFTTrainer` is the Trainer's loop: a record for each of its 24 steps, each with
    its dict's loss and TRL's own metrics; the step that slept 0.6 s (13) shows in the bar's
    rate; the evaluations at 10, 20 and the end."""
    recs = parse_file("trl-0.29.1_transformers-5.19.0_sft-trainer_tiny-qwen2_slow-step13_cpu.log")
    assert {r["framework"] for r in recs} == {"hf_trainer"}
    prog = {r["step"]: r for r in _by_kind(recs, "progress") if not r.get("summary")}
    assert sorted(prog) == list(range(1, 25))
    assert all(r["total_steps"] == 24 and "loss" in r and "mean_token_accuracy" in r for r in prog.values())
    twelve = prog[12]
    assert (twelve["loss"], twelve["grad_norm"], twelve["lr"], twelve["entropy"], twelve["num_tokens"],
            twelve["epoch"]) == (6.005, 3.185, 1.083e-05, 6.03, 3057, 0.5)
    rates = {step: r["it_per_s"] for step, r in prog.items()}
    assert min(rates, key=rates.get) == 13 and rates[13] < 0.5 * rates[12]
    evals = [(r["step"], r["loss"], r["num_tokens"]) for r in _by_kind(recs, "eval")]
    assert evals == [(10, 6.03, 2547), (20, 6.007, 5093), (24, 6.005, 6115)]


def test_hf_trainer_5_without_bar():
    """`disable_tqdm=True`: the dicts carry no step, so none is made up; their values are read."""
    recs = parse_file("transformers-5.24.0_trainer_disable-tqdm_pipe.log")
    assert [r["kind"] for r in recs] == ["progress"] * 2 + ["eval"] + ["progress"] * 3 + ["eval"] + [
        "progress"] * 2 + ["eval", "progress", "eval", "progress"]
    assert all(r["step"] is None for r in recs)
    assert [r["loss"] for r in recs[:2]] == [0.7087, 1.483]
    assert (recs[2]["loss"], recs[2]["duration_ms"], recs[2]["epoch"]) == (1.238, 103.5, 0.625)


@pytest.mark.parametrize("version,losses,evals", [
    ("4.57.3", [1.4848, 1.433, 2.2284, 1.6437, 1.9072, 1.6726], [5, 10]),
    ("5.24.0", [1.279, 1.576, 1.901, 1.413, 1.013, 2.047], [5, 10, 12])])
def test_hf_trainer_without_bar_steps_from_the_epoch(version, losses, evals):
    """`disable_tqdm=True` with the INFO banner: each dict's epoch names its step.  17 batches an
    epoch, 3 a step: step 2 ends on batch 6 (epoch 6/17), step 6 on the epoch's last batch."""
    recs = parse_file(f"transformers-{version}_trainer_disable-tqdm_log-level-info_accum3_pipe.log")
    prog = [r for r in recs if r["kind"] == "progress" and not r.get("summary")]
    assert [(r["step"], r["loss"]) for r in prog] == list(zip([2, 4, 6, 8, 10, 12], losses))
    assert [r["step"] for r in recs if r["kind"] == "eval" and r["phase"] == "result"] == evals
    out = "/tmp/hfo1" if version == "4.57.3" else "/tmp/hfo3"
    assert [(r["step"], r["path"]) for r in recs if r["kind"] == "checkpoint"] == [
        (8, f"{out}/checkpoint-8"), (12, f"{out}/checkpoint-12")]


def test_hf_trainer_before_4_46_without_bar_steps_from_the_epoch():
    """Transformers 4.45.2, the same run: its accumulation runs on across epochs (5 steps an
    epoch, the last 2 batches of epoch 1 go into step 6, which ends on batch 1 of epoch 2, at
    18/17), and it stops at the banner's 10 steps.  Every dict's step is found; the evaluations
    and saves are at steps 5 and 10, and 8 and 10."""
    recs = parse_file("transformers-4.45.2_trainer_disable-tqdm_log-level-info_accum3_pipe.log")
    prog = [r for r in recs if r["kind"] == "progress" and not r.get("summary")]
    assert [(r["step"], r["loss"], r["epoch"]) for r in prog] == [
        (2, 1.2835, 6 / 17), (4, 1.2548, 12 / 17), (6, 1.9217, 1 + 1 / 17), (8, 1.062, 1 + 7 / 17),
        (10, 1.7837, 1 + 13 / 17)]
    assert [r["step"] for r in recs if r["kind"] == "eval" and r["phase"] == "result"] == [5, 10]
    assert [r["step"] for r in recs if r["kind"] == "checkpoint"] == [8, 10]


@pytest.mark.parametrize("version,evals", [("4.57.3", [5]), ("5.24.0", [5, 6])])
def test_hf_trainer_without_bar_on_two_processes(version, evals):
    """Two processes share the 66 examples: 9 batches each an epoch, 3 steps; the dicts of rank 0."""
    recs = parse_file(f"transformers-{version}_trainer_disable-tqdm_log-level-info_accum3_torchrun-tee3_2rank.log")
    prog = [r for r in recs if r["kind"] == "progress" and not r.get("summary")]
    assert [(r["rank"], r["step"]) for r in prog] == [(0, 2), (0, 4), (0, 6)]
    assert [r["step"] for r in recs if r["kind"] == "eval" and r["phase"] == "result"] == evals


def test_hf_trainer_5_checkpoints_logged_after_a_bar():
    """`log_level="info"`: both saves are found, the one glued to a bar's redraw too; each
    evaluation's start and result are at the step it ran at."""
    recs = parse_file("transformers-5.24.0_trainer_log-level-info_pipe.log")
    saves = [(r["step"], r["path"]) for r in recs if r["kind"] == "checkpoint"]
    assert saves == [(8, "/tmp/out/checkpoint-8"), (16, "/tmp/out/checkpoint-16")]
    assert [r["step"] for r in recs if r["kind"] == "eval" and r["phase"] == "result"] == [5, 10, 15, 16]
    # the banner comes while the bar still shows an earlier step: it waits for the next redraw
    assert [r["step"] for r in recs if r["kind"] == "eval" and r["phase"] == "start"] == [5, 10, 15, 16]


def test_deepspeed_breakdown_alone_at_the_default_log_level():
    """DeepSpeed 0.19 at its default level prints only `wall_clock_breakdown`: the steps are
    counted from the step lines (12 steps of 2 micro-batches), the rank read from `[Rank 0]`."""
    recs = parse_file("deepspeed-0.19.8_wall-clock-breakdown_2rank-cpu.log")
    assert [(r["kind"], r["step"], r["rank"]) for r in recs] == [("timing", n, 0) for n in range(1, 13)]
    first = recs[0]
    assert first["timers_ms"] == {"fwd": 1.62, "bwd": 6.45, "bwd_inner": 2.14, "bwd_allreduce": 4.28, "step": 4.89}
    assert first["lanes_ms"] == {"compute": 8.65, "communication": 4.28}    # fwd + bwd_inner + step


def test_deepspeed_breakdown_with_step_lines():
    """At log level info the `step=N` lines come every 2 steps; the counted steps agree with them."""
    recs = parse_file("deepspeed-0.19.8_wall-clock-breakdown_log-level-info_2rank-cpu.log")
    assert [r["step"] for r in recs if r["kind"] == "timing"] == list(range(1, 13))
    printed = [r["step"] for r in recs if r["kind"] == "progress" and "lr" in r]
    assert printed == [0, 2, 4, 6, 8, 10, 12]
    assert {r["step"] for r in recs if r["kind"] == "checkpoint"} == {12}
    timing = [r for r in recs if r["kind"] == "timing"]
    assert (timing[2]["timers_ms"]["bwd_allreduce"], timing[2]["lanes_ms"]["communication"]) == (4.13, 4.13)


def test_deepspeed_flops_profiler_summary_under_gradient_accumulation():
    """The Flops Profiler (`profile_step` 5) prints its summary as the step it profiled, step
    6, ends, before the step's breakdown line; with 2 micro-batches a step it prints one after
    each, the first `at step 5` with the first micro-batch's times alone.  One record, step
    6's: its latencies (the summary's `iter` their sum) and its rates, in TFLOPS; the module
    tree after it gives nothing."""
    recs = parse_file("deepspeed-0.19.8_flops-profiler-detailed_accum2_2rank-cpu.log")
    (profiled,) = [r for r in recs if r.get("source") == "flops_profiler"]
    assert (profiled["kind"], profiled["rank"], profiled["step"]) == ("timing", 0, 6)
    assert profiled["timers_ms"] == {"fwd": 0.78154, "bwd": 3.03, "step": 1.95, "iter": 5.77}
    assert (profiled["tflops"], profiled["fwd_tflops"], profiled["samples_per_s"]) == (2.33e-06, 5.73e-06, 1387.41)
    assert "lanes_ms" not in profiled
    breakdowns = [r for r in recs if r.get("source") is None]
    assert [(r["kind"], r["step"]) for r in breakdowns] == [("timing", n) for n in range(1, 13)]
    after = breakdowns[5]       # the step's own breakdown, right after the summary
    assert recs.index(after) == recs.index(profiled) + 1
    assert (after["timers_ms"]["bwd"], after["timers_ms"]["step"]) == (3.03, 1.95)


def test_deepspeed_flops_profiler_summary_with_step_lines():
    """One micro-batch a step (24 steps), at log level info: the summary's step is the one `step=6` names."""
    recs = parse_file("deepspeed-0.19.8_flops-profiler_log-level-info_2rank-cpu.log")
    (profiled,) = [r for r in recs if r.get("source") == "flops_profiler"]
    assert profiled["step"] == 6 and [r["step"] for r in recs if "lr" in r][3] == 6
    assert profiled["timers_ms"] == {"fwd": 0.32854, "bwd": 1.2, "step": 2.9, "iter": 4.43}
    assert (profiled["tflops"], profiled["samples_per_s"]) == (3.04e-06, 1807.31)
    assert [r["step"] for r in recs if r["kind"] == "timing" and "source" not in r] == list(range(1, 25))


def test_deepspeed_flops_profiler_summary_of_older_releases_behind_srun_labels():
    """DeepSpeed before 2022 printed no `FLOPS per GPU = .. / iter latency` line (its tutorial's
    summary: TFLOPS of the forward pass alone), and breakdown names of their own; a summary
    that no breakdown line follows (a pipeline's, the profiler's own API) is given at the
    stream's end.  srun's labels name rank 0."""
    summary = ["Profile Summary at step 10:", "world size:    1", "fwd latency:    76.67 ms",
               "bwd latency:   108.02 ms", "fwd FLOPS per GPU = fwd flops per GPU / fwd latency:   81.9 TFLOPS",
               "bwd FLOPS per GPU = 2 * fwd flops per GPU / bwd latency:   116.27 TFLOPS",
               "step latency:  34.09 us", "iter latency:  184.73 ms", "samples/second:   433.07", "",
               "    fwd latency - {'BertModel': '1.23 ms'}",
               "  (0): Linear(2.36 M, 2.18% Params, 4.83 GMACs, 2.70% MACs, 830.65 us, 1.70% latency, 11.63 TFLOPS, )"]
    breakdown = "[Rank 0] rank=0 time (ms) | forward: 76.7 | backward: 108.0 | optimizer: 0.03"
    lines = [f"0: {line}" for line in [breakdown, *summary, breakdown, *summary]]
    recs, _ = feed_all(lines)
    profiled = [r for r in recs if r.get("source") == "flops_profiler"]
    assert [(r["rank"], r["step"]) for r in profiled] == [(0, 10), (0, 10)]
    assert profiled[0]["timers_ms"] == {"fwd": 76.67, "bwd": 108.02, "step": 0.03409, "iter": 184.73}
    assert (profiled[0]["fwd_tflops"], profiled[0]["samples_per_s"]) == (81.9, 433.07)
    assert "tflops" not in profiled[0]
    assert recs[-1] is profiled[1]      # no breakdown after the second: given at the end
    assert sum(r["kind"] == "timing" for r in recs) == 4


COMMS = "deepspeed-0.19.8_comms-logger-verbose_log-level-info_2rank-cpu.log"


def test_deepspeed_comms_logger_ops_as_running_totals():
    """The comms logger (`verbose`, log level info) logs rank 0's every op with its name's running
    total as its time: each op took the rise.  The ops go with the `step=N` line after them
    (every 2 steps, `steps_per_print`): 2 all_reduces a step (the gradients, 2.25 KB, and a
    4-byte flag), within the breakdown's `bwd_allreduce` of those steps; the engine's first
    broadcasts are step 0's, and the ops after the last step line (the summary's barriers, the
    checkpoint's) come at the end as step 13's."""
    recs = parse_file(COMMS)
    comms = [r for r in recs if r.get("source") == "comms_logger"]
    assert [(r["kind"], r["rank"], r["step"], r.get("steps")) for r in comms] == \
        [("timing", 0, 0, None)] + [("timing", 0, n, 2) for n in range(2, 13, 2)] + [("timing", 0, 13, None)]
    assert (comms[0]["comm_count"], comms[0]["comm_bytes"]) == ({"broadcast": 4}, {"broadcast": 2048 + 128 + 128 + 4})
    # the first all_reduce printed 121.54 ms (gloo's first op), the fourth 126.35: 126.35 in all
    assert comms[1]["comm_ms"] == {"all_reduce": 126.35}
    assert comms[2]["comm_ms"] == {"all_reduce": 4.95}      # 131.30 - 126.35: not the 518.6 of the printed four
    for r in comms[1:-1]:
        assert r["comm_count"] == {"all_reduce": 4} and r["comm_bytes"] == {"all_reduce": 2 * 2304 + 2 * 4}
    breakdown = {r["step"]: r["timers_ms"]["bwd_allreduce"] for r in recs if r["kind"] == "timing" and "source" not in r}
    assert sorted(breakdown) == list(range(1, 13))
    for r in comms[1:-1]:
        assert 0 < r["comm_ms"]["all_reduce"] <= breakdown[r["step"] - 1] + breakdown[r["step"]]
    assert comms[-1]["comm_ms"] == {"log_summary_barrier": 1.33, "barrier": 1.12, "all_reduce": 2.33}
    assert recs.index(comms[3]) + 1 == recs.index(next(r for r in recs if "lr" in r and r["step"] == 6))


def test_deepspeed_comms_logger_behind_labels_and_debug_names():
    """Behind srun's labels each rank's ops are its own; `debug` names the caller too (`all_reduce
    | [Caller Func: ..]`), timed as that name's running total and counted as its op.  A time
    below the one before under its name is a new process's first op, and a line cut short
    gives nothing."""
    def op(rank, name, ms, size):
        return (f"{rank}: [2026-12-07 03:25:56,797] [INFO] [logging.py:123:log_dist] [Rank 0] comm op: {name} "
                f"| time (ms): {ms} | msg size: {size} | algbw (Gbps): 0.00 | busbw (Gbps): 0.00")

    def step(rank, n):
        return f"{rank}: [2026-12-07 03:25:56,851] [INFO] [logging.py:123:log_dist] [Rank 0] step={n}, skipped=0, lr=[0.001]"
    bucket = "all_reduce | [Caller Func: allreduce_bucket]"
    lines = [step(0, 0), step(1, 0), op(0, bucket, "10.00", "1.5 MB"), op(1, bucket, "12.00", "1.5 MB"),
             op(0, "all_reduce | [Caller Func: has_overflow]", "0.50", "4.0 B"), op(0, bucket, "13.00", "1.5 MB"),
             op(0, "broadcast", "0.20", "0B"), step(0, 1), op(1, bucket, "15.50", "1.5 MB"), step(1, 1),
             op(0, bucket, "2.50", "1.5 MB"), op(0, bucket, "4.", ""), step(0, 2)]
    recs, _ = feed_all(lines)
    comms = [(r["rank"], r["step"], r["comm_ms"], r["comm_count"], r["comm_bytes"])
             for r in recs if r.get("source") == "comms_logger"]
    mb = 3 * 1 << 19
    assert comms == [(0, 1, {"all_reduce": 13.5, "broadcast": 0.2}, {"all_reduce": 3, "broadcast": 1},
                      {"all_reduce": 2 * mb + 4, "broadcast": 0}),
                     (1, 1, {"all_reduce": 15.5}, {"all_reduce": 2}, {"all_reduce": 2 * mb}),
                     (0, 2, {"all_reduce": 2.5}, {"all_reduce": 1}, {"all_reduce": mb})]


def test_deepspeed_pipeline_engine():
    """A two-stage pipeline (DeepSpeed 0.19.8 on the CPU): rank 0 prints PipelineEngine's line
    every step; the last stage's forward sleeps 0.5 s in all at step 6."""
    recs = parse_file("deepspeed-0.19.8_pipeline-engine_2stage-cpu.log")
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [r["step"] for r in prog] == list(range(1, 11))
    assert {r["framework"] for r in prog} == {"deepspeed"}
    six = prog[5]
    assert (six["loss"], six["step_time_ms"], six["samples_per_s"]) == (3.0669, 512.0, 15.622)
    assert max(r["step_time_ms"] for r in prog if r["step"] != 6) == 22.0


def test_composer_epochs_count_the_runs_batches():
    """Composer 0.32 with `max_duration="2ep"` heads each record with the batch *within* the
    epoch (`[epoch=2][batch=1/8]`): the step is the run's batch (`time/batch` + 1), so epoch 2
    goes on at step 9 instead of giving steps 1-8 again.  Each evaluation is a start and a
    result with its metrics."""
    recs = parse_file("composer-0.32.1_console-logger_max-duration-epochs.log")
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [r["step"] for r in prog] == list(range(1, 17))
    assert [r["epoch"] for r in prog] == [1] * 8 + [2] * 8
    assert (prog[8]["loss"], prog[15]["loss"]) == (1.323, 1.3267)
    assert all("total_steps" not in r and "timers_s" not in r for r in prog)   # 8 is the epoch's
    evals = [(r["step"], r["phase"]) for r in recs if r["kind"] == "eval"]
    assert evals == [(8, "start"), (8, "result"), (16, "start"), (16, "result")]
    last = recs[-1]
    assert last["metrics"] == {"metrics/eval/CrossEntropy": 1.274, "metrics/eval/MulticlassAccuracy": 0.4375}
    assert last["label"] == "eval"


def test_composer_batches_with_speed_monitor():
    """`max_duration="16ba"` heads the run's batch (`[batch=11/16]`); SpeedMonitor adds the
    throughput and its wall clock (`time/train`, in hours), which is no step time.  Batch 11
    took 0.5 s more: 1.63 batches/s against ~18."""
    recs = parse_file("composer-0.32.1_console-logger_max-duration-batches.log")
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [(r["step"], r["total_steps"]) for r in prog] == [(n, 16) for n in range(1, 17)]
    assert prog[10]["it_per_s"] == 1.6304 and prog[10]["samples_per_s"] == 13.0432
    assert min(r["it_per_s"] for r in prog[1:] if r["step"] != 11) > 14
    assert "it_per_s" not in prog[0] and all("step_time_ms" not in r for r in prog)


@pytest.mark.parametrize("duration", ["epochs", "batches"])
def test_composer_progress_bar_gives_the_console_loggers_steps(duration):
    """Composer's default output, its progress bar, of the same seeded run as the console
    logger's: the same steps, losses and epochs, though each epoch's bar counts from 0 again
    and shows each batch's loss before it counts the batch.  Each evaluation's bar is one eval
    record at the step it followed; its metric, cut by the bar's 120 columns, is left out."""
    bar = parse_file(f"composer-0.32.1_progress-bar_max-duration-{duration}.log")
    console = parse_file(f"composer-0.32.1_console-logger_max-duration-{duration}.log")
    progress = [[(r["step"], r["loss"], r.get("epoch")) for r in recs if r["kind"] == "progress"]
                for recs in (bar, console)]
    assert progress[0] == progress[1] and len(progress[0]) == 16
    assert {r["framework"] for r in bar} == {"composer"}
    evals = [r for r in bar if r["kind"] == "eval"]
    assert [(r["step"], r["label"], r["batches"], r["total_batches"]) for r in evals] == [
        (8, "eval", 2, 2), (16, "eval", 2, 2)]
    assert not any("metrics" in r for r in evals)
    assert [r["step"] for r in console if r["kind"] == "eval" and r["phase"] == "result"] == [8, 16]


def test_mmengine_by_epoch():
    """MMEngine 0.10.7's Runner, `by_epoch`, logged every iteration: `Epoch(train) [2][3/8]`
    is the 3rd iteration of epoch 2, the run's 11th, which slept 0.5 s more; `time` and
    `data_time` are seconds, the evaluation's result comes after its last batch."""
    recs = parse_file("mmengine-0.10.7_logger-hook_by-epochs.log")
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [r["step"] for r in prog] == list(range(1, 17))
    assert {r["framework"] for r in prog} == {"mmengine"}
    eleven = prog[10]
    assert (eleven["epoch"], eleven["iter_in_epoch"], eleven["step_time_ms"], eleven["loss"]) == (2, 3, 555.4, 1.2784)
    assert eleven["lanes_ms"] == {"input": 1.1}
    assert max(r["step_time_ms"] for r in prog if r["step"] != 11) < 80
    evals = [(r["step"], r["metrics"]) for r in recs if r["kind"] == "eval"]
    assert evals == [(8, {"accuracy": 39.0625}), (16, {"accuracy": 39.0625})]
    assert [(r["step"], r["action"]) for r in recs if r["kind"] == "checkpoint"] == [(8, "save"), (16, "save")]


def test_mmengine_by_iteration():
    """`by_epoch=False`: `Iter(train) [ 9/16]` is the run's iteration; after the evaluation at
    8, iteration 9 waited 2.0 s of its 2.05 for its batch (the data loader starting again)."""
    recs = parse_file("mmengine-0.10.7_logger-hook_by-iters.log")
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [(r["step"], r["total_steps"]) for r in prog] == [(n, 16) for n in range(1, 17)]
    nine = prog[8]
    assert (nine["step_time_ms"], nine["lanes_ms"]) == (2053.5, {"input": 2001.6})
    assert [r["step"] for r in recs if r["kind"] == "eval"] == [8, 16]


def test_torchrun_crash_culprit_then_victim():
    """The rank that raised, and the rank that failed because of it, each give one traceback
    event with its rank, in the order they were written; torchrun names the failed rank."""
    recs = parse_file("torch-2.15_torchrun-gloo_rank1-raises_2rank.log")
    errors = [r for r in recs if r["kind"] == "error"]
    culprit, victim, child, launcher, report = errors
    assert (culprit["rank"], culprit["step"], culprit["exception"], culprit["message"]) == (
        1, 3, "RuntimeError", "shape mismatch in batch 3 (user bug)")
    assert culprit["text"].startswith("Traceback (most recent call last):\n  File \"/job/crash.py\", line 13")
    assert (victim["rank"], victim["exception"], victim["victim"]) == (0, "RuntimeError", True)
    assert "Connection closed by peer" in victim["message"] and "victim" not in culprit
    assert (child["error"], child["local_rank"], child["exitcode"]) == ("child_failed", 1, 1)
    assert launcher["exception"] == "torch.distributed.elastic.multiprocessing.errors.ChildFailedError"
    # the report under it: the root cause (the job's rank, its host) and every rank that failed
    assert (report["error"], report["launcher"], report["first"], report["rank"], report["local_rank"]) == (
        "child_failed", "torchrun", True, 1, 1)
    assert (report["host"], report["exitcode"], report["pid"], report["at"], report["failed_ranks"]) == (
        "localhost", 1, 14146, "2026-11-29_22:21:32", [0, 1])
    assert "signal" not in report and "exception" not in report      # no `@record`: no traceback of its own
    assert [r["step"] for r in recs if r["kind"] == "progress"] == [1, 1, 2, 2, 3]


MAX_RESTARTS = "torch-2.15_torchrun{}-max-restarts-1_worker1-raises-at-5_2rank.log"


@pytest.mark.parametrize("tee", ["", "-tee3"], ids=["unlabelled", "tee3"])
def test_torchrun_starting_its_workers_again_is_a_restart(tee):
    """`torchrun --max-restarts 1`: rank 1 raises at step 5, the agent says so (`failed
    (exitcode: 1) local_rank: 1`) and starts both workers again, which print steps 1-10.  Their
    first step, no further on than the failed run's, says the run began again: one restart of
    every rank, step 0, before it; before, nothing told the two runs apart."""
    recs = parse_file(MAX_RESTARTS.format(tee))
    kinds = [(r["kind"], r.get("error")) for r in recs if r["kind"] != "progress"]
    assert kinds == [("error", "traceback"), ("error", "traceback"), ("error", "child_failed"), ("restart", None)]
    restart = next(r for r in recs if r["kind"] == "restart")
    assert (restart["rank"], restart["step"], restart["launcher"], restart["step_from"]) == (
        None, 0, "torchrun", "first_step_after")
    assert "failed (exitcode: 1) local_rank: 1" in restart["message"]
    after = recs[recs.index(restart) + 1:]
    assert sorted(r["step"] for r in after if r["kind"] == "progress") == sorted(list(range(1, 11)) * 2)


def test_a_failed_runs_agent_and_a_later_step_tell_of_no_restart():
    """torchrun's agent's failure with no step after it (the job ends), or with a step further on
    (another node's worker not stopped yet) is no restart; nor is a node's agent's, behind its
    label (the ranks after it may be any node's)."""
    failed = "E1207 11:10:44.489000 31243 torch/distributed/elastic/multiprocessing/api.py:1002] " \
             "failed (exitcode: 1) local_rank: 1 (pid: 31244) of binary: /venv/bin/python"
    steps = [f"step {n}/10 loss 2.0 step_time_ms 50.0" for n in (4, 5)]
    for lines in (steps + [failed], steps + [failed, "step 6/10 loss 2.0 step_time_ms 50.0"],
                  ["0: " + line for line in steps + [failed, "step 1/10 loss 2.0 step_time_ms 50.0"]]):
        recs, _ = feed_all(lines)
        assert "restart" not in {r["kind"] for r in recs}
        assert any(r.get("error") == "child_failed" for r in recs)


def test_two_nodes_reports_each_name_their_own_first_failure():
    """Two torchruns (two nodes of two ranks); rank 3, on the second, raises.  Each node's report
    names its own first failure: the second's the culprit, the first's a rank that failed only
    because the culprit's connection closed (`victim`, as are the other victims' tracebacks)."""
    node0 = parse_file("torch-2.15_torchrun-2node_rank3-raises_node0.log")
    node1 = parse_file("torch-2.15_torchrun-2node_rank3-raises_node1.log")
    tracebacks = {r["rank"]: r.get("victim", False) for r in node0 + node1
                  if r["kind"] == "error" and r["error"] == "traceback" and r["rank"] is not None}
    assert tracebacks == {0: True, 1: True, 2: True, 3: False}
    (first0,) = [r for r in node0 if r.get("first")]
    (first1,) = [r for r in node1 if r.get("first")]
    assert (first0["rank"], first0["at"], first0["failed_ranks"]) == (0, "2026-12-02_21:11:40", [0, 1])
    assert (first1["rank"], first1["at"], first1["failed_ranks"]) == (3, "2026-12-02_21:11:39", [2, 3])


def test_mnist_example_loop_steps_and_test_results():
    """PyTorch's MNIST example prints the sample a logged batch starts at, not the batch: the
    step counts the positions printed, the epoch and the sample ride along, and each epoch's
    test pass is an evaluation after its last step."""
    recs = parse_file("torch-2.15_mnist-example-loop_1proc.log")
    progress = [r for r in recs if r["kind"] == "progress"]
    assert [r["step"] for r in progress] == list(range(1, 21)) and all(r["step_inferred"] for r in progress)
    assert (progress[1]["epoch"], progress[1]["loss"], progress[1]["metrics"]) == (
        1, 2.580177, {"sample": 640, "dataset_size": 6000, "epoch_pct": 11})
    assert (progress[10]["epoch"], progress[10]["metrics"]["sample"]) == (2, 0)
    evals = [r for r in recs if r["kind"] == "eval"]
    assert [(r["step"], r["loss"], r["metrics"]["accuracy"]) for r in evals] == [(10, 2.5514, 0.098), (20, 2.7545, 0.105)]


def test_mnist_example_loop_of_two_ranks_in_one_stream():
    """Two DDP ranks print every position into one pipe, often run into one line: each print
    of a position is the same step (ingest gives the second print of each to the next rank)."""
    recs = parse_file("torch-2.15_mnist-example-loop_torchrun-2rank.log")
    progress = [r for r in recs if r["kind"] == "progress"]
    assert [r["step"] for r in progress] == [s for s in range(1, 11) for _ in (0, 1)]
    assert [r["loss"] for r in progress[:2]] == [2.438573, 2.388279]     # cut apart from one line
    assert [(r["step"], r["metrics"]["correct"]) for r in recs if r["kind"] == "eval"] == [
        (5, 98), (5, 98), (10, 90), (10, 90)]


def test_srun_started_ranks_first_failed_task_and_victim():
    """srun starts each rank itself: it tells task 1's end first (`first`), then task 0's; rank
    0's traceback only says its peer went away."""
    recs = parse_file("slurm-22.05.8_torch-2.15_srun-label_rank1-raises_2task.log")
    ended = [(r["tasks"], r.get("first", False)) for r in recs if r.get("launcher") == "srun"]
    assert ended == [([1], True), ([0], False)]
    tracebacks = {r["rank"]: r.get("victim", False) for r in recs if r.get("error") == "traceback"}
    assert tracebacks == {1: False, 0: True}


def test_mlperf_logger_tracked_stats_and_evaluations():
    """mlcommons' logger: `tracked_stats` are progress at the step its metadata names, with the
    line's own time; an evaluation comes after the step reached; compliance keys give nothing."""
    recs = parse_file("mlperf-logging-4.1.68_mllog_tracked-stats_2blocks_cpu.log")
    progress = [r for r in recs if r["kind"] == "progress"]
    assert [r["step"] for r in progress] == list(range(5, 41, 5))
    first = progress[0]
    assert (first["framework"], first["loss"], first["lr"], first["log_time_s"]) == (
        "mlperf", 1.6054456233978271, 0.01, 1796246628.13)
    assert first["metrics"] == {"throughput": 20479.053703165606}
    evals = [(r["step"], r["phase"], r.get("epoch_num"), (r.get("metrics") or {}).get("accuracy") or r.get("status"))
             for r in recs if r["kind"] == "eval"]
    assert evals == [(20, "start", 1, None), (20, "result", 1, 0.46860490877781746),
                     (40, "start", 2, None), (40, "result", 2, 0.48578830523362476),
                     (40, "end", None, "success")]      # `run_stop`: the target reached
    assert len(recs) == 13


def test_rendezvous_store_timeout_says_how_many_joined():
    """A process that never joined the rendezvous: the store's timeout, one error, with how long
    it waited and how many of the job's processes came."""
    (timeout,) = [r for r in parse_file("torch-2.15_gloo-init_rank1-never-joins_store-timeout.log") if r["kind"] == "error"]
    assert (timeout["error"], timeout["exception"], timeout["timeout_s"], timeout["joined"], timeout["expected"]) == (
        "rendezvous_timeout", "torch.distributed.DistStoreError", 6, 1, 2)
    # the same as a line of its own (a launcher's prefix in front, as torch's excepthook writes it)
    recs, _ = feed_all(["[rank0]: torch.distributed.DistStoreError: Timed out after 901 seconds waiting for "
                        "clients. 7/8 clients joined."])
    assert [(r["error"], r["rank"], r["joined"], r["expected"]) for r in recs] == [("rendezvous_timeout", 0, 7, 8)]


def test_torchrun_report_cut_short_ends_at_a_line_of_something_else():
    """A report whose closing rule never came (the log cut, or srun's own line after it): what
    was read of it still names the first failure, and the next line is read as any line."""
    lines = (CAPTURED / "torch-2.15_torchrun-gloo_rank1-raises_2rank.log").read_text().splitlines()
    cut = lines[:-1] + ["srun: error: node-3: task 0: Exited with exit code 1"]
    recs, _ = feed_all(cut)
    tail = [(r["error"], r["rank"], r.get("launcher")) for r in recs if r["kind"] == "error"][-2:]
    assert tail == [("child_failed", 1, "torchrun"), ("child_failed", None, "srun")]


def test_torchrun_report_of_a_recorded_entry_point():
    """With torch's `@record`, the report carries the root cause's own exception; the lines of
    its traceback and of the report give no other record."""
    recs = parse_file("torch-2.15_torchrun-record_rank1-raises_2rank.log")
    errors = [(r["rank"], r["error"], r.get("launcher"), r.get("exception")) for r in recs if r["kind"] == "error"]
    assert errors == [
        (1, "traceback", None, "RuntimeError"), (None, "child_failed", None, None),
        (None, "traceback", None, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError"),
        (1, "child_failed", "torchrun", "RuntimeError: shape mismatch in batch 3 (user bug)")]
    report = recs[-1]
    assert (report["exitcode"], report["failed_ranks"], report["step"]) == (1, [0, 1], 3)
    assert report["error_file"].endswith("/attempt_0/1/error.json")


@pytest.mark.parametrize("name", ["torch-2.15_torchrun-tee3_rank1-raises_2rank.log",
                                  "torch-2.15_torchrun-prefix-template-rank_rank1-raises_2rank.log"])
def test_torchrun_prefixed_streams(name):
    """`--tee 3` prefixes each line with its rank, in either form: the steps and the two
    tracebacks each carry theirs."""
    recs = parse_file(name)
    steps = sorted((r["rank"], r["step"]) for r in recs if r["kind"] == "progress")
    assert steps == [(0, 1), (0, 2), (0, 3), (1, 1), (1, 2)]
    tracebacks = {r["rank"]: r for r in recs if r["kind"] == "error" and r["error"] == "traceback"}
    assert tracebacks[1]["message"] == "shape mismatch in batch 3 (user bug)"
    assert "Connection closed by peer" in tracebacks[0]["message"]
    assert tracebacks[None]["exception"].endswith("ChildFailedError")


TEE_SPLIT = "torch-2.15_torchrun-tee3_lines-in-two-writes_3rank.log"


def _steps(recs: list[dict]) -> list[tuple]:
    return sorted((r["rank"], r["step"], r["loss"], r["step_time_ms"]) for r in recs
                  if r["kind"] == "progress")


MPI_SPLIT = "openmpi-4.1.4_mpirun-tag-output_lines-in-two-writes_3rank.log"


@pytest.mark.parametrize("name, glued", [
    (TEE_SPLIT, [b"step_time_ms 300.0[default1]:step 2/4", b"[default1]:step 3/4 lo[default2]:step 3/4"]),
    (MPI_SPLIT, [b"step_time_ms 300.0[1,1]<stdout>:step 3/4 lo[1,2]<stdout>:step 3/4"])])
def test_lines_written_in_two_parts(name, glued):
    """torchrun's `--tee` and mpirun's `--tag-output` write the first part of a line alone
    when the rank has not written its newline yet, and the rest behind the prefix again: a
    rank's text then runs into another rank's line.  Each rank's line is put back together,
    with its own values; none is lost, and no rank is given another's."""
    data = (CAPTURED / name).read_bytes()
    assert all(text in data for text in glued)
    want = [(rank, step, float(f"2.30{rank}"), float(f"300.{rank}"))
            for rank in range(3) for step in range(1, 5)]
    assert _steps(parse_file(name)) == want
    d = Dispatcher()
    by_line = [r for line in data.splitlines(keepends=True) for r in d.feed(line)]
    assert _steps(by_line + d.flush()) == want
    d = Dispatcher()
    assert _steps(d.feed_chunk(data.decode()) + d.flush()) == want


TEE_ROLE = "torch-2.15_torchrun-tee3-role-trainer_lines-in-two-writes_3rank.log"
TEE_HOST = "torch-2.15_torchrun-tee3-prefix-hostname-rank_lines-in-two-writes_3rank.log"


@pytest.mark.parametrize("name, template, glued", [
    (TEE_ROLE, "[trainer${local_rank}]:", b"[trainer1]:step 3/4 lo[trainer2]:step 3/4"),
    (TEE_ROLE, "[${role_name}${local_rank}]:", b"[trainer1]:step 3/4 lo[trainer2]:step 3/4"),
    (TEE_HOST, "${hostname}:${rank}: ", b"vm:1: step 3/4 lovm:0: \n")])
def test_torchrun_prefix_of_another_role_or_template(name, template, glued):
    """torchrun `--role trainer`, and the template its docs give for a job of several nodes
    (`--log-line-prefix-template '${hostname}:${rank}: '`): told the template (`parse
    --prefix-template`), the parsers read each worker's lines as they read `[defaultN]:`, the
    parts of lines written in two included, whole, line by line and in blocks of any size."""
    data = (CAPTURED / name).read_bytes()
    assert glued in data
    want = [(rank, step, float(f"2.30{rank}"), float(f"300.{rank}"))
            for rank in range(3) for step in range(1, 5)]
    d = Dispatcher(tee_prefix=TeePrefix(template))
    assert _steps(d.feed_chunk(data) + d.flush()) == want
    d = Dispatcher(tee_prefix=TeePrefix(template))
    assert _steps([r for line in data.splitlines(keepends=True) for r in d.feed(line)] + d.flush()) == want
    for seed in range(10):
        d, recs = Dispatcher(tee_prefix=TeePrefix(template)), []
        lines = data.splitlines(keepends=True)
        cuts = sorted(random.Random(seed).sample(range(1, len(lines)), 4))
        for a, b in zip([0] + cuts, cuts + [len(lines)]):
            recs += d.feed_chunk(b"".join(lines[a:b]))
        assert _steps(recs + d.flush()) == want
    # not told, the workers' lines are read without their ranks
    assert {r["rank"] for r in parse_file(name) if r["kind"] == "progress"} == {None}


def test_torchrun_tee_part_of_a_line_the_stream_ended_in():
    """A rank whose last line never got its newline: the held part is read at the end."""
    d = Dispatcher()
    recs = d.feed_chunk(b"[default0]:step 1/2 loss 2.5 step_time_ms 90.5[default1]:step 1/2 loss "
                        b"2.4 step_time_ms 91.5\n")
    assert [(r["rank"], r["step"]) for r in recs] == [(1, 1)]
    assert [(r["rank"], r["step"], r["step_time_ms"]) for r in d.flush()] == [(0, 1, 90.5)]
    assert (d.stats["records"], d.stats["lines"]) == (2, 1)


TEE_BARS = "torch-2.15_tqdm-4.70.1_torchrun-tee3_bars-of-2-ranks-interleaved_stderr.log"
TEE_BARS_STEPS = ([(0, step, round(2.5 - step / 10, 3)) for step in range(1, 11)]
                  + [(1, step, round(2.49 - step / 10, 3)) for step in range(1, 11)])
"""Each rank's steps with their own losses: the loop sets step N's after it, before tqdm counts
it (step N's last redraw shows step N + 1's)."""


def test_torchrun_tee_bars_of_two_ranks_at_once():
    """Two ranks' tqdm bars behind `--tee`, drawn at the same time.  torchrun's tail thread
    reads each rank's file in text mode, so every `\r` reaches us as a newline: each redraw
    is a line, whose text it passes on as soon as it reads it and whose newline comes with the
    rank's next redraw, often after another rank's text.  Each rank gets its own steps."""
    data = (CAPTURED / TEE_BARS).read_bytes()
    assert b"\r" not in data and b"/10 [00:00<?, ?it/s][default1]:\n" in data
    recs = parse_file(TEE_BARS)
    got = sorted((r["rank"], r["step"], r["loss"]) for r in recs if r["kind"] == "progress")
    assert got == TEE_BARS_STEPS
    assert {(r["framework"], r["total_steps"]) for r in recs} == {("generic", 10)}


@pytest.mark.parametrize("seed", range(4))
def test_torchrun_tee_bars_of_two_ranks_read_as_the_probe_reads(seed):
    """The same bytes in reads of random sizes, cut into lines and redraws as the log probe
    cuts them (`cut_read`): the same records."""
    from ridgescope.probes.logprobe import cut_read

    data = (CAPTURED / TEE_BARS).read_bytes()
    rng = random.Random(seed)
    d, recs, pending, since, pos = Dispatcher(), [], b"", 0, 0
    while pos < len(data):
        size = rng.randint(1, 300)
        parts, pending, since = cut_read(pending, since, data[pos:pos + size], pos)
        pos += size
        for _, lines, redraws in parts:
            recs += d.feed_chunk(lines) if lines else []
            recs += d.feed_redraws(redraws) if redraws else []
    recs += (d.feed_chunk(pending) if pending else []) + d.flush()
    assert recs == parse_file(TEE_BARS)


MPI_BARS = "openmpi-4.1.4_tqdm-4.70.1_mpirun-tag-output_bars-of-2-ranks-interleaved_stderr.log"


def test_mpirun_bars_of_two_ranks_at_once():
    """mpirun keeps the bars' `\r`: both ranks' redraws run on one line for the whole bar,
    each behind its rank's prefix.  Each rank gets its own steps, as from torchrun."""
    data = (CAPTURED / MPI_BARS).read_bytes()
    assert b"loss=2.400][1,1]<stderr>:\rTraining:" in data
    recs = parse_file(MPI_BARS)
    assert sorted((r["rank"], r["step"], r["loss"]) for r in recs if r["kind"] == "progress") == (
        TEE_BARS_STEPS)


def prefixed_writes(data: bytes) -> list[bytes]:
    """A stream whose launcher prefixes each write, cut into those writes."""
    return [w for w in re.split(rb"(?=\[1,\d\]<std(?:out|err)>:)", data) if w]


def test_mpirun_bars_read_as_the_probe_reads():
    """Read a write at a time, with the number of the read as its time: each rank's step
    carries the read that first drew it, though another rank's redraws came between; and
    in reads of random sizes, the records are those of the whole file.  (Before, the live
    path gave every redraw of the line to the rank whose prefix began it.)"""
    from ridgescope.parsers.base import CLOCK
    from ridgescope.probes.logprobe import cut_read

    data = (CAPTURED / MPI_BARS).read_bytes()
    writes = prefixed_writes(data)
    first: dict = {}
    for i, write in enumerate(writes):
        for m in re.finditer(rb"\| *(\d+)/10 \[", write):
            first.setdefault((int(write[3:4]), int(m.group(1))), i)
    for reads, clocked in ((writes, True), (_random_cuts(data, 7), False), (_random_cuts(data, 8), False)):
        d, recs, pending, since = Dispatcher(), [], b"", 0
        try:
            for i, piece in enumerate(reads):
                parts, pending, since = cut_read(pending, since, piece, i)
                for drawn_ns, lines, redraws in parts:
                    CLOCK.now_ns = drawn_ns if clocked else None
                    recs += d.feed_chunk(lines) if lines else []
                    recs += d.feed_redraws(redraws) if redraws else []
            recs += (d.feed_chunk(pending) if pending else []) + d.flush()
        finally:
            CLOCK.now_ns = None
        progress = [r for r in recs if r["kind"] == "progress"]
        if clocked:
            assert sorted((r["rank"], r["step"], r["drawn_ns"]) for r in progress) == sorted(
                (rank, step, first[rank, step]) for rank, step, _ in TEE_BARS_STEPS)
            recs = [{k: v for k, v in r.items() if k != "drawn_ns"} for r in recs]
        # in the order drawn, where the whole file gives each rank's line when it ends
        assert sorted(recs, key=repr) == sorted(parse_file(MPI_BARS), key=repr)


def _random_cuts(data: bytes, seed: int) -> list[bytes]:
    rng, out, pos = random.Random(seed), [], 0
    while pos < len(data):
        size = rng.randint(1, 300)
        out.append(data[pos:pos + size])
        pos += size
    return out


def behind_prefix_on_every_write(data: bytes, rank: int) -> bytes:
    """`data` behind the rank's `[defaultN]:` on every write (a bar's redraw with its `\r`, the
    rest of a line), as a tail that passes a rank's bytes on unchanged would write it.
    (torchrun's own tail turns each `\r` into a newline: see the two-rank bars above.)"""
    pieces = re.findall(rb"\r?[^\r\n]*\n?", data)
    return b"".join(b"[default%d]:%b" % (rank, piece) for piece in pieces if piece)


@pytest.mark.parametrize("name", ["accelerate-1.15.0_own-loop_tqdm-steps-bar_pipe.log",
                                  "keras-3.15.1_fit-verbose1-evaluate-predict_pipe.log",
                                  "transformers-5.24.0_trainer_tqdm_pipe.log",
                                  "lightning-2.6.6_tqdmprogressbar_pipe.log",
                                  "lightning-2.6.6_tqdmprogressbar_iterable-no-length_pipe.log",
                                  "keras-3.15.1_fit-325-step-epochs_pipe.log"])
def test_bar_behind_a_prefix_on_every_redraw(name):
    """A rank's bar behind the prefix on every redraw gives the steps of the bar alone."""
    data = (CAPTURED / name).read_bytes()
    alone = [r["step"] for r in parse_file(name) if r["kind"] == "progress"]
    d = Dispatcher()
    teed = d.feed_chunk(behind_prefix_on_every_write(data, 3)) + d.flush()
    assert [(r["rank"], r["step"]) for r in teed if r["kind"] == "progress"] == [
        (3, step) for step in alone]
    assert len(alone) >= 11 and d.stats["garbage"] == 0


def test_hf_trainer_5_resume():
    """A resumed run: the checkpoint loaded, the restart at global step 8 (not at the epoch the
    line names first), and the steps that follow from 10 on."""
    recs = parse_file("transformers-5.24.0_trainer_resume-from-checkpoint-8_pipe.log")
    (load,) = [r for r in recs if r["kind"] == "checkpoint" and r["action"] == "load"]
    assert (load["step"], load["path"]) == (8, "/tmp/out/checkpoint-8")
    (restart,) = [r for r in recs if r["kind"] == "restart"]
    assert (restart["step"], restart["epoch"]) == (8, 1)
    logged = [r["step"] for r in recs if r["kind"] == "progress" and "loss" in r and not r.get("summary")]
    assert logged == [10, 12, 14, 16]


def test_lightning_checkpoint_and_resume():
    """The verbose ModelCheckpoint message (after the bar's last redraw, on its line), the restore
    of the resumed fit, and every step once across both fits."""
    recs = parse_file("lightning-2.6.6_modelcheckpoint-verbose_resume_pipe.log")
    path = "/tmp/lckpt/epoch=0-step=8.ckpt"
    ckpts = [(r["action"], r["phase"], r["step"], r["path"]) for r in recs if r["kind"] == "checkpoint"]
    assert ckpts == [("save", "start", 8, path), ("load", "start", 8, path), ("load", "end", 8, path)]
    assert [r["step"] for r in recs if r["kind"] == "restart"] == [8]
    assert sorted(r["step"] for r in recs if r["kind"] == "progress") == list(range(1, 17))


def test_own_loop_steps_bar():
    """A loop of one's own with diffusers' `Steps` bar: each step's last redraw is one record,
    with the loss and the learning rate of its postfix."""
    recs = parse_file("accelerate-1.15.0_own-loop_tqdm-steps-bar_pipe.log")
    assert [r["step"] for r in recs] == list(range(1, 25))
    assert {(r["kind"], r["framework"], r["total_steps"], r["lr"]) for r in recs} == {("progress", "generic", 24, 0.01)}
    assert (recs[0]["loss"], recs[2]["loss"], recs[-1]["loss"], recs[-1]["it_per_s"]) == (1.42, 8.25, 1.49, 13.39)


def test_own_loop_nested_bars():
    """The inner `Iteration` bar starts again at each epoch: its steps run on after the epoch
    before (redrawn every other step here); the outer `Epoch` bar gives nothing.  The loop sets
    each step's loss before tqdm counts the step: a step's loss is the one drawn with its count
    (its last redraw shows a later step's, 0.921 for step 14)."""
    recs = parse_file("accelerate-1.15.0_own-loop_tqdm-epoch-iteration-bars_pipe.log")
    assert [r["step"] for r in recs] == list(range(2, 25, 2))
    assert [r.get("iter_in_epoch") for r in recs[5:8]] == [None, 2, 4]
    assert recs[6]["step_inferred"] and (recs[6]["loss"], recs[6]["total_steps"]) == (1.36, 12)


def test_own_loop_bar_with_no_total():
    """A loop over an iterable with no length (a streaming dataset's loader): tqdm's `train`
    bar counts with no total (`train: 3it [00:00,  6.64it/s, loss=1.8]`).  Each epoch's steps
    run on after the one before, each with the loss set after it; the evaluation's unlabelled
    bar gives nothing; the second epoch's slow third step draws the lowest rate."""
    recs = parse_file("tqdm-4.70.1_own-loop_unsized-bar_pipe.log")
    assert [r["step"] for r in recs] == list(range(1, 11))
    assert {(r["kind"], r["framework"], r.get("total_steps")) for r in recs} == {("progress", "generic", None)}
    assert [r["loss"] for r in recs] == [2.0, 1.9, 1.8, 1.7, 1.6, 1.5, 1.4, 1.3, 1.2, 1.1]
    assert [r.get("iter_in_epoch") for r in recs[4:7]] == [None, 1, 2] and recs[5]["step_inferred"]
    assert min(recs, key=lambda r: r["it_per_s"])["step"] == 8


def test_accelerate_example_prints_each_epochs_evaluation():
    """Accelerate's examples print each epoch's metrics with no step and draw no bar:
    `epoch 0: {'accuracy': 0.8125, 'f1': 0.82...}`, one evaluation each, on no framework's stream."""
    recs = parse_file("accelerate-1.16.0_own-loop_epoch-eval-print.log")
    assert [(r["kind"], r["phase"], r["step"], r["epoch"], r["accuracy"]) for r in recs] == [
        ("eval", "result", None, 0, 0.8125), ("eval", "result", None, 1, 0.875), ("eval", "result", None, 2, 0.875)]
    assert recs[0]["f1"] == 0.8235294117647058


def test_no_trainer_script_logs_each_epochs_evaluation_after_the_bar():
    """Transformers' `*_no_trainer.py` scripts log `epoch 0: perplexity: P eval_loss: L` to the
    stream of their unlabelled bar, so that it runs on after the redraw of the epoch's last step
    (`6/18 [...]12/04/2026 21:33:32 - INFO - __main__ - [RANK 0] epoch 0: ...`): an evaluation
    at that step, its loss the evaluation's.  The bar's steps are read as before."""
    recs = parse_file("transformers-no-trainer_accelerate-1.16.0_epoch-eval-logger_pipe.log")
    assert [r["step"] for r in recs if r["kind"] == "progress"] == list(range(2, 19, 2))
    evals = [(r["step"], r["epoch"], r["loss"], r["perplexity"]) for r in recs if r["kind"] == "eval"]
    assert evals == [(6, 0, 0.5794653296470642, 1.785083744195989), (12, 1, 0.47215935587882996, 1.6034528830117116),
                     (18, 2, 0.4215226173400879, 1.524280685800031)]
    assert {r["framework"] for r in recs} == {"hf_trainer"}


@pytest.mark.parametrize("script,evals", [
    ("translation-bleu", [(6, {"bleu": 81.25}), (12, {"bleu": 87.5}), (18, {"bleu": 87.5})]),
    ("summarization-rouge", [(6, {"rouge1": 75.0, "rouge2": 37.5, "rougeL": 75.0, "rougeLsum": 75.0}),
                             (12, {"rouge1": 87.5, "rouge2": 43.75, "rougeL": 87.5, "rougeLsum": 87.5}),
                             (18, {"rouge1": 87.5, "rouge2": 43.75, "rougeL": 87.5, "rougeLsum": 87.5})]),
    ("qa-evaluation-metrics", [(18, {"exact_match": 87.5, "f1": 87.5})])])
def test_no_trainer_scripts_log_their_scores_with_neither_step_nor_epoch(script, evals):
    """`run_translation_no_trainer.py` logs `{'bleu': B}` after each epoch, the summarization
    script its ROUGE dict, the QA script `Evaluation metrics: {...}` once after training, each
    run on after the bar's redraw: an evaluation at the step the bar shows."""
    recs = parse_file(f"transformers-no-trainer_accelerate-1.16.0_{script}-logger_pipe.log")
    assert [r["step"] for r in recs if r["kind"] == "progress"] == list(range(2, 19, 2))
    got = [(r["step"], {k: v for k, v in r.items() if k not in ("kind", "rank", "step", "framework", "phase")})
           for r in recs if r["kind"] == "eval"]
    assert got == evals


def test_jax_loop_logging_metrics_as_pprint_spreads_them():
    """EasyLM and the other mlxu-based JAX trainers log each `log_freq`-th step's metrics with
    `tqdm.write("\\n" + pprint.pformat(log_metrics) + "\\n")`: one item a line, each value a
    NumPy array of no dimension (`array(212.1586, dtype=float32)`), between redraws of a bar
    drawn with no cells and no label.  Each dict is its step's record."""
    recs = parse_file("jax-0.10.2_easylm-style_pformat-metrics_ncols0-bar_pipe.log")
    assert [(r["kind"], r["step"], r["loss"]) for r in recs] == [
        ("progress", 0, 212.1586), ("progress", 3, 49.60297), ("progress", 6, 14.387232), ("progress", 9, 4.871448)]
    assert (recs[0]["lr"], recs[0]["grad_norm"], recs[0]["metrics"]) == (0.1, 31.110884, {"param_norm": 3.1110885})


def test_bars_that_are_no_training_steps():
    """Downloads, `datasets.map`, checkpoint shards and evaluation bars, on a stream no framework
    claims, give no step."""
    d = Dispatcher()
    lines = ["Map: 100%|██████████| 1000/1000 [00:00<00:00, 9950.32 examples/s]",
             "Loading checkpoint shards: 100%|██████████| 3/3 [00:02<00:00,  1.10it/s]",
             "Evaluating: 100%|██████████| 50/50 [00:03<00:00, 15.2it/s, loss=1.2]",
             " 50%|█████     | 5/10 [00:01<00:01,  5.00it/s]",
             "Evaluating: 12it [00:03, 4.00it/s, loss=1.2]", "12it [00:03,  4.00it/s]",
             "Downloading: 1.2kit [00:03, 400it/s]"]
    assert [r for line in lines for r in d.feed(line)] + d.flush() == []


def test_gloo_collective_timeout_marks_the_waiting_rank():
    """On a collective timeout, the rank that raises is the one that waited: its traceback says
    so (`gloo_timeout`, how long, for which operation).  Rank 1, which stalled, prints nothing."""
    recs = parse_file("torch-2.15_torchrun-gloo_rank1-stalls_collective-timeout_2rank.log")
    (timeout,) = [r for r in recs if r["kind"] == "error" and r["error"] == "gloo_timeout"]
    assert (timeout["rank"], timeout["step"], timeout["timeout_ms"], timeout["op"]) == (0, 2, 5000, "recv")
    # torchrun's first failure is the first process to end: the one that waited, not the culprit
    (report,) = [r for r in recs if r.get("launcher") == "torchrun"]
    assert (report["rank"], report["failed_ranks"]) == (0, [0, 1])
    assert [r["step"] for r in recs if r["kind"] == "progress"] == [1, 1, 2, 2]


def _keras(name: str) -> tuple[list[dict], dict]:
    d = Dispatcher()
    out = d.feed_chunk((CAPTURED / name).read_bytes())
    return out + d.flush(), d.stats


def test_keras_fit_bar_one_record_per_step():
    """Keras 3 redraws its bar after backspaces, in colour: each step once, counted on across
    epochs, with the epoch's running loss and mean step time; the slow step (step 11 of epoch
    2, 600 ms against 60) shows in that mean; each epoch's validation, then `evaluate`, give
    eval records, and `predict`'s bar, with no metrics, nothing."""
    recs, stats = _keras("keras-3.15.1_fit-verbose1-evaluate-predict_pipe.log")
    assert (stats["garbage"], stats["truncated"]) == (0, 0)
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [r["step"] for r in prog] == list(range(1, 33))
    by_step = {r["step"]: r for r in prog}
    first = by_step[1]
    assert (first["epoch"], first["iter_in_epoch"], first["total_steps"], first["loss"]) == (1, 1, 32, 0.7265)
    assert (first["step_avg_ms"], first["metrics"]) == (91.0, {"accuracy": 0.4375})
    assert (by_step[17]["epoch"], by_step[17]["iter_in_epoch"]) == (2, 1)
    assert (by_step[26]["step_avg_ms"], by_step[27]["step_avg_ms"]) == (94.0, 147.0)
    assert (by_step[16]["epoch_time_s"], by_step[32]["loss"]) == (2.0, 0.6715)
    assert "epoch_time_s" not in by_step[15]          # mid-epoch, the bar's time is an ETA
    evals = [(r["step"], r["phase"], r["loss"], r["metrics"]["accuracy"]) for r in recs if r["kind"] == "eval"]
    assert evals == [(16, "validation", 0.6836, 0.5469), (32, "validation", 0.6569, 0.6094),
                     (32, "evaluate", 0.6648, 0.5813)]
    assert {r["framework"] for r in recs} == {"keras"}


def test_keras_fit_verbose_2():
    """`verbose=2`: one line per epoch, its last step, with the epoch's time."""
    recs, _ = _keras("keras-3.15.1_fit-verbose2_pipe.log")
    assert [(r["kind"], r["step"], r["loss"]) for r in recs] == [
        ("progress", 16, 0.6923), ("eval", 16, 0.6836), ("progress", 32, 0.6715), ("eval", 32, 0.6569)]
    assert [(r["step_avg_ms"], r["epoch_time_s"]) for r in recs if r["kind"] == "progress"] == [(94.0, 2.0), (109.0, 2.0)]


def test_keras_model_checkpoint_messages():
    """ModelCheckpoint(verbose=1) says when it starts and ends a save, at the epoch's last step,
    which its bar has not finished redrawing yet."""
    recs, _ = _keras("keras-3.15.1_fit-modelcheckpoint-verbose_pipe.log")
    saves = [(r["step"], r["epoch"], r["phase"], r["path"]) for r in recs if r["kind"] == "checkpoint"]
    assert saves == [(16, 1, "start", "/tmp/kckpt/best.keras"), (16, 1, "end", "/tmp/kckpt/best.keras"),
                     (32, 2, "start", "/tmp/kckpt/best.keras"), (32, 2, "end", "/tmp/kckpt/best.keras")]
    assert [r["step"] for r in recs if r["kind"] == "progress"] == list(range(1, 33))


def test_keras_epoch_of_325_steps():
    """An epoch's redraws are one line of 73 KB: every step is read, none lost to the cut."""
    recs, stats = _keras("keras-3.15.1_fit-325-step-epochs_pipe.log")
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [r["step"] for r in prog] == list(range(1, 651))
    assert (stats["lines"], stats["truncated"], stats["garbage"]) == (4, 0, 0)
    slow = prog[335]
    assert (slow["epoch"], slow["iter_in_epoch"], slow["step_avg_ms"], prog[334]["step_avg_ms"]) == (2, 11, 123.0, 69.0)
    assert (prog[-1]["epoch_time_s"], prog[-1]["loss"]) == (25.0, 0.5223)


def _by_kind(recs: list[dict], kind: str) -> list[dict]:
    return [r for r in recs if r["kind"] == kind]


def test_olmo_core_records_of_a_real_run():
    """OLMo-core's own trainer: BPS gives the step's time, the data loading time its input
    lane; numbers in its own format (`2.107B`) are read and never end a record early."""
    recs = parse_file("olmo-core-3.0.0_trainer_1rank_plain_cpu.log")
    prog = _by_kind(recs, "progress")
    assert sorted({r["step"] for r in prog}) == list(range(1, 21))
    assert all(r["framework"] == "olmo" and r["total_steps"] == 20 for r in prog)
    by_step = {r["step"]: r for r in prog if r.get("loss") is not None}
    assert len(by_step) == 20                                   # every step's loss
    seven, thirteen = by_step[7], by_step[13]
    assert (seven["loss"], seven["it_per_s"], seven["step_time_ms"]) == (6.264, 1.897, approx(1000 / 1.897))
    assert seven["metrics"]["throughput/device/flopsPS (actual avg)"] == 2.107e9
    assert seven["metrics"]["throughput/total petaflops"] == 1.59e-06
    assert thirteen["lanes_ms"] == {"input": 500.6} and thirteen["step_time_ms"] == approx(1000 / 1.947)
    assert max(r.get("lanes_ms", {}).get("input", 0) for r in prog if r["step"] != 13) < 20
    # a step saved to a checkpoint: its loss, then its throughput and the save's time
    eight = [r for r in prog if r["step"] == 8]
    assert [(r.get("loss"), r.get("step_time_ms")) for r in eight] == [(6.252, None), (None, approx(1000 / 8.159))]
    assert eight[1]["lanes_ms"] == {"checkpoint": 83.0, "input": 9.7}
    ckpt = [(r["phase"], r["step"]) for r in _by_kind(recs, "checkpoint")]
    assert ckpt == [("start", 0), ("end", None), ("start", 8), ("end", 8), ("start", 16), ("end", 16),
                    ("start", 20), ("end", 20)]
    evals = [(r["phase"], r["step"], r["label"], r.get("duration_ms"), r.get("metrics")) for r in _by_kind(recs, "eval")]
    assert evals == [("start", 10, "lm", None, None),
                     ("result", 10, "lm", 500.0, {"random-val/CE loss": 6.07, "random-val/PPL": 432.6}),
                     ("start", 20, "lm", None, None),
                     ("result", 20, "lm", 400.0, {"random-val/CE loss": 6.069, "random-val/PPL": 432.4})]


def test_olmo_core_rich_format_gives_the_same_steps():
    plain = parse_file("olmo-core-3.0.0_trainer_1rank_plain_cpu.log")
    rich = parse_file("olmo-core-3.0.0_trainer_1rank_rich_cpu.log")
    assert [(r["kind"], r["step"], r.get("loss")) for r in rich] == [(r["kind"], r["step"], r.get("loss")) for r in plain]
    slow = [r["step"] for r in _by_kind(rich, "progress") if (r.get("step_time_ms") or 0) > 250]
    assert slow == [7, 10, 13, 20]          # the slow forward, two evaluations, the slow batch


def test_olmo_core_two_ranks_records_late():
    """Metrics reduced in the background: records come after later steps' checkpoint and
    evaluation lines, and each is still whole."""
    recs = parse_file("olmo-core-3.0.0_trainer_2rank_plain_cpu.log")
    prog = _by_kind(recs, "progress")
    assert sorted({r["step"] for r in prog}) == list(range(1, 21))
    assert len({r["step"] for r in prog if r.get("loss") is not None}) == 20
    order = [(r["kind"], r["step"]) for r in recs]
    assert order.index(("checkpoint", 16)) < order.index(("progress", 13))
    (thirteen,) = [r for r in prog if r["step"] == 13]
    assert thirteen["lanes_ms"] == {"input": 504.3}
    results = [r for r in recs if r["kind"] == "eval" and r["phase"] == "result"]
    assert [r["metrics"]["random-val/CE loss"] for r in results] == [6.069, 6.069]
    # each evaluation ran in the step whose record counts its batches (10, 20), printed after
    # later steps' records: its records go right before that step's
    evals = [(r["phase"], r["step"]) for r in _by_kind(recs, "eval")]
    assert evals == [("start", 10), ("result", 10), ("start", 20), ("result", 20)]
    assert order[order.index(("eval", 10)) + 2] == ("progress", 10)
    assert order.index(("progress", 19)) < order.index(("eval", 20)) < order.index(("progress", 20))


def test_olmo_core_evaluation_without_in_loop_metrics_goes_on_some_steps_later():
    """An OLMo-core that logs no `throughput/in-loop eval` metric: the held evaluation keeps the
    step after the last record before it (4), and goes on EVAL_LAG steps after that one, before
    step 8's record."""
    head = "2026-11-30 17:16:45.352\tvm:0\tolmo_core.train.callbacks.console_logger:71\tINFO\t"
    lines = []
    for step in range(1, 9):
        lines += [f"{head}[step={step}/20,epoch=1]", "    train/CE loss=6.2"]
        if step == 3:
            lines += [f"{head}Running lm evals...", f"{head}Finished lm evals in 0.5 seconds. Metrics:",
                      "    random-val/CE loss=6.0"]
    recs, _ = feed_all(lines)
    order = [(r["kind"], r["step"]) for r in recs]
    assert order == [("progress", s) for s in range(1, 8)] + [("eval", 4), ("eval", 4), ("progress", 8)]
    # before any step record of its rank, an evaluation has no step: it goes on with the first
    olmo = OlmoParser()
    recs = [r for line in lines[6:9] + lines[:4] for r in olmo.parse(line, 1)] + olmo.flush()
    assert [(r["kind"], r["step"]) for r in recs] == [("eval", None), ("eval", None), ("progress", 1),
                                                      ("progress", 2)]


def test_litgpt_pretrain_with_accumulation():
    """A line per optimizer step, on its last micro-batch: its time is that micro-batch's, kept
    as `iter_time_ms`, never the step's; a slow earlier micro-batch shows nowhere."""
    recs = parse_file("litgpt-0.5.13_pretrain_accum_cpu.log")
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(1, 21))
    assert all(r["framework"] == "litgpt" and "step_time_ms" not in r for r in prog)
    assert [r["metrics"]["iter"] for r in prog] == list(range(2, 41, 2))
    assert (prog[11]["metrics"]["iter_time_ms"], prog[11]["loss"], prog[11]["epoch"]) == (504.26, 5.006, 2)
    evals = [(r["step"], r.get("label"), r["metrics"]) for r in _by_kind(recs, "eval")]
    assert evals[:2] == [(4, None, {"val_loss": 5.0401}), (8, None, {"val_loss": 5.0127})]
    assert evals[-1] == (20, "final", {"val_loss": 4.993, "val_ppl": 147.314})
    assert [(r["step"], r["path"]) for r in _by_kind(recs, "checkpoint")] == [
        (8, "out/accum/step-00000008/lit_model.pth"), (16, "out/accum/step-00000016/lit_model.pth"),
        (20, "out/accum/final/lit_model.pth")]
    hidden = _by_kind(parse_file("litgpt-0.5.13_pretrain_accumhid_cpu.log"), "progress")
    assert max(r["metrics"]["iter_time_ms"] for r in hidden) < 5


def test_litgpt_pretrain_every_iteration_a_step():
    prog = _by_kind(parse_file("litgpt-0.5.13_pretrain_noaccum_cpu.log"), "progress")
    assert [r["step"] for r in prog] == list(range(1, 21))
    slow = [(r["step"], r["step_time_ms"]) for r in prog if r["step_time_ms"] > 50]
    assert slow == [(1, 319.94), (12, 504.33)]      # the compilation, the slow loss call


@pytest.mark.parametrize("name, steps", [
    ("ultralytics-8.4.190_train-from-yaml_pipe.log", [1, 2, 3, 4, 5, 6, 8, 9, 10]),
    ("ultralytics-8.4.190_train-from-yaml_tty-stty120.log", [1, 2, 3, 4, 5, 6, 8, 10]),
])
def test_ultralytics_own_bar(name, steps):
    """Ultralytics 8.4's own bar: a record per batch drawn, its step run on across epochs, its
    losses those of its batch; a count never drawn has no record; validation is no step."""
    recs = parse_file(name)
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [r["step"] for r in prog] == steps
    assert all(r["total_steps"] == 10 for r in prog)
    by_step = {r["step"]: r for r in prog}
    assert [by_step[s]["metrics"]["box_loss"] for s in (1, 2, 3, 4)] == [5.778, 6.018, 6.078, 6.04]
    assert (by_step[4]["epoch"], by_step[4]["loss"], by_step[4]["mem_gb"]) == (2, 14.519, 0.0)
    assert by_step[3]["it_per_s"] == approx(1 / 1.7)     # `1.7s/it`, the slow batch's rate
    results = [r for r in recs if r["kind"] == "eval"]
    # after each epoch's last batch, and the best weights' at the end; on the terminal the
    # validation bar's label is cut to fit (`mAP50  mA\u2026`), and the box group's last name is
    # the one it always has
    assert [r["step"] for r in results] == [2, 4, 6, 8, 10, 10]
    assert results[0]["metrics"] == {"images": 4, "instances": 4, "box/P": 0, "box/R": 0, "box/mAP50": 0,
                                     "box/mAP50-95": 0}


@pytest.mark.parametrize("name", [
    "torchtune-0.6.1_full_finetune_single_device_pipe-unbuffered_cpu.log",
    "torchtune-0.6.1_full_finetune_single_device_pty_cpu.log",
    "torchtune-0.6.1_full_finetune_distributed_nproc2_pipe_cpu.log",
])
def test_torchtune_bar_and_its_logger_make_one_record_a_step(name):
    """The logger's `Step N | loss:.. lr:.. tokens_per_second_per_gpu:..` runs on after the
    bar's redraw of step N: the two make one record, and the slow batch shows in the rate."""
    recs = parse_file(name)
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(1, 25))
    assert all(r["lr"] == 2e-05 and r["epoch"] == (1 if r["step"] <= 12 else 2) for r in prog)
    # the bar's total is the epoch's steps, not the run's
    assert all(r["iters_per_epoch"] == 12 and "total_steps" not in r for r in prog)
    slow = 10 if "distributed" in name else 5
    rates = {r["step"]: r["tokens_per_s_per_gpu"] for r in prog}
    assert min(rates, key=rates.get) == slow and rates[slow] < 0.3 * max(rates.values())
    assert prog[4]["loss"] == 6.103287696838379
    saved = [(r["step"], r["path"].rsplit("/", 2)[-2]) for r in _by_kind(recs, "checkpoint")
             if r["phase"] == "end" and r.get("path", "").endswith(".safetensors")]
    assert saved == [(12, "epoch_0"), (24, "epoch_1")]    # each epoch's, at its last step


def test_torchtune_logger_lines_held_in_a_buffer():
    """Into a pipe the logger's lines come after the epoch's bar: a step already given by the
    bar keeps its record, and the line gives one of its own; the bar's last step, still held,
    takes its line."""
    prog = _by_kind(parse_file("torchtune-0.6.1_full_finetune_single_device_pipe_cpu.log"), "progress")
    drawn = [r["step"] for r in prog if "elapsed_s" in r]
    logged = [r["step"] for r in prog if "lr" in r]
    assert drawn == list(range(1, 25)) and sorted(logged) == list(range(1, 25))
    both = [r["step"] for r in prog if "elapsed_s" in r and "lr" in r]
    assert both == [12, 24]


def test_an_event_naming_its_step_keeps_it_after_a_drawn_step():
    """An event with no step of its own follows the step a loop's bar drew last; one that
    names its step keeps it."""
    bar = "1|12|Loss: 5.6: 100%|##########| 12/12 [00:06<00:00,  3.42it/s]"
    recs, _ = feed_all([bar, "Model checkpoint of size 0.04 GiB saved to /out/epoch_0/model.safetensors",
                        "Resuming from step 8"])
    events = [(r["kind"], r["step"]) for r in recs if r["kind"] != "progress"]
    assert events == [("checkpoint", 12), ("restart", 8)]


def _steps_by_rank(recs: list[dict]) -> dict:
    out: dict = {}
    for r in _by_kind(recs, "progress"):
        out.setdefault(r["rank"], []).append((r["step"], r["step_time_ms"]))
    return out


@pytest.mark.parametrize("name, slow", [
    ("ray-2.60.0_torchtrainer_2cpu-workers_train-v2_dedup-off.log", {(1, 8)}),
    ("ray-2.60.0_torchtrainer_2cpu-workers_train-v2_dedup-off_2nodes-loopback.log", {(1, 8)}),
    ("ray-2.60.0_torchtrainer_2cpu-workers_train-v1_dedup-off.log", {(1, 8), (0, 9)}),
])
def test_ray_workers_ranks_from_rays_own_lists(name, slow):
    """Ray's prefix names a worker's pid (and ip, off the driver's node), never its rank: the
    rank comes from the trainer's list of its workers.  V2's second copy of each line is
    dropped; the straggler's step is its rank's."""
    by_rank = _steps_by_rank(parse_file(name))
    assert sorted(by_rank) == [0, 1]
    assert all([s for s, _ in steps] == list(range(1, 13)) for steps in by_rank.values())
    assert {(rank, s) for rank, steps in by_rank.items() for s, ms in steps if ms > 100} == slow


def test_ray_log_deduplication_hides_steps():
    """Ray's default folds lines that differ only in their numbers: few steps reach stdout, and
    not the straggler's (`ridgescope run` turns the folding off for the job it starts)."""
    by_rank = _steps_by_rank(parse_file("ray-2.60.0_torchtrainer_2cpu-workers_train-v2_dedup-on.log"))
    seen = sum(len(steps) for steps in by_rank.values())
    assert sorted(by_rank) == [0, 1] and 0 < seen < 12
    assert all(ms < 100 for steps in by_rank.values() for _, ms in steps)


def test_clu_metric_writer_of_a_flax_loop():
    """CLU's lines behind absl's prefix: a record a step, with its rate; ReportProgress's own
    lines of a step add none; the evaluation's metrics are its result."""
    recs = parse_file("clu-0.0.12_flax-0.12.8_logging-writer_cpu.log")
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(1, 31))
    by_step = {r["step"]: r for r in prog}
    assert (by_step[17]["loss"], by_step[17]["lr"], by_step[17]["it_per_s"]) == (2.2161, 0.00049, 1.9981)
    assert min(by_step, key=lambda s: by_step[s]["it_per_s"]) == 17
    evals = [(r["step"], r["metrics"]["eval_loss"]) for r in _by_kind(recs, "eval")]
    assert evals == [(10, 2.41186), (20, 2.40521), (30, 2.403)]


def test_maxtext_trainer():
    """MaxText's steps count from 0; its evaluations are read; a checkpoint it does not restore
    is no event."""
    recs = parse_file("maxtext-0.2.5_train_synthetic_slowstep17_cpu.log")
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(20)) and {r["framework"] for r in prog} == {"maxtext"}
    seventeen = prog[17]
    assert (seventeen["step_time_ms"], seventeen["tokens_per_s_per_gpu"], seventeen["loss"]) == (503.0, 127.138, 5.952)
    assert [r["step"] for r in prog if r["step_time_ms"] > 100] == [1, 17]     # the compilation, the sleep
    evals = [(r["phase"], r["step"], (r.get("metrics") or {}).get("loss")) for r in _by_kind(recs, "eval")]
    assert evals == [("result", 0, 6.123), ("start", 10, None), ("result", 10, 5.985)]
    assert _by_kind(recs, "checkpoint") == []


def test_paddleseg_trainer():
    """PaddleSeg's `[TRAIN] epoch: 2, iter: 7/20, ... batch_cost: .., reader_cost: ..`: the run's
    iteration, its time, and the wait for its batch as the input lane."""
    prog = _by_kind(parse_file("paddleseg-2.8.0_paddle-3.3.1_core-train_cpu.log"), "progress")
    assert [r["step"] for r in prog] == list(range(1, 21))
    assert [r["epoch"] for r in prog] == [s for s in range(1, 6) for _ in range(4)]
    seven = prog[6]
    assert (seven["loss"], seven["lr"], seven["step_time_ms"], seven["lanes_ms"]) == (
        2.7676, 0.007, 418.1, {"input": 336.6})
    assert max(prog, key=lambda r: r["lanes_ms"]["input"])["step"] == 7


def test_paddledetection_trainer():
    """PaddleDetection's `Epoch: [1] [0/4] ... batch_cost: .. data_cost: ..`: epoch and batch from
    0, the run's step from 1; its checkpoint messages, and pycocotools' table as the result of
    each evaluation."""
    recs = parse_file("paddledet-2.6.0_paddle-2.6.2_trainer_cpu.log")
    prog = _by_kind(recs, "progress")
    assert [(r["step"], r["epoch"], r["iter_in_epoch"]) for r in prog] == [
        (e * 4 + i + 1, e, i) for e in range(3) for i in range(4)]
    five = prog[4]
    assert (five["loss"], five["lr"], five["step_time_ms"], five["lanes_ms"], five["samples_per_s"]) == (
        2.93683, 0.00097, 736.2, {"input": 503.6}, 2.7168)
    assert five["metrics"]["loss_dfl"] == 2.109126
    assert max(prog, key=lambda r: r["lanes_ms"]["input"])["step"] == 5
    saves = [(r["step"], r["action"], r["path"]) for r in _by_kind(recs, "checkpoint")]
    assert saves == [(s, "save", "/tmp/cap-paddle/work/det_output/ppyoloe_s_tiny") for s in (8, 8, 12, 12)]
    evals = [(r["phase"], r["step"]) for r in _by_kind(recs, "eval")]
    assert evals == [("start", 8), ("result", 8), ("start", 12), ("result", 12)]
    result = _by_kind(recs, "eval")[1]["metrics"]
    assert len(result) == 12 and (result["bbox/AP"], result["bbox/AR100"], result["bbox/APl"]) == (0.0, 0.0, -1.0)


def test_paddledetection_crash_under_paddle_3():
    """The run that dies in its first step: one error, with the exception of its traceback."""
    recs = parse_file("paddledet-2.6.0_paddle-3.3.1_trainer_type-promotion-error_cpu.log")
    assert [(r["kind"], r["exception"]) for r in recs] == [("error", "TypeError")]
    assert recs[0]["message"].startswith("(InvalidType) Type promotion only support")


@pytest.mark.parametrize("name", ["ms-swift-4.6.0_sft_tiny-qwen2_cpu.log",
                                  "ms-swift-4.6.0_sft_tiny-qwen2_disable-tqdm_cpu.log"])
def test_ms_swift_sft(name):
    """ms-swift's dicts: one record a step, with or without its bar (whose first step comes after
    the first dict); the step's time from the run's mean step, `train_speed(s/it)`, of two
    dicts; its evaluations at the step they name; its checkpoints."""
    recs = parse_file(name)
    prog = [r for r in _by_kind(recs, "progress") if not r.get("summary")]
    assert [r["step"] for r in prog] == list(range(1, 21))
    assert all(r["total_steps"] == 20 for r in prog)
    times = {r["step"]: r.get("step_time_ms") for r in prog}
    assert times[1] is None                          # no mean before it to take it from
    assert 505 < times[5] < 520                      # the 0.5 s sleep
    assert max(times, key=lambda s: times[s] or 0) == 5
    assert 250 < times[11] < 350                     # after the evaluation at step 10
    assert all(t < 50 for s, t in times.items() if s not in (1, 5, 11))
    assert prog[4]["loss"] == approx(5.973, abs=1e-3) and prog[4]["lr"] == approx(0.000933, rel=1e-3)
    evals = [(r["step"], round(r["loss"], 3)) for r in _by_kind(recs, "eval")]
    assert evals == [(10, 5.927), (20, 5.877)]
    saves = [(r["step"], r["path"].rsplit("/", 1)[-1]) for r in _by_kind(recs, "checkpoint")]
    assert saves == [(8, "checkpoint-8"), (16, "checkpoint-16"), (20, "checkpoint-20")]


def test_ms_swift_sft_resumed():
    """The run resumed from its checkpoint at step 8: its mean step counts from there, which the
    arguments it prints say (`resume_from_checkpoint=/.../checkpoint-8,`, a restart at 8), so
    its steps have their times again (they had none); the step after its evaluation holds it,
    as does the one after its save at 16."""
    recs = parse_file("ms-swift-4.6.0_sft_tiny-qwen2_disable-tqdm_resumed_cpu.log")
    (restart,) = _by_kind(recs, "restart")
    assert (restart["step"], restart["path"].rsplit("/", 1)[-1]) == (8, "checkpoint-8")
    prog = [r for r in _by_kind(recs, "progress") if not r.get("summary")]
    assert [r["step"] for r in prog] == list(range(9, 21))
    times = {r["step"]: r.get("step_time_ms") for r in prog}
    assert times[9] is None                          # its mean is the first since the resume
    assert times[10] == approx(9.705) and times[11] == approx(296.638)
    assert max(times, key=lambda s: times[s] or 0) == 11 and 20 < times[17] < 50
    assert all(t < 20 for s, t in times.items() if s not in (9, 11, 17))
    saves = [(r["step"], r["path"].rsplit("/", 1)[-1]) for r in _by_kind(recs, "checkpoint")]
    assert saves == [(16, "checkpoint-16"), (20, "checkpoint-20")]

def test_torchvision_reference_script():
    """torchvision's MetricLogger lines: the step counted over the run, `data` the input lane
    (a mean of the epoch's last 20 batches, so the slow batch raises those after it); an
    evaluation's start and result; its arguments' `resume=''` is no restart."""
    recs = parse_file("torchvision-0.29.2_references-classification-train-2019_cpu.log")
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(1, 17))
    thirteen = prog[12]
    assert (thirteen["epoch"], thirteen["iter_in_epoch"], thirteen["step_time_ms"], thirteen["lanes_ms"]) == (
        1, 4, 586.2, {"input": 405.6})
    assert max(prog, key=lambda r: r["step_time_ms"])["step"] == 13
    evals = [(r["phase"], r["step"], r.get("metrics")) for r in _by_kind(recs, "eval")]
    assert evals == [("start", 8, None), ("result", 8, {"acc1": 50.0, "acc5": 100.0}),
                     ("start", 16, None), ("result", 16, {"acc1": 50.0, "acc5": 100.0})]
    assert _by_kind(recs, "restart") == []


def test_timm_train_script():
    """timm's `Train: 1 [   3/8 ( 50%)]` lines: the step over the run, the update's own time and
    data wait (before the means in brackets); each epoch's evaluation result and checkpoint."""
    recs = parse_file("timm-1.0.31_train-py_cpu.log")
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(1, 17))
    twelve = prog[11]
    assert (twelve["step_time_ms"], twelve["lanes_ms"], twelve["samples_per_s"], twelve["loss"]) == (
        2041.0, {"input": 2003.0}, 1.96, 0.903)
    assert max(prog, key=lambda r: r["step_time_ms"])["step"] == 12
    evals = [(r["step"], r["metrics"]["top1"]) for r in _by_kind(recs, "eval")]
    assert evals == [(8, 50.0), (16, 43.75)]
    # `Current checkpoints:` after each save; its list (best first) does not say which is new
    saves = [(r["step"], r["action"], r["phase"]) for r in _by_kind(recs, "checkpoint")]
    assert saves == [(8, "save", "end"), (16, "save", "end")]


def test_nanogpt_train_script():
    """nanoGPT's `iter 7: loss .., time 503.52ms, mfu ..` lines, iterations from 0; its
    evaluation and checkpoint at step N come before `iter N`, and belong to step N."""
    recs = parse_file("nanogpt_train-py_tiny-char_cpu.log")
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(31))
    assert (prog[7]["step_time_ms"], prog[7]["loss"]) == (503.52, 4.0577)
    assert max(prog, key=lambda r: r["step_time_ms"])["step"] == 7
    evals = [(r["step"], r["loss"], r["train_loss"]) for r in _by_kind(recs, "eval")]
    assert evals == [(0, 4.1711, 4.1682), (10, 4.0233, 3.9936), (20, 3.9001, 3.9105), (30, 3.8579, 3.8266)]
    saves = [(r["step"], r["path"]) for r in _by_kind(recs, "checkpoint")]
    assert saves == [(s, "/tmp/cap-scripts/nano-out") for s in (10, 20, 30)]


def test_nanogpt_resume():
    """`Resuming training from <out_dir>` names no step: a restart without one; the evaluation
    after it names the step the run resumed at."""
    recs = parse_file("nanogpt_train-py_resume_cpu.log")
    assert [(r["kind"], r["step"]) for r in recs[:3]] == [("restart", None), ("eval", 30), ("checkpoint", 30)]
    assert recs[0]["path"] == "/tmp/cap-scripts/nano-out"
    assert [r["step"] for r in _by_kind(recs, "progress")] == list(range(30, 41))


def test_dlrm_script():
    """DLRM's `Finished training it 25/40 of epoch 0, 501.49 ms/it, ...`: iterations from 1."""
    prog = _by_kind(parse_file("dlrm_dlrm-s-pytorch_random-data_cpu.log"), "progress")
    assert [r["step"] for r in prog] == list(range(1, 41))
    slow = prog[24]
    assert (slow["step_time_ms"], slow["loss"], slow["metrics"]) == (501.49, 0.236359, {"accuracy": 62.5})
    assert max(prog, key=lambda r: r["step_time_ms"])["step"] == 25


@pytest.mark.parametrize("name", ["verl-0.9.1_sft-trainer_tiny-qwen2_cpu.log",
                                  "verl-0.9.1_sft-trainer_tiny-qwen2_2rank_cpu.log"])
def test_verl_sft_trainer(name):
    """verl's SFT trainer: its step lines follow the bar's redraw on one line and stay verl's
    (Lightning's bar looks alike); the bar alone gives nothing; `train/mfu` is the MFU."""
    recs = parse_file(name)
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(1, 21)) and {r["framework"] for r in prog} == {"verl"}
    assert prog[0]["loss"] == 5.96875 and prog[0]["lr"] == 0.001
    assert min(prog, key=lambda r: r["mfu"])["step"] == 8         # the step that slept
    evals = [(r["step"], r["metrics"]) for r in _by_kind(recs, "eval")]
    assert evals == [(20, {"val/loss": 3.71875 if "2rank" not in name else 3.71484375})]
    saves = [(r["step"], r["path"].rsplit("/", 1)[-1]) for r in _by_kind(recs, "checkpoint")]
    assert saves == [(20, "global_step_20")]


@pytest.mark.parametrize("name, rank", [("torchtitan-0.3.0_llama3-debugmodel_1rank_cpu.log", None),
                                        ("torchtitan-0.3.0_llama3-debugmodel_2rank-run-train-flags_cpu.log", 0)])
def test_torchtitan_trainer(name, rank):
    """torchtitan 0.3's coloured step lines (with grad_norm), its validation, and its checkpoint's
    start and end with the time it took; `Checkpoints will be loaded from and saved to` is no
    checkpoint; the slow batch shows in the step's tokens/s."""
    recs = parse_file(name)
    prog = _by_kind(recs, "progress")
    assert [(r["rank"], r["step"]) for r in prog] == [(rank, s) for s in range(1, 21)]
    rates = {r["step"]: r["tokens_per_s_per_gpu"] for r in prog}      # `tps`, a device's
    assert rates[13] < 0.85 * min(rates[12], rates[14])
    if rank is None:
        assert (prog[12]["loss"], prog[12]["grad_norm"], rates[13]) == (7.46844, 1.7597, 777)
    assert [r["step"] for r in _by_kind(recs, "eval")] == [1, 5, 10, 15, 20]
    saves = [(r["step"], r["phase"], r.get("duration_ms")) for r in _by_kind(recs, "checkpoint")]
    assert [s for s in saves if s[1] == "end"] == [(10, "end", 460.0 if rank is None else 660.0),
                                                  (20, "end", 870.0 if rank is None else 940.0)]
    assert all(s[0] in (10, 20) for s in saves)          # nothing at the start


def test_torchtitan_unlabelled_ranks_give_each_step_twice():
    """Two ranks' lines with no label: each step's line comes once from each rank, and nothing
    tells them apart, so each step has two records of no rank (the flags of torchtitan's own
    `run_train.sh` label them)."""
    prog = _by_kind(parse_file("torchtitan-0.3.0_llama3-debugmodel_2rank-unlabelled_cpu.log"), "progress")
    assert [r["step"] for r in prog] == [s for s in range(1, 21) for _ in range(2)]
    assert {r["rank"] for r in prog} == {None}


def test_detectron2_default_trainer():
    """Detectron2 0.5's `d2.utils.events` lines: iterations as printed, from 0; its `time` is the
    mean since the timer's warm-up, from which each iteration's own time comes (iteration 7,
    whose image load slept 0.5 s, took 914 ms against ~400); a checkpoint named for its
    iteration (`model_0000009.pth`) has that step, and `model_final.pth` the last one;
    pycocotools' table is each evaluation's result, at the iteration it ran in."""
    recs = parse_file("detectron2-0.5_defaulttrainer_tiny-coco_cpu.log")
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(30))
    seven = prog[7]
    assert (seven["loss"], seven["lr"], seven["metrics"]["time_mean_ms"]) == (2.176, 0.0017508, 487.0)
    times = {r["step"]: r.get("step_time_ms") for r in prog}
    assert times[0] is times[1] is None and times[2] == 379.8     # timed from the third on
    assert times[7] == 914.5 and all(350 < t < 450 for s, t in times.items() if s not in (0, 1, 7))
    saves = [(r["step"], r["path"].rsplit("/", 1)[-1]) for r in _by_kind(recs, "checkpoint")]
    assert saves == [(9, "model_0000009.pth"), (19, "model_0000019.pth"), (29, "model_0000029.pth"),
                     (29, "model_final.pth")]
    evals = _by_kind(recs, "eval")
    assert [(r["step"], r["metrics"]["bbox/AP"], r["metrics"]["bbox/AP50"]) for r in evals] == [
        (14, 0.107, 0.388), (29, 0.337, 0.653)]   # the first ran in iteration 14, before its line


def test_swin_transformer_main():
    """Swin's `Train: [0/2][5/8]<TAB>eta .. lr ..<TAB> wd ..<TAB>time 1.2227 (1.1128)<TAB>...`: the
    batch's own time before the mean; its checkpoint's `saving......` and `saved !!!`; its
    ` * Acc@1` result at the epoch's last step."""
    recs = parse_file("swin-transformer_main-py_tiny-imagefolder_cpu.log")
    prog = _by_kind(recs, "progress")
    assert [(r["step"], r["epoch"], r["iter_in_epoch"]) for r in prog] == [
        (e * 8 + i + 1, e, i) for e in range(2) for i in range(8)]
    six = prog[5]
    assert (six["step_time_ms"], six["loss"], six["grad_norm"], six["lr"]) == (1222.7, 6.6142, 26.861, 2e-06)
    assert six["mem_gb"] == approx(1867 / 1024, rel=0.05)
    saves = [(r["step"], r["phase"], r["path"].rsplit("/", 1)[-1]) for r in _by_kind(recs, "checkpoint")]
    assert saves == [(8, "start", "ckpt_epoch_0.pth"), (8, "end", "ckpt_epoch_0.pth"),
                     (16, "start", "ckpt_epoch_1.pth"), (16, "end", "ckpt_epoch_1.pth")]
    assert [(r["step"], r["metrics"]) for r in _by_kind(recs, "eval")] == [
        (8, {"acc1": 12.5, "acc5": 12.5}), (16, {"acc1": 50.0, "acc5": 100.0})]


def test_yolox_trainer():
    """YOLOX 0.3.0's loguru lines: `epoch: 1/2, iter: 2/4` runs on over the run, `data_time` the
    input lane (the slow image read, 510 ms); `Save weights to` a checkpoint; its evaluations'
    starts."""
    recs = parse_file("yolox-0.3.0_train-py_tiny-coco_cpu.log")
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(1, 9))
    two = prog[1]
    assert (two["step_time_ms"], two["lanes_ms"], two["loss"]) == (843.0, {"input": 510.0}, 10.9)
    assert max(prog, key=lambda r: r["lanes_ms"]["input"])["step"] == 2
    saves = [(r["step"], r["path"]) for r in _by_kind(recs, "checkpoint")]
    assert saves == [(4, "./YOLOX_outputs/yolox_tiny_coco_exp")] * 4 + [(8, "./YOLOX_outputs/yolox_tiny_coco_exp")] * 3
    # `Evaluate in main process...` begins each epoch's evaluation (the random model finds
    # nothing, so no AP table ends it)
    assert [(r["step"], r["phase"]) for r in _by_kind(recs, "eval")] == [(4, "start"), (8, "start")]


MEGATRON = "megatron-core-0.17.1_pretrain-gpt_{}_cpu.log"


def test_megatron_0_17_pretrain_gpt():
    """Megatron-LM 0.17's own loop: its iteration lines' time to the microsecond
    (` [2026-11-30 22:25:16.742762] iteration 1/ 24 | ...`), its timer blocks behind
    `INFO:megatron.core.timers:`, the slow batch (iteration 13) as the input lane, its
    validations, saves and their `save-checkpoint` time; the setup timers before training time
    no step."""
    recs = parse_file(MEGATRON.format("1rank"))
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(1, 25)) and {r["total_steps"] for r in prog} == {24}
    thirteen = prog[12]
    assert (thirteen["step_time_ms"], thirteen["loss"], thirteen["grad_norm"], thirteen["lr"]) == (
        509.4, 4.800644, 1.471, 0.0006986256)
    assert max(prog, key=lambda r: r["step_time_ms"])["step"] == 13
    timing = {r["step"]: r for r in _by_kind(recs, "timing") if "forward-backward" in r["timers_ms"]}
    assert sorted(timing) == list(range(1, 25))
    assert {r["step"]: list(r["timers_ms"]) for r in _by_kind(recs, "timing") if r["step"] in (10, 20)} == {
        10: ["save-checkpoint"], 20: ["save-checkpoint"]}   # its evaluate's, then its save's block
    assert {r["step"] for r in _by_kind(recs, "timing")} == set(range(1, 25))   # none for the setup blocks
    assert timing[13]["lanes_ms"]["input"] == 501.19 and timing[13]["timers_ms"]["forward-backward"] == 507.35
    assert all(t["lanes_ms"]["input"] < 10 for s, t in timing.items() if s != 13)
    assert [(r["step"], r["phase"], r["loss"]) for r in _by_kind(recs, "eval")] == [
        (10, "validation", 4.876906), (20, "validation", 4.547364), (24, "validation", 4.432173),
        (24, "test", 4.428843)]
    saves = [(r["step"], r.get("phase"), r.get("path"), r.get("duration_ms")) for r in _by_kind(recs, "checkpoint")]
    assert saves == [(10, "start", "/tmp/mg/ckpt", None), (10, "end", "/tmp/mg/ckpt", None), (10, None, None, 4303.56),
                     (20, "start", "/tmp/mg/ckpt", None), (20, "end", "/tmp/mg/ckpt", None), (20, None, None, 30.71),
                     (24, "start", "/tmp/mg/ckpt", None), (24, "end", "/tmp/mg/ckpt", None)]


def test_megatron_0_17_two_ranks_and_a_resume():
    """Two data-parallel ranks: the last rank's iteration lines, twice joined to rank 0's
    parameter count, are all read, and the timers' (min, max) give both ranks' input waits.  A
    resumed run: its checkpoint's load and its time at the iteration it resumes from (no false
    load from `sharded_state_dict metadata loaded from the checkpoint`), then 25 to 30."""
    recs = parse_file(MEGATRON.format("2rank-dp"))
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(1, 25))
    assert (prog[12]["step_time_ms"], prog[12]["global_batch_size"]) == (554.1, 4)
    thirteen = next(r for r in _by_kind(recs, "timing") if r["step"] == 13)
    assert (thirteen["timers_ms"]["batch-generator"], thirteen["timers_min_ms"]["batch-generator"]) == (503.99, 502.13)
    recs = parse_file(MEGATRON.format("resume"))
    head = [(r["kind"], r["step"], r.get("action"), r.get("phase"), r.get("duration_ms")) for r in recs[:4]]
    assert head == [("checkpoint", 24, "load", "start", None), ("checkpoint", 24, "load", "end", None),
                    ("restart", 24, None, None, None), ("checkpoint", 24, "load", None, 45.32)]
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(25, 31))
    assert max(prog, key=lambda r: r["step_time_ms"])["step_time_ms"] == 510.6 == prog[2]["step_time_ms"]


def test_megatron_0_17_resume_that_fails_its_scheduler_check():
    recs = parse_file(MEGATRON.format("resume-fail-lr-decay-mismatch"))
    errors = _by_kind(recs, "error")
    assert [(e["error"], e.get("exception")) for e in errors] == [
        ("traceback", "AssertionError"), ("child_failed", None),
        ("traceback", "torch.distributed.elastic.multiprocessing.errors.ChildFailedError"), ("child_failed", None)]
    assert (errors[-1]["launcher"], errors[-1]["rank"], errors[-1]["failed_ranks"]) == ("torchrun", 0, [0])
    assert errors[0]["message"].startswith("OptimizerParamScheduler: class input value 60 and checkpointvalue 48")
    assert {e["step"] for e in errors} == {24} and not _by_kind(recs, "progress")


PADDLEOCR = "paddleocr-2.10.0_paddle-2.6.2_rec-crnn-tiny{}_cpu.log"


def test_paddleocr_training_program():
    """PaddleOCR 2.10's `tools/program.py`: `epoch: [1/3], global_step: 3, ...` with
    `avg_reader_cost` as the input lane (the slowed sample, 204 ms), `cur metric, acc: ...` as
    each evaluation's result, `save model in` / `save best model is to` as saves; a resumed run's
    `resume from /tmp/po/out/latest`, its global step counting from 1 again as printed."""
    recs = parse_file(PADDLEOCR.format(""))
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(1, 25))
    three = prog[2]
    assert (three["step_time_ms"], three["lanes_ms"], three["loss"], three["samples_per_s"]) == (
        355.49, {"input": 204.49}, 59.343372, 22.50385)
    assert max(prog, key=lambda r: r["lanes_ms"]["input"])["step"] == 3
    assert [(r["step"], r["metrics"]["norm_edit_dis"], r["metrics"]["fps"]) for r in _by_kind(recs, "eval")] == [
        (8, 0.11666721874965491, 188.03953071980766), (16, 6.249996093998789e-07, 102.57937616743145),
        (24, 6.249996093998789e-07, 187.5450328090591)]
    saves = [(r["step"], r["path"].rsplit("/", 1)[-1]) for r in _by_kind(recs, "checkpoint")]
    assert saves == [(s, name) for e, s in enumerate((8, 16, 24), 1)
                     for name in ("best_accuracy", "latest", f"iter_epoch_{e}")]
    recs = parse_file(PADDLEOCR.format("_resume"))
    assert [(r["kind"], r.get("path")) for r in recs if r["kind"] == "restart"] == [("restart", "/tmp/po/out/latest")]
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(1, 17)) and prog[2]["lanes_ms"]["input"] == 178.68


def test_megatron_0_17_timers_of_every_rank_name_the_slow_rank():
    """`--timing-log-option all`: each timer's time on every rank.  The record keeps the slowest
    rank's timers (as a `(min, max)` block) and names each lane's slowest and fastest rank, as
    the straggler detector does: iteration 13's batch was rank 1's, and rank 0's own compute
    (its forward less the batch, its backward, its optimizer) is not its `forward-backward`,
    which holds its wait for rank 1."""
    recs = parse_file(MEGATRON.format("2rank-dp_timing-log-option-all_slow-batch-r1"))
    assert [r["step"] for r in _by_kind(recs, "progress")] == list(range(1, 17))
    named = {r["step"]: r["slowest_ranks"] for r in _by_kind(recs, "timing") if "slowest_ranks" in r}
    assert sorted(named) == list(range(1, 17))
    assert named[13]["input"] == {"rank": 1, "ms": 501.52, "fastest_rank": 0, "fastest_ms": 0.75}
    assert named[13]["compute"] == {"rank": 1, "ms": 11.1, "fastest_rank": 0, "fastest_ms": 6.68}
    assert all(n["input"]["ms"] < 10 for s, n in named.items() if s != 13)
    thirteen = next(r for r in _by_kind(recs, "timing") if r["step"] == 13 and "timers_ms" in r)
    assert (thirteen["timers_min_ms"]["forward-backward"], thirteen["timers_ms"]["forward-backward"]) == (512.63, 512.87)
    assert thirteen["lanes_ms"]["input"] == 501.52 and thirteen["lanes_across_ranks"] is True
    assert len(thirteen["timers_ms"]) == 9


def test_megatron_0_17_straggler_detector_names_the_slow_rank():
    """`--log-straggler`: after each iteration's timers, rank 0 prints every rank's fastest and
    slowest forward and batch fetch; at iteration 13, whose batch rank 1 alone waited 0.5 s for,
    the slowest fetch is rank 1's, and its timer block's (min, max) shows the gap."""
    recs = parse_file(MEGATRON.format("2rank-dp_log-straggler_rank1-slow"))
    named = {r["step"]: r["slowest_ranks"] for r in _by_kind(recs, "timing") if "slowest_ranks" in r}
    assert sorted(named) == list(range(1, 17))
    assert named[13] == {"compute": {"rank": 1, "ms": 3.41, "fastest_rank": 0, "fastest_ms": 3.19},
                         "input": {"rank": 1, "ms": 501.51, "fastest_rank": 0, "fastest_ms": 1.11}}
    assert all(n["input"]["ms"] < 10 for s, n in named.items() if s != 13)
    # no GPU here: NVML's counters read 0 on every rank and are not given; the estimated
    # throughput is Megatron's own
    gpu = [r["gpu_extremes"] for r in _by_kind(recs, "timing") if "gpu_extremes" in r]
    assert len(gpu) == 14 and all(list(g) == ["tflops"] for g in gpu)   # two estimated 0.00TF
    thirteen = next(r for r in _by_kind(recs, "timing") if r["step"] == 13 and "timers_ms" in r)
    assert (thirteen["timers_min_ms"]["batch-generator"], thirteen["timers_ms"]["batch-generator"]) == (1.13, 501.55)


BRIDGE = "megatron-bridge-0.3.1_megatron-core-0.16.1_tiny-llama_{}_cpu.log"


@pytest.mark.parametrize("run, slow_ms, batch_ms, blocks", [
    ("1rank", 510.6, 500.97, True), ("1rank_no-log-handler", 509.8, None, False), ("2rank-dp", 513.3, 500.80, True)])
def test_megatron_bridge_pretrain(run, slow_ms, batch_ms, blocks):
    """Megatron-Bridge 0.3.1's loop prints Megatron's iteration lines (dated to the second), its
    validations and saves; its timer blocks only where a logging handler is set.  On 2 ranks its
    `Step Time : ..s GPU utilization: ..MODEL_TFLOP/s/GPU` (rank 0) comes before or after the
    iteration line (rank 1), and is taken only by an iteration whose time it matches."""
    recs = parse_file(BRIDGE.format(run))
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(1, 25)) and {r["framework"] for r in prog} == {"megatron"}
    assert prog[12]["step_time_ms"] == slow_ms and max(prog, key=lambda r: r["step_time_ms"])["step"] == 13
    timing = [r for r in _by_kind(recs, "timing") if "forward-backward" in r["timers_ms"]]
    assert bool(timing) is blocks
    if blocks:
        assert [r["step"] for r in timing] == list(range(1, 25))
        assert timing[12]["lanes_ms"]["input"] == batch_ms
    assert [(r["step"], r["phase"]) for r in _by_kind(recs, "eval")] == [
        (10, "validation"), (20, "validation"), (24, "validation"), (24, "test")]
    assert [(r["step"], r["phase"]) for r in _by_kind(recs, "checkpoint") if "phase" in r] == [
        (s, p) for s in (10, 20, 24) for p in ("start", "end")]


def test_megatron_0_17_pipeline_stages_straggler_reports_go_with_their_iterations():
    """Two pipeline stages under `--tee 3`: rank 1 prints the iterations, rank 0 the straggler
    reports, up to three iterations ahead; the k-th report goes with the k-th iteration line and
    its rank, so the 501 ms batch fetch (rank 0's, the slowed one) is iteration 13's."""
    recs = parse_file(MEGATRON.format("2rank-pp2_tee3_log-straggler_rank0-slow"))
    prog = _by_kind(recs, "progress")
    assert [(r["rank"], r["step"]) for r in prog] == [(1, s) for s in range(1, 17)]
    named = [(r["rank"], r["step"], r["slowest_ranks"]["input"]) for r in _by_kind(recs, "timing")
             if "slowest_ranks" in r]
    assert [(rank, step) for rank, step, _ in named] == [(1, s) for s in range(1, 17)]
    assert named[12][2] == {"rank": 0, "ms": 501.64, "fastest_rank": 1, "fastest_ms": 1.1}
    assert all(n["ms"] < 20 for _, s, n in named if s != 13)
    thirteen = next(r for r in _by_kind(recs, "timing") if r["step"] == 13 and "timers_ms" in r)
    assert (thirteen["timers_ms"]["forward-recv"], thirteen["timers_ms"]["batch-generator"]) == (504.08, 501.67)
    assert [e["error"] for e in _by_kind(recs, "error")] == ["child_failed", "traceback", "child_failed"]



def test_megatron_0_17_pipeline_stages_without_tee_or_straggler_reports():
    """The same two stages as torchrun prints by default: no rank on any line, and no report;
    the last stage's iterations and timers are read as they are (iteration 13: 520.3 ms, its
    `batch-generator` at most 501.57 ms across the ranks, `forward-recv` 503.87)."""
    recs = parse_file(MEGATRON.format("2rank-pp2_rank0-slow"))
    prog = _by_kind(recs, "progress")
    assert [(r["rank"], r["step"]) for r in prog] == [(None, s) for s in range(1, 17)]
    assert max(prog, key=lambda r: r["step_time_ms"])["step"] == 13 and prog[12]["step_time_ms"] == 520.3
    thirteen = next(r for r in _by_kind(recs, "timing") if r["step"] == 13 and "timers_ms" in r)
    assert (thirteen["timers_ms"]["forward-recv"], thirteen["timers_ms"]["batch-generator"]) == (503.87, 501.57)
    assert thirteen["lanes_ms"]["input"] == 501.57
    assert not any("slowest_ranks" in r for r in recs) and not _by_kind(recs, "error")


MMDET = "mmdet-3.3.0_mmengine-0.10.7_retinanet-tiny_cpu{}.log"


def test_mmdetection_train():
    """MMDetection 3.3's `tools/train.py`: MMEngine's lines, `data_time` as the input lane (the
    slowed sample, iteration 5: 503.8 ms), each epoch's save, pycocotools' table and MMEngine's
    `coco/bbox_mAP` summary as results; an auto-resume's `Auto resumed from the latest checkpoint
    ...` is the load, its `resumed epoch: 2, iter: 16` the restart at 16; the resume that torch's
    `weights_only` load refused is one error."""
    recs = parse_file(MMDET.format(""))
    prog = _by_kind(recs, "progress")
    assert [(r["step"], r["epoch"]) for r in prog] == [(s, 1 + (s - 1) // 8) for s in range(1, 17)]
    five = prog[4]
    assert (five["step_time_ms"], five["lanes_ms"], five["loss"], five["grad_norm"]) == (
        569.6, {"input": 503.8}, 1.7382, 0.9098)
    assert max(prog, key=lambda r: r["lanes_ms"]["input"])["step"] == 5
    assert [(r["step"], r["action"]) for r in _by_kind(recs, "checkpoint")] == [(8, "save"), (16, "save")]
    evals = _by_kind(recs, "eval")
    assert [(r["step"], r["metrics"].get("bbox/AP"), r["metrics"].get("coco/bbox_map")) for r in evals] == [
        (8, 0.041, None), (8, None, 0.041), (16, 0.057, None), (16, None, 0.057)]
    recs = parse_file(MMDET.format("_resume"))
    assert [(r["kind"], r["step"], r.get("epoch"), r.get("path")) for r in recs[:2]] == [
        ("checkpoint", None, None, "/tmp/md/work/epoch_2.pth"), ("restart", 16, 2, None)]
    assert len(_by_kind(recs, "restart")) == 1
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(17, 25)) and prog[4]["lanes_ms"]["input"] == 503.8
    recs = parse_file(MMDET.format("_resume-failed"))
    assert [(r["kind"], r.get("action"), r.get("exception")) for r in recs] == [
        ("checkpoint", "load", None), ("error", None, "_pickle.UnpicklingError")]


NANOTRON = "nanotron-0.4_tiny-llama_{}_cpu.log"


@pytest.mark.parametrize("run, rank, step13", [
    ("1rank", None, (511.0, 251.0, 251.0, 1.18)), ("1rank-tee3", 0, (511.0, 251.0, 251.0, 1.18)),
    ("2rank-dp", 0, (514.0, 498.0, 249.0, 0.855))])
def test_nanotron_trainer(run, rank, step13):
    """Nanotron 0.4's `iteration: 13 / 24 | ... | elapsed_time_per_iteration_ms: 511 | ...` in
    its human-readable numbers (`1.66K`), behind its `[INFO|DP=0|PP=0|TP=0]:` place and, with
    `--tee 3`, torchrun's prefix; its `Saving checkpoint at /tmp/nn/ckpt/10`."""
    recs = parse_file(NANOTRON.format(run))
    prog = _by_kind(recs, "progress")
    assert [(r["rank"], r["step"]) for r in prog] == [(rank, s) for s in range(1, 25)]
    thirteen = prog[12]
    assert (thirteen["step_time_ms"], thirteen["tokens_per_s"], thirteen["tokens_per_s_per_gpu"],
            thirteen["grad_norm"]) == step13
    assert (thirteen["loss"], thirteen["lr"], thirteen["total_steps"]) == (5.56, 0.000191, 24)
    assert max(prog, key=lambda r: r["step_time_ms"])["step"] == 13
    assert [(r["step"], r["path"].rsplit("/", 1)[-1]) for r in _by_kind(recs, "checkpoint")] == [(10, "10"), (20, "20")]


NEMO2 = "nemo-2.7.3_megatron-gpt-tiny_{}_cpu.log"


@pytest.mark.parametrize("run, slow_ms", [
    ("1rank-printer", 508.2), ("1rank-progressbar", 511.0), ("2rank-dp-printer-nockpt", 512.1),
    ("1rank-printer-megatron-log-level-2-nockpt", 513.5)])
def test_nemo2_trainer(run, slow_ms):
    """NeMo 2.7.3's own loop, with its printer (`Training epoch 0, iteration 13/23 | ... |
    global_step: 13 | ... | train_step_timing in s: 0.5082`) and with its tqdm bar, whose count
    runs ahead of the metrics it shows: both give steps 1-24, one record each, each with its
    own metrics (global_step + 1, as NeMo's DLLogger lines count), the slept batch at 14, and
    the validations after 10 and 20 steps."""
    d = Dispatcher()
    recs = d.feed_chunk((CAPTURED / NEMO2.format(run)).read_bytes()) + d.flush()
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(1, 25))
    assert {r["framework"] for r in recs} == {"nemo"} and d.stats["switches"] <= 1
    assert max(prog, key=lambda r: r["step_time_ms"])["step"] == 14
    assert prog[13]["step_time_ms"] == approx(slow_ms)
    assert [r["step"] for r in _by_kind(recs, "eval")] == [10, 20]
    assert all(r["step_time_ms"] < 40 for r in prog if r["step"] not in (1, 14))     # 1: warm-up


def test_nemo2_megatron_timers_are_the_printed_steps():
    """`MegatronStrategy(megatron_log_level=2)`: a Megatron `(min, max)` timer block after each
    printer line.  NeMo's parser reads them (Megatron's once took the stream at each block, 48
    switches, and dropped them): each is the timing of the step printed before it.  The slept
    batch of step 14 was fetched inside `forward-compute` (507.05 ms), which gives no lane, so
    that it does not read as slow compute; the backward does."""
    d = Dispatcher()
    recs = d.feed_chunk((CAPTURED / NEMO2.format("1rank-printer-megatron-log-level-2-nockpt")).read_bytes()) + d.flush()
    assert d.stats["switches"] == 1
    timing = {r["step"]: r for r in _by_kind(recs, "timing")}
    assert sorted(timing) == list(range(1, 25))
    fourteen = timing[14]
    assert fourteen["timers_ms"]["forward-compute"] == 507.05 and fourteen["step_time_ms"] == 513.5
    assert fourteen["lanes_ms"] == {"compute": 1.68, "communication": 0.09}
    assert fourteen["lanes_across_ranks"] is True and fourteen["framework"] == "nemo"


@pytest.mark.parametrize("bar", [False, True])
def test_nemo2_checkpoints_and_resume(bar):
    """Each save's `Global Checkpoint Save : ... : Start time: 1796088337.933s : Save duration:
    6.063s` is a finished save of 6.063 s (the start time was once read as its duration); the
    resume's `Time spent in load_checkpoint: 0.029s` is its load's time, and it trains on from
    step 25.  A save in the validation of step 10 names `Iteration: 9` (the steps done before
    it) and is a save of step 10, as its step's records count it; the save after the last
    step names 24, of 24 steps.  The resume names no step (`Restored all states from the
    checkpoint at .../tiny_gpt--reduced_train_loss=4.8702-epoch=1-consumed_samples=48.0-last/weights`):
    its restart is at 24, the step before the first one it draws."""
    run = "1rank-progressbar" if bar else "1rank-printer"
    saves = [r for r in _by_kind(parse_file(NEMO2.format(run)), "checkpoint") if r.get("duration_ms")]
    assert [(r["step"], r["action"], r["phase"]) for r in saves] == [
        (10, "save", "end")] * 2 + [(20, "save", "end")] * 2 + [(24, "save", "end")]
    assert "Iteration: 9 :" in saves[0]["message"]
    assert all(r["duration_ms"] < 10_000 for r in saves)
    if not bar:
        assert [r["duration_ms"] for r in saves] == [6063.0, 85.0, 93.0, 82.0, 85.0]
    resumed = parse_file(NEMO2.format(run + "-resume"))
    loads = [r for r in _by_kind(resumed, "checkpoint") if r["action"] == "load"]
    assert [r["duration_ms"] for r in loads if r.get("duration_ms")] == [29.0 if not bar else 31.0]
    assert [r["step"] for r in _by_kind(resumed, "progress")] == list(range(25, 31))
    assert [r["step"] for r in _by_kind(resumed, "eval")] == [30]
    assert [r["step"] for r in _by_kind(resumed, "checkpoint") if r["action"] == "save"][-1] == 30
    kinds = [r["kind"] for r in resumed]
    restarts = _by_kind(resumed, "restart")
    assert [(r["step"], r["framework"]) for r in restarts] == [(24, "nemo")]
    assert restarts[0]["message"].startswith("Restored all states from the checkpoint at ")
    assert kinds.index("restart") == kinds.index("progress") - 1


def test_tf_estimator_interval_times_checkpoints_and_evaluations():
    """tf.estimator's `loss = X, step = N (T sec)` every 5 steps: the mean step of the 5 as
    the time; each save is a start (`Saving checkpoints for N into P.`) and an end, each
    evaluation a start and a result with its `Inference Time`; the slow batch (53) is in step
    55's interval, and the saves and evaluations in 20's, 40's and 60's."""
    recs = parse_file("tensorflow-2.15.1_estimator_train-and-evaluate_slow-step53_cpu.log")
    assert {r["framework"] for r in recs} == {"tensorflow"}
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(0, 80, 5))
    assert "step_time_ms" not in prog[0] and prog[0]["loss"] == 0.85409176
    times = {r["step"]: r["step_time_ms"] for r in prog[1:]}
    assert times[5] == 11.4 and times[55] == 301.4        # `(0.057 sec)`, `(1.507 sec)` over 5 steps
    assert sorted(times, key=times.get)[-4:] == [60, 40, 20, 55]
    saves = [(r["step"], r["phase"], r.get("path")) for r in _by_kind(recs, "checkpoint")]
    assert saves[:4] == [(0, "start", "out/est/model.ckpt-0"), (0, "end", None),
                         (20, "start", "out/est/model.ckpt-20"), (20, "end", None)]
    assert [s for s, phase, _ in saves if phase == "end"] == [0, 20, 40, 60, 80]
    results = [r for r in _by_kind(recs, "eval") if r["phase"] == "result"]
    assert [r["step"] for r in results] == [20, 40, 60, 80]
    assert (results[0]["loss"], results[0]["metrics"], results[0]["duration_ms"]) == (
        0.60481757, {"accuracy": 0.6953125}, 108.43)
    assert not _by_kind(recs, "restart")      # an evaluation's restore of each checkpoint is none


def test_tf_estimator_resumed_from_its_checkpoint():
    """A second run on the same model directory restores step 80's checkpoint before it
    trains: the load and the restart at 80, then steps from 80 on."""
    recs = parse_file("tensorflow-2.15.1_estimator_train-and-evaluate_resumed_cpu.log")
    assert [(r["kind"], r["step"]) for r in recs[:2]] == [("checkpoint", 80), ("restart", 80)]
    assert recs[0]["action"] == "load" and recs[1]["path"] == "out/est/model.ckpt-80"
    assert [r["step"] for r in _by_kind(recs, "progress")] == [80, 85, 90, 95]
    assert len(_by_kind(recs, "restart")) == 1


@pytest.mark.parametrize("name", [
    "tf-models-official-2.15.0_orbit-controller_slow-step53_cpu.log",
    "tf-models-official-2.15.0_orbit-controller_wide-output_slow-step53_cpu.log",
])
def test_orbit_controller_loops(name):
    """Orbit prints each message through absl and `print`: one record each.  A loop of 5 steps
    is a record with its `steps/sec` and the mean step from it; a dict wider than 80 characters
    runs over the lines after its message and is read whole; the slow batch is in loop 55."""
    recs = parse_file(name)
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == list(range(5, 85, 5))
    by_step = {r["step"]: r for r in prog}
    assert by_step[55]["it_per_s"] == 3.3 and by_step[55]["step_time_ms"] == 303.03
    assert max(prog[1:], key=lambda r: r["step_time_ms"])["step"] == 55
    assert all(r["lr"] == 0.001 for r in prog)
    if "wide" in name:
        assert (by_step[5]["loss"], by_step[5]["metrics"]["model_loss"]) == (0.65498865, 0.6535136)
        assert by_step[5]["step_time_ms"] == 125.0      # `8.0`: one decimal is sure within 5%
    else:
        assert by_step[5]["loss"] == 0.69371617
    saves = [(r["step"], r["path"].rsplit("/", 1)[-1]) for r in _by_kind(recs, "checkpoint")]
    assert [s for s, _ in saves] == [5, 25, 45, 65, 80] and saves[0][1] == "ckpt-5"
    evals = [(r["step"], r["phase"]) for r in _by_kind(recs, "eval")]
    assert evals == [(s, p) for s in (20, 40, 60, 80) for p in ("start", "result")]


def test_orbit_controller_resumed():
    recs = parse_file("tf-models-official-2.15.0_orbit-controller_resumed_cpu.log")
    assert [(r["kind"], r["step"], r.get("action")) for r in recs[:2]] == [
        ("checkpoint", 80, "load"), ("restart", 80, None)]
    assert [r["step"] for r in _by_kind(recs, "progress")] == [85, 90, 95, 100]


def test_tf_keras_2_bar_into_a_pipe():
    """tf.keras 2's `[====>...]` bar, redrawn at most every 50 ms: a record for each batch it
    drew, the epoch's mean step at its end, the validation after each epoch and `evaluate`'s
    result; `verbose=2` gives each epoch's last state alone."""
    recs = parse_file("tensorflow-2.15.1_tf-keras-2.15_fit-verbose1-evaluate_pipe.log")
    assert {r["framework"] for r in recs} == {"keras"}
    prog = _by_kind(recs, "progress")
    assert [(r["step"], r["epoch"], r["iter_in_epoch"]) for r in prog] == [
        (1, 1, 1), (16, 1, 16), (17, 2, 1), (21, 2, 5), (32, 2, 16)]
    assert (prog[1]["loss"], prog[1]["step_avg_ms"], prog[1]["metrics"]) == (0.6197, 33.0, {"accuracy": 0.6465})
    assert prog[4]["step_avg_ms"] == 72.0         # epoch 2's mean holds batch 21's second
    evals = [(r["step"], r["phase"], r["loss"]) for r in _by_kind(recs, "eval")]
    assert evals == [(16, "validation", 0.5381), (32, "validation", 0.4573), (32, "evaluate", 0.4573)]
    quiet = parse_file("tensorflow-2.15.1_tf-keras-2.15_fit-verbose2-evaluate_pipe.log")
    assert [(r["kind"], r["step"], r.get("step_avg_ms")) for r in quiet] == [
        ("progress", 16, 76.0), ("eval", 16, None), ("progress", 32, 67.0), ("eval", 32, None), ("eval", 32, 11.0)]


def test_pytorch_examples_word_language_model():
    """PyTorch's examples' `word_language_model/main.py` (its LSTM), every 20 batches: `| epoch
    2 |    60/   99 batches | lr 20.00 | ms/batch 52.08 | ...`, the batch from 0 in its epoch
    and `ms/batch` the mean since the last line; the 151st batch slept 0.5 s (25 ms more on
    the mean of its 20).  Each epoch ends with its validation, the run with its test."""
    recs = parse_file("pytorch-examples_word-language-model_lstm_tiny-corpus_cpu.log")
    prog = _by_kind(recs, "progress")
    assert [r["step"] for r in prog] == [e * 99 + b + 1 for e in range(3) for b in (20, 40, 60, 80)]
    first = prog[0]
    assert (first["epoch"], first["iter_in_epoch"], first["iters_per_epoch"]) == (1, 20, 99)
    assert (first["step_time_ms"], first["loss"], first["lr"], first["metrics"]) == (35.9, 6.16, 20.0, {"ppl": 473.98})
    slow = max(prog, key=lambda r: r["step_time_ms"])
    assert (slow["epoch"], slow["iter_in_epoch"], slow["step_time_ms"]) == (2, 60, 52.08)
    evals = _by_kind(recs, "eval")
    assert [(r["step"], r.get("epoch"), r["metrics"]) for r in evals] == [
        (81, 1, {"valid_loss": 5.82, "valid_ppl": 337.39, "epoch_time_s": 2.79}),
        (180, 2, {"valid_loss": 5.81, "valid_ppl": 335.26, "epoch_time_s": 3.37}),
        (279, 3, {"valid_loss": 5.8, "valid_ppl": 328.7, "epoch_time_s": 2.76}),
        (279, None, {"test_loss": 5.79, "test_ppl": 326.6})]


@pytest.mark.parametrize("name, want", [
    ("slurm-22.05.8_srun-label_task1-exit3_2task.log",
     [("child_failed", None, {"launcher": "srun", "host": "vm", "tasks": [1], "exitcode": 3})]),
    ("slurm-22.05.8_srun-label_task1-sigkill_2task.log",
     [("child_failed", None, {"launcher": "srun", "tasks": [1], "signal": "SIGKILL"})]),
    ("slurm-22.05.8_srun-label_task0-sigsegv_2task.log",
     [("child_failed", None, {"tasks": [0], "signal": "SIGSEGV"})]),
    ("slurm-22.05.8_srun-label_scancel_2task.log",
     [("cancelled", None, {"launcher": "slurm", "slurm_step": "9.0", "host": "vm", "at": "2026-12-02T13:12:13"}),
      ("child_failed", None, {"tasks": [0, 1], "signal": "SIGTERM"})]),
    ("slurm-22.05.8_srun-label_time-limit_2task.log",
     [("cancelled", None, {"slurm_step": "10.0", "reason": "time limit"}),
      ("child_failed", None, {"tasks": [0, 1], "signal": "SIGTERM"})]),
    ("slurm-22.05.8_srun-label_node-failure_2task.log",
     [("node_failure", None, {"launcher": "srun", "host": "vm"})]),     # srun says it twice, a task each
    ("slurm-22.05.8_sbatch-srun-label_node-failure_2task.log",
     [("node_failure", None, {"launcher": "srun", "host": "vm"}),
      ("cancelled", None, {"slurm_step": "13", "host": "vm", "reason": "node failure"})]),
    ("openmpi-4.1.4_mpirun_rank1-kill_2proc.log",
     [("child_failed", 1, {"launcher": "mpirun", "host": "vm", "signal": "SIGKILL"})]),
    ("openmpi-4.1.4_mpirun_rank1-exit_2proc.log",
     [("child_failed", 1, {"launcher": "mpirun", "exitcode": 3, "first": True})]),
])
def test_launchers_say_which_task_or_rank_died(name, want):
    """srun names the node and its task (srun's, not always the job's rank), slurmstepd a step
    cancelled and why (in task 0's stream, the job's event: no rank), mpirun the job's rank, by
    its signal or in a report over several lines of the first process that failed."""
    errors = [r for r in parse_file(name) if r["kind"] == "error"]
    assert [(r["error"], r["rank"], {k: r.get(k) for k in fields}) for r, (_, _, fields) in zip(errors, want)] == want
    assert len(errors) == len(want)


def test_espnet_trainer_intervals_lanes_and_epoch_results():
    """ESPnet2's reporter: a record per interval of 2 batches at its last batch, counted on
    across epochs; the wait for the slow utterance's batch (0.5 s, the mean of two batches) is
    the input lane, forward + backward + optimizer the compute lane; each epoch's validation
    an evaluation after its last step.  The reporter leaves out the `, ` before one value of
    most lines (`forward_time=0.010loss_ctc=55.366`): both values are read."""
    recs = parse_file("espnet-202511_torch-2.11_asr-train-tiny_slow-load_cpu.log")
    assert {r["framework"] for r in recs} == {"espnet"}
    progress = [r for r in recs if r["kind"] == "progress"]
    assert [r["step"] for r in progress] == list(range(2, 25, 2))
    assert not any(r.get("step_inferred") for r in progress)
    first = progress[0]
    assert (first["epoch"], first["iter_in_epoch"], first["loss"], first["lr"], first["grad_norm"]) == (
        1, 2, 27.752, 0.001, 47.262)
    assert first["metrics"]["loss_ctc"] == 55.366 and first["timers_ms"]["forward"] == 10.0
    assert first["lanes_ms"] == {"input": 2.0, "compute": 17.0} and first["step_time_ms"] == 23.0
    slow = [(r["step"], r["lanes_ms"]["input"]) for r in progress if r["lanes_ms"]["input"] > 100]
    assert slow == [(6, 252.0), (10, 252.0), (20, 252.0)]     # the sampler shuffles each epoch
    evals = [r for r in recs if r["kind"] == "eval"]
    assert [(r["step"], r["epoch"], r["metrics"]["acc"], r["metrics"]["loss"]) for r in evals] == [
        (8, 1, 0.116, 24.755), (16, 2, 0.116, 23.707), (24, 3, 0.116, 23.29)]


def test_espnet_under_ddp_a_wait_for_another_ranks_data_is_communication():
    """ESPnet2 under `torchrun --tee 3` with DDP on gloo: rank 0 alone logs (`[vm:0/2]`).  The
    utterance that loads 0.5 s slower is rank 1's: rank 0's own data wait stays ~2 ms, and its
    step's time beyond its timers is the wait in the all-reduce that begins each batch
    (communication), ~270 ms (the mean of the interval's two batches) at steps 6 and 20; ~15-20
    ms at the others.  Without DDP (the single-process capture) there is no such lane."""
    recs = parse_file("espnet-202511_torch-2.11_asr-train-tiny_ddp-gloo_torchrun-tee3_slow-load-on-rank1_2rank.log")
    progress = [r for r in recs if r["kind"] == "progress"]
    assert [(r["rank"], r["step"]) for r in progress] == [(0, s) for s in range(2, 25, 2)]
    assert progress[2]["lanes_ms"] == {"input": 2.0, "compute": 23.0, "communication": 269.0}
    assert progress[2]["step_time_ms"] == 294.0
    waits = {r["step"]: r["lanes_ms"]["communication"] for r in progress}
    assert [s for s, ms in waits.items() if ms > 100] == [6, 20]
    assert all(10 < ms < 30 for s, ms in waits.items() if s not in (6, 20)), waits
    assert all(r["lanes_ms"]["input"] < 5 for r in progress)
    assert [r["step"] for r in recs if r["kind"] == "eval"] == [8, 16, 24]
    alone = parse_file("espnet-202511_torch-2.11_asr-train-tiny_slow-load_cpu.log")
    assert not any("communication" in r.get("lanes_ms", {}) for r in alone)


def test_espnet_resumed_run_counts_the_epochs_before_it():
    """A run resumed at epoch 4 prints no count of epochs 1-3: its first epoch's records wait
    for that epoch's results line (`total_count=32`, 8 batches an epoch), and come after a
    restart at step 24, where the first run ended."""
    recs = parse_file("espnet-202511_torch-2.11_asr-train-tiny_resumed-epoch-4_cpu.log")
    assert [(r["kind"], r["step"]) for r in recs] == [
        ("restart", 24), *[("progress", s) for s in (26, 28, 30, 32)], ("eval", 32),
        *[("progress", s) for s in (34, 36, 38, 40)], ("eval", 40)]
    assert recs[0]["path"] == "/job/exp/asr/checkpoint.pth"
    assert all(r.get("step_inferred") for r in recs[:5]) and not any(r.get("step_inferred") for r in recs[6:])
    assert recs[1]["lanes_ms"]["input"] == 252.0 and recs[1]["epoch"] == 4


_IGNITE = "ignite-0.5.5_torch-2.11_"


def test_ignite_example_prints_and_its_engines_logger():
    """Ignite's MNIST example's prints: the engine's iteration over the run every 10, each
    epoch's results over the training and the validation set at its last iteration (47 an
    epoch).  The evaluator's runs, logged inside the trainer's, are evaluations with their
    time; the epochs' `Time taken` and the trainer's own start give nothing."""
    recs = parse_file(_IGNITE + "mnist-example-prints_engine-logger_cpu.log")
    assert {r["framework"] for r in recs} == {"ignite"}
    progress = [r for r in recs if r["kind"] == "progress"]
    assert [r["step"] for r in progress] == list(range(10, 141, 10))
    assert [(r["epoch"], r["loss"]) for r in progress[:1] + progress[4:5] + progress[-1:]] == [
        (1, 2.29), (2, 2.19), (3, 1.96)]
    results = [(r["step"], r["epoch"], r["subset"], r["metrics"]) for r in recs if r.get("phase") == "result"]
    assert results[:2] == [(47, 1, "train", {"accuracy": 0.34, "loss": 2.15}),
                           (47, 1, "validation", {"accuracy": 0.09, "loss": 2.32})]
    assert [s for s, *_ in results] == [47, 47, 94, 94, 141, 141]
    runs = [(r["phase"], r["step"], r.get("duration_ms")) for r in recs if r.get("phase") in ("start", "end")]
    assert runs == [("start", 40, None), ("end", 40, 541.0), ("start", 40, None), ("end", 40, 3.0),
                    ("start", 90, None), ("end", 90, 520.0), ("start", 90, None), ("end", 90, 3.0),
                    ("start", 140, None), ("end", 140, 519.0), ("start", 140, None), ("end", 140, 3.0)]


def test_ignite_resumed_run_restarts_at_the_checkpoints_iteration():
    recs = parse_file(_IGNITE + "mnist-example-prints_engine-logger_resumed-at-94_cpu.log")
    assert (recs[0]["kind"], recs[0]["step"]) == ("restart", 94)
    assert [r["step"] for r in recs if r["kind"] == "progress"] == list(range(100, 231, 10))
    assert [r["step"] for r in recs if r.get("phase") == "result"] == [141, 141, 188, 188, 235, 235]


def _ignite_prints(name: str) -> dict:
    """(rank, iteration) -> the loss that the example's print of it says."""
    text = (CAPTURED / name).read_text()
    return {(int(r) if r else None, int(i)): float(loss) for r, i, loss in re.findall(
        r"(?:\[default(\d)\]:)?[^\n\[]*?(?:\])?Epoch\[\d+\] Iteration\[(\d+)/47\] Loss: ([\d.]+)", text)}


def test_ignite_progress_bar_one_record_per_step_drawn():
    """Ignite's ProgressBar into a pipe: its count lags the iterations by one (a count's last
    redraw is the end of the next iteration, with its loss), so each step's record holds the
    loss the example's print of the same iteration says.  Steps in order, each once: the prints
    that run on after a redraw add none.  Each epoch's first iteration, drawn under the count
    the bar starts at, has no record."""
    name = _IGNITE + "progressbar_3-epochs_pipe.log"
    recs = parse_file(name)
    assert {r["framework"] for r in recs} == {"ignite"}
    progress = [r for r in recs if r["kind"] == "progress"]
    steps = [r["step"] for r in progress]
    assert steps == sorted(set(steps)) and set(range(1, 142)) - set(steps) == {1, 48, 95}
    by_step = {r["step"]: r for r in progress}
    prints = _ignite_prints(name)
    assert len(prints) == 14 and all(by_step[i]["loss"] == loss for (_, i), loss in prints.items())
    assert (by_step[2]["loss"], by_step[2]["epoch"], by_step[2]["iters_per_epoch"]) == (2.33, 1, 47)
    assert (by_step[49]["epoch"], by_step[49]["iter_in_epoch"], by_step[49]["loss"]) == (2, 2, 2.15)
    assert (by_step[47]["iter_in_epoch"], by_step[141]["loss"]) == (47, 1.83)
    kinds = [(r["kind"], r["step"]) for r in recs]
    assert kinds.index(("progress", 47)) < kinds.index(("eval", 47)) < kinds.index(("progress", 49))

    recs = parse_file(_IGNITE + "progressbar_1-epoch_pipe.log")
    assert [r["step"] for r in recs if r["kind"] == "progress"] == list(range(2, 48))


def test_ignite_bars_last_redraw_of_each_epoch_alone():
    """Each epoch's last redraw alone (what a collector that keeps a line's final state keeps):
    the same count, 46/47 (it lags the iterations by one), in three epochs is three steps, each
    epoch's last with the loss it drew."""
    text = (CAPTURED / (_IGNITE + "progressbar_3-epochs_pipe.log")).read_text()
    last = {}
    for redraw in text.replace("\r", "\n").splitlines():
        m = re.match(r"Epoch \[(\d)/3\]: \[46/47\]", redraw)
        if m:
            last[m.group(1)] = redraw
    d = Dispatcher()
    recs = d.feed_chunk("".join(f"{line}\n" for line in last.values())) + d.flush()
    losses = [float(re.search(r"loss=([\d.]+)", line).group(1)) for line in last.values()]
    assert [(r["step"], r["epoch"], r["loss"]) for r in recs] == [
        (47, 1, losses[0]), (94, 2, losses[1]), (141, 3, losses[2])]


def test_ignite_two_ranks_bars_and_prints_on_two_pipes():
    """Under torchrun each rank's bar and prints reach the log on two pipes: rank 0's print of
    iteration 10 comes before its bar's redraws of 3-18, which still give their steps, with the
    losses each rank's prints say.  Rank 0 alone logs the evaluator's runs."""
    name = _IGNITE + "idist-gloo_torchrun-tee3_progressbar_engine-logger_2rank.log"
    recs = parse_file(name)
    prints = _ignite_prints(name)
    assert {r for r, _ in prints} == {0, 1} and len(prints) == 18
    for rank in (0, 1):
        progress = [r for r in recs if r["kind"] == "progress" and r["rank"] == rank]
        assert [r["step"] for r in progress] == [s for s in range(2, 95) if s != 48]
        by_step = {r["step"]: r["loss"] for r in progress}
        assert all(by_step[i] == loss for (r, i), loss in prints.items() if r == rank)
    ends = [(r["rank"], r["duration_ms"]) for r in recs if r.get("phase") == "end"]
    assert ends == [(0, 20.0), (0, 5.0), (0, 24.0), (0, 8.0)]
    assert {(r["rank"], r["step"]) for r in recs if r.get("phase") == "result"} == {
        (0, 47), (1, 47), (0, 94), (1, 94)}


_SPEECHBRAIN = "speechbrain-1.1.2_torch-2.11_"


def test_speechbrain_fit_bars_summaries_and_checkpoints():
    """SpeechBrain's training bar: a step per count it drew (10 and 20 of each epoch of 20, after
    the epochs before), with the epoch's mean loss at that count's first redraw (the postfix is
    redrawn after every batch with the count tqdm drew last).  Each end-of-epoch summary is an
    evaluation at the optimizer's `steps`, its checkpoint after it; the test pass at the end.
    The validations' bars, with no `train_loss`, give no steps; `Would load a checkpoint here,
    but none found yet` loads none."""
    recs = parse_file(_SPEECHBRAIN + "brain-fit_slow-batch_cpu.log")
    assert {r["framework"] for r in recs} == {"speechbrain"}
    assert [(r["kind"], r["step"], r.get("subset") or r.get("action")) for r in recs] == [
        ("progress", 10, None), ("progress", 20, None), ("eval", 20, "validation"), ("checkpoint", 20, "save"),
        ("progress", 30, None), ("progress", 40, None), ("eval", 40, "validation"), ("checkpoint", 40, "save"),
        ("progress", 50, None), ("progress", 60, None), ("eval", 60, "validation"), ("checkpoint", 60, "save"),
        ("checkpoint", 60, "load"), ("eval", 60, "test")]
    first = recs[0]
    assert (first["epoch"], first["iter_in_epoch"], first["total_steps"], first["loss"], first["it_per_s"]) == (
        1, 10, 20, 2.33, 18.7)
    assert recs[2]["metrics"] == {"loss": 2.29, "ACC": 0.119, "train_loss": 2.33, "lr": 0.1}
    assert (recs[-1]["epoch"], recs[-1]["metrics"]) == (1, {"loss": 2.33, "ACC": 0.106})


def test_speechbrain_ddp_under_torchrun_tee():
    """`Brain.fit` with DDP on 2 ranks (gloo) under `torchrun --tee 3`: the main process alone
    draws the bar and logs; each rank trains 10 batches an epoch.  torchrun turns each redraw's
    `\r` into a newline and reads the rank's stdout and stderr from two files: a summary comes
    glued behind a redraw on one prefix, and `Going into epoch 3` before epoch 2's last
    redraws.  Every step 1-30 is read once, in order, at its epoch; each summary an evaluation at
    its `steps`, its save there too.  The sample that loads 0.5 s slower falls in batch 2, 8 and
    4 of the epochs (the sampler shuffles by epoch): the bar's rate drops at steps 2, 18, 24."""
    recs = parse_file(_SPEECHBRAIN + "brain-fit_ddp-gloo_torchrun-tee3_2rank.log")
    steps = [r for r in recs if r["kind"] == "progress"]
    assert [(r["rank"], r["step"], r["epoch"]) for r in steps] == [
        (0, step, (step - 1) // 10 + 1) for step in range(1, 31)]
    assert [steps[i]["loss"] for i in (0, 9, 19, 29)] == [2.3, 2.32, 2.3, 2.29]
    slow = [r["step"] for prev, r in zip(steps, steps[1:]) if r["it_per_s"] < 0.8 * prev["it_per_s"]]
    assert slow == [2, 18, 24]
    assert [(r["kind"], r["step"], r.get("subset") or r.get("action")) for r in recs if r["kind"] != "progress"] == [
        ("eval", 10, "validation"), ("checkpoint", 10, "save"), ("eval", 20, "validation"),
        ("checkpoint", 20, "save"), ("eval", 30, "validation"), ("checkpoint", 30, "save"),
        ("checkpoint", 30, "load"), ("eval", 30, "test")]
    assert [r["metrics"]["train_loss"] for r in recs if r.get("subset") == "validation"] == [2.32, 2.3, 2.29]


def test_speechbrain_resumed_run_and_its_train_log_txt():
    """The resumed run's bar counts from `Going into epoch 4`: steps 80 and 100, as its
    summaries' `steps` say.  `train_log.txt` holds the summaries alone: evaluations at their
    `steps`, a test pass at the last."""
    recs = parse_file(_SPEECHBRAIN + "brain-fit_resumed-to-epoch-5_cpu.log")
    assert [(r["kind"], r["step"]) for r in recs if r["kind"] in ("progress", "eval")] == [
        ("progress", 80), ("eval", 80), ("progress", 100), ("eval", 100), ("eval", 100)]
    recs = parse_file(_SPEECHBRAIN + "filetrainlogger_train-log-txt_both-runs.log")
    assert [(r["step"], r["epoch"], r["subset"]) for r in recs] == [
        (20, 1, "validation"), (40, 2, "validation"), (60, 3, "validation"), (60, 1, "test"),
        (80, 4, "validation"), (100, 5, "validation"), (100, 1, "test")]
