"""Two processes' prints run into one line (parsers/glued.py): cut where the second begins."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ridgescope.parsers import Dispatcher
from ridgescope.parsers.glued import glued_at, glued_pieces

DATA = Path(__file__).resolve().parents[1] / "data"
CAPTURED = DATA / "captured"


def test_a_second_print_is_cut_where_it_begins():
    line = "step 6/16 loss 0.167 step_time_ms 50.2step 6/16 loss 0.167 step_time_ms 500.2"
    assert line[glued_at(line):] == "step 6/16 loss 0.167 step_time_ms 500.2"
    # another step's print, and a bar's last state with the message printed after it
    line = "step 7/16 loss 0.1 step_time_ms 50.2step 6/16 loss 0.2"
    assert line[glued_at(line):] == "step 6/16 loss 0.2"
    bar = "Epoch 0: :  42%|####    | 10/24 [00:01<00:01, v_num=16, loss=4.87]Epoch 0, global step 9: 'loss' reached"
    assert bar[glued_at(bar):].startswith("Epoch 0, global step 9")


def test_a_line_that_names_its_head_again_is_not_cut():
    for line in ("step:4 - actor/loss:0.01 - timing_s/step:1630.262 - timing_s/gen:40.1",   # verl
                 "step 5 loss 1.0 substep 5 of 8",
                 "step 12 loss 2.3 | next step in 3 s",          # not followed by a number
                 "[2024-05-01 12:00:00] [2024-05-01 12:00:01] iteration 5",  # no words before the number
                 "iteration 5/10 | elapsed time per iteration (ms): 12.5",
                 "Epoch: 0 | Step: 10 | PPO Epoch: 1 | Actor Loss: 0.1",   # DeepSpeed-Chat: a phrase's last word
                 "", "step", "5 steps 6 steps 7"):
        assert glued_at(line) == 0, line


@given(st.text(max_size=300))
def test_any_text_gives_a_cut_inside_it_or_none(line):
    at = glued_at(line)
    assert at == 0 or 0 < at < len(line)
    assert "".join(glued_pieces(line)) == line


def test_a_live_nodes_glued_prints_give_each_step_twice():
    """The real capture: six steps' two prints in one line each; every step has its two
    records, with both prints' step times."""
    d = Dispatcher()
    recs = d.feed_chunk((CAPTURED / "torch-2.15_torchrun-unlabelled_prints-glued-in-one-line_2x2rank.log").read_bytes())
    recs += d.flush()
    assert d.stats["glued"] == 6 and d.stats["garbage"] == 0
    steps = [r["step"] for r in recs if r["kind"] == "progress"]
    assert sorted(steps) == sorted(list(range(1, 17)) * 2)
    assert all(r["step_time_ms"] < 60 for r in recs)    # no step time read from two prints' text


LATENCY = ("Model Parameters: 0.331 B, Latency: {}s, TFLOPs: 0.51, Samples/sec: 3.64, Time/seq 0.27s, "
           "Batch Size: 2, Sequence Length: 512")


@pytest.mark.parametrize("before", ["", "[2025-01-02 16:14:40,067] [INFO] [timer.py:264:stop] epoch=0/micro_step=4700/"
                                        "global_step=2350, RunningAvgSamplesPerSec=46.5, CurrSamplesPerSec=46.4, "
                                        "MemAllocated=5.53GB, MaxMemAllocated=8.61GB"],
                         ids=["latency lines alone", "after a longer timer line"])
def test_two_latency_prints_in_one_line_are_two_steps_on_every_path(before):
    """DeepSpeed-Chat's latency line ends in free text (`, Time/seq ..`), so a second one glued
    after it fitted its own pattern: the block reader's run and the fast path read the two as
    one step, where `feed`'s full path cut them apart.  Each path now leaves such a line to the
    full path (whatever line came before: it sets how long a line the fast path expects)."""
    lines = [before] * bool(before) + [LATENCY.format(f"0.1{i}") for i in range(5)]
    lines += [LATENCY.format("0.55") + LATENCY.format("0.56"), LATENCY.format("0.57")]
    per_line = Dispatcher()
    want = [r for line in lines for r in per_line.feed(line)] + per_line.flush()
    chunked = Dispatcher()
    got = chunked.feed_chunk(("\n".join(lines) + "\n").encode()) + chunked.flush()
    latency = [(r["step"], r["step_time_ms"]) for r in want if r.get("step_inferred")]
    assert latency == [(1, 100.0), (2, 110.0), (3, 120.0), (4, 130.0), (5, 140.0), (6, 550.0), (7, 560.0), (8, 570.0)]
    assert got == want


