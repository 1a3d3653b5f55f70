"""A line whose logged values repeat a key that its parser reads from the line's shape (a bar's
postfix `total=3`, `epoch=2` after MXNet's `Epoch[2]`, a `phase` among Megatron's validation
values) gives its record, with the shape's value.  Before, the key went to `record` twice, which
raised: the line was lost as garbage, and where a bar held it at the stream's end, `flush` raised
to its caller (`parse`, the log probe)."""
from __future__ import annotations

import re
from collections import Counter

import pytest

from ridgescope.parsers import Dispatcher

from .conftest import CORPUS
from .test_captured import CAPTURED

LOGS = {
    "own loop's tqdm bar": CAPTURED / "accelerate-1.15.0_own-loop_tqdm-steps-bar_pipe.log",
    "torchtune's bar": CAPTURED / "torchtune-0.6.1_full_finetune_single_device_pipe_cpu.log",
    "Lightning's bar": CAPTURED / "lightning-2.6.6_tqdmprogressbar_pipe.log",
    "NeMo's bar": CAPTURED / "nemo-2.7.3_megatron-gpt-tiny_1rank-progressbar_cpu.log",
    "NeMo's DLLogger": CORPUS / "torchtitan_nemo_nanogpt_etc" / "nemo_qwen3-30b-moe_32xB200_gke_ptl-progress_dllogger.log",
    "SpeechBrain's bar": CAPTURED / "speechbrain-1.1.2_torch-2.11_brain-fit_slow-batch_cpu.log",
    "MXNet's speed": CORPUS / "multirank_prefixed" / "mlperf-v0.7_nvidia_resnet-mxnet_2node_Node-prefix.log",
    "Megatron's validation": CAPTURED / "megatron-core-0.17.1_pretrain-gpt_1rank_cpu.log",
    "modded-nanoGPT's validation": CORPUS / "torchtitan_nemo_nanogpt_etc" / "modded-nanogpt_2025-10-24_NorMuon_8xH100.log",
}
VALIDATIONS = {"Megatron's validation", "modded-nanoGPT's validation"}
"""Logs whose validation lines take the value; in the others, each step's line or bar does."""
KEYS = ["total", "max_steps", "epoch", "elapsed", "phase", "it/s", "samples_per_s"]
"""Keys that `kv.normalise` reads as the fields a shape gives (`total_steps`, `epoch`, ...) or
that a parser names itself (`phase`); `step` and `iter` are left out: they name the step."""

BAR_END = re.compile(r"\]((?:\r|$))")


def parse(lines: list[str]) -> tuple[list[dict], dict]:
    d = Dispatcher()
    out = []
    for line in lines:
        out.extend(d.feed(line))
    out.extend(d.flush())
    return out, d.stats


def with_value(lines: list[str], item: str, kind: str) -> list[str]:
    """`lines`, where a line gives a record of `kind`, with `item` logged after its values:
    inside a bar's postfix (before its `]`), else at its end."""
    d, out = Dispatcher(), []
    for line in lines:
        if any(r["kind"] == kind for r in d.feed(line)):
            if "\r" in line or line.rstrip().endswith("]"):
                line = BAR_END.sub(lambda m: f", {item}]{m.group(1)}", line)
            else:
                line = f"{line} {item}"
        out.append(line)
    return out


def steps(records: list[dict]) -> Counter:
    return Counter((r["kind"], r["rank"], r["step"]) for r in records)


@pytest.mark.parametrize("name", LOGS)
def test_a_repeated_key_loses_no_line(name):
    lines = LOGS[name].read_bytes().decode("utf-8", "replace").split("\n")
    want, stats = parse(lines)
    assert stats["garbage"] == 0 and want
    kind = "eval" if name in VALIDATIONS else "progress"
    for i, key in enumerate(KEYS):
        got, got_stats = parse(with_value(lines, f"{key}{'=' if i % 2 else ': '}3", kind))
        assert got_stats["garbage"] == 0, key
        assert steps(got) == steps(want), key


IN_ITS_OWN_SYNTAX = {
    "Keras's metrics": (CAPTURED / "keras-3.15.1_fit-325-step-epochs_pipe.log", r"( - loss: [\d.]+)", r"\1 - {}: 3"),
    "Ignite's postfix": (CAPTURED / "ignite-0.5.5_torch-2.11_progressbar_3-epochs_pipe.log", r"(, loss=[\d.]+)", r"\1, {}=3"),
}


@pytest.mark.parametrize("name", IN_ITS_OWN_SYNTAX)
def test_a_metric_named_as_a_shapes_key_loses_no_line(name):
    """The same, where the value is logged as the framework logs a metric: Keras's
    `- total: 3` after its loss, a `epoch=3` in Ignite's bar."""
    path, after, item = IN_ITS_OWN_SYNTAX[name]
    lines = path.read_bytes().decode("utf-8", "replace").split("\n")
    want, _ = parse(lines)
    for key in KEYS:
        got, stats = parse([re.sub(after, item.format(key), line) for line in lines])
        assert stats["garbage"] == 0, key
        assert steps(got) == steps(want), key


def test_a_postfix_total_keeps_the_bars_count():
    bars = [f"train:  {i}0%|#         | {i}/10 [00:0{i}<00:09,  1.00it/s, loss=0.5, total=3]\r" for i in (1, 2, 3)]
    records, stats = parse(bars)
    assert stats["garbage"] == 0
    assert [(r["step"], r["total_steps"], r["loss"]) for r in records] == [(1, 10, 0.5), (2, 10, 0.5), (3, 10, 0.5)]


BAR = [f"train:  {i}0%|#         | {i}/10 [00:0{i}<00:09,  1.00it/s, loss=0.5]\r" for i in (1, 2)]
OPEN_TRACEBACK = ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>']


def broken():
    raise RuntimeError("a parser's bug")


def test_a_failing_flush_loses_only_what_its_parser_held(monkeypatch):
    """The stream's end never raises: a parser whose `flush` fails counts as garbage, and what
    the others held still comes (the bar's last step, a traceback the stream ended in)."""
    d = Dispatcher()
    for line in BAR + OPEN_TRACEBACK:
        d.feed(line)
    monkeypatch.setattr(d.events, "flush", broken)
    assert [(r["kind"], r["step"]) for r in d.flush()] == [("progress", 2)]
    assert d.stats["garbage"] == 1

    d = Dispatcher()
    for line in BAR + OPEN_TRACEBACK:
        d.feed(line)
    monkeypatch.setattr(d.generic, "flush", broken)
    assert [(r["kind"], r.get("error")) for r in d.flush()] == [("error", "traceback")]
    assert d.stats["garbage"] == 1