def test_a_nemo_bar_followed_by_lightnings_checkpoint_message_gives_the_save():
    """NeMo 2 with its bar: ModelCheckpoint's message comes right after the bar's last redraw,
    on the same line; it names the checkpoint's path."""
    d = Dispatcher()
    recs = d.feed_chunk((CAPTURED / "nemo-2.7.3_megatron-gpt-tiny_1rank-progressbar_cpu.log").read_bytes()) + d.flush()
    paths = [(r["step"], r["path"].rsplit("/", 1)[1]) for r in recs if r["kind"] == "checkpoint" and r.get("path")]
    assert paths == [(10, "tiny_gpt--reduced_train_loss=4.8618-epoch=0-consumed_samples=20.0.ckpt"),
                     (20, "tiny_gpt--reduced_train_loss=4.8845-epoch=0-consumed_samples=40.0.ckpt")]


def test_a_long_line_of_many_glued_prints_gives_each_without_recursing():
    """More prints in one (truncated) line than Python's recursion limit: each piece is read
    once, none counted as garbage (cut recursively, the line was lost as garbage)."""
    d = Dispatcher()
    recs = d.feed_chunk(b"step 1 loss 2.5 " * 100_000 + b"\n")
    assert d.stats["glued"] > 1000 and d.stats["garbage"] == 0
    assert len(recs) == d.stats["glued"] + 1 and {(r["step"], r["loss"]) for r in recs} == {(1, 2.5)}


def test_glued_pieces_put_back_together_are_the_line():
    line = "step 1 loss 2.5 " * 50 + "tail"
    pieces = glued_pieces(line)
    assert len(pieces) == 50 and "".join(pieces) == line
    assert glued_pieces("step 1 loss 2.5") == ["step 1 loss 2.5"]


PRINTED = [  # real logs whose progress lines `print` writes (not `logging`, whose lines do not glue)
    "captured/deepspeed-0.19.8_pipeline-engine_2stage-cpu.log",
    "captured/litgpt-0.5.13_pretrain_accum_cpu.log",
    "captured/ms-swift-4.6.0_sft_tiny-qwen2_disable-tqdm_cpu.log",
    "captured/nanogpt_train-py_tiny-char_cpu.log",
    "captured/nemo-2.7.3_megatron-gpt-tiny_1rank-printer_cpu.log",
    "captured/timm-1.0.31_train-py_cpu.log",
    "captured/torchtitan-0.3.0_llama3-debugmodel_2rank-unlabelled_cpu.log",
    "captured/torchtune-0.6.1_full_finetune_single_device_pipe_cpu.log",
    "captured/transformers-5.24.0_trainer_disable-tqdm_pipe.log",
    "captured/pytorch-examples_word-language-model_lstm_tiny-corpus_cpu.log",
    "corpus/hf_trainer/bigscience_hf-trainer-deepspeed-zero3_gpt2_16node_slurm_cr-progress.log",
    "corpus/torchtitan_nemo_nanogpt_etc/modded-nanogpt_2025-10-24_NorMuon_8xH100.log",   # `...ms` + `step:`
]


def _progress(lines: list[str]) -> list[tuple]:
    d = Dispatcher()
    recs = d.feed_chunk(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")) + d.flush()
    return sorted(((r["step"], r.get("loss"), r.get("step_time_ms")) for r in recs if r["kind"] == "progress"), key=str)


@pytest.mark.parametrize("name", PRINTED)
def test_two_adjacent_prints_run_into_one_line_are_both_read(name):
    """Each framework's own progress lines, two pairs of adjacent ones run into one line each
    and their newlines after them (as two ranks' unbuffered prints): the same records as the
    log as written, whether the active parser's fast path, its block readers or the full path
    would read the line."""
    lines = [raw.decode("utf-8", "replace").rstrip("\n") for raw in (DATA / name).read_bytes().splitlines(True)]
    d = Dispatcher()
    printed = [i for i, line in enumerate(lines) if "\r" not in line and any(
        r["kind"] == "progress" for r in d.feed(line))]
    pairs = [i for i in printed if i + 1 in printed]
    assert len(pairs) >= 2
    glued = list(lines)
    for i in sorted({pairs[len(pairs) // 2], pairs[-1]}, reverse=True):
        glued[i:i + 2] = [glued[i] + glued[i + 1], ""]
    assert _progress(glued) == _progress(lines)
