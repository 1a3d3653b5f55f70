"""The parsers' `fast` hooks (no-regex paths for the active parser's common line shapes) give
exactly the records and stats of the full regex path: on the whole corpus, on edge cases, and on
hypothesis-made variants of each shape."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ridgescope.cli.cmd_parse import workers_per_node
from ridgescope.parsers import Dispatcher
from ridgescope.parsers.deepspeed import DeepSpeedParser
from ridgescope.parsers.megatron import MegatronParser
from ridgescope.parsers.nanogpt import NanoGPTParser

from .conftest import CORPUS

LOGS = sorted(CORPUS.rglob("*.log")) + sorted((CORPUS.parent / "captured").glob("*.log"))


class FullPath(Dispatcher):
    FAST = False


def run(cls, lines, log_format=None, chunk=False, nproc=None):
    d = cls(log_format, nproc)
    out = []
    if chunk:
        out.extend(d.feed_chunk("".join(line + "\n" for line in lines)))
    else:
        for line in lines:
            out.extend(d.feed(line))
    out.extend(d.flush())
    return out, d.stats, d.framework


def same(lines, log_format=None, nproc=None):
    """The fast paths give the full path's records and stats, line by line and in one block; and
    the two ways of reading give the same records.  (Their line counts may differ by the lines
    that `srun -u` cut: a block is read as srun's only where it begins with srun's label, a line
    fed alone where it does.)  `nproc`: the workers a node has, as `parse` reads them from a
    file's head."""
    want = run(FullPath, lines, log_format, nproc=nproc)
    assert run(Dispatcher, lines, log_format, nproc=nproc) == want
    block = run(Dispatcher, lines, log_format, chunk=True, nproc=nproc)
    assert block == run(FullPath, lines, log_format, chunk=True, nproc=nproc)
    assert (block[0], block[2]) == (want[0], want[2])
    assert {k: v for k, v in block[1].items() if k != "lines"} == {k: v for k, v in want[1].items() if k != "lines"}
    return want


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_corpus_fast_matches_full(path):
    data = path.read_bytes()
    lines = data.decode("utf-8", "replace").split("\n")
    if lines and not lines[-1]:
        lines.pop()
    same(lines, nproc=workers_per_node(str(path)))


@pytest.mark.parametrize("name", ["megatron/megatron-deepspeed_gpt3-125M_tokendrop_8gpu_timers_nccl-info.log",
                                  "hf_trainer/bigscience_hf-trainer-deepspeed-zero3_gpt2_16node_slurm_cr-progress.log"])
def test_crlf_line_endings_read_as_lf(name):
    """A log written with CRLF endings (a pty, a Windows editor) gives what its LF form gives;
    a CR that ends its line is no redraw."""
    data = (CORPUS / name).read_bytes().replace(b"\r\n", b"\n")
    assert data.endswith(b"\n")
    want = run(FullPath, data.decode("utf-8", "replace").split("\n")[:-1])
    crlf = data.replace(b"\n", b"\r\n")
    d = Dispatcher()
    got = d.feed_chunk(crlf) + d.flush()
    assert got == want[0] and d.stats == want[1]
    assert run(Dispatcher, crlf.decode("utf-8", "replace").split("\n")[:-1])[:2] == want[:2]


# One line of each shape as the corpus prints it: the fast hook takes it (not None).
SHAPES = {
    DeepSpeedParser: [
        "Model Parameters: 0.331 B, Latency: 0.27s, TFLOPs: 1.02, Samples/sec: 7.28, Time/seq 0.14s, "
        "Batch Size: 2, Sequence Length: 512",
        "[2023-04-18 02:33:49,721] [INFO] [logging.py:96:log_dist] [Rank 0] step=3690, skipped=70, "
        "lr=[4.948558648353954e-06, 4.948558648353954e-06], mom=[(0.9, 0.95), (0.9, 0.95)]",
        "[2023-04-18 09:03:08,789] [INFO] [timer.py:199:stop] epoch=0/micro_step=240/global_step=240, "
        "RunningAvgSamplesPerSec=84.94054786524607, CurrSamplesPerSec=84.17163226245036, "
        "MemAllocated=10.77GB, MaxMemAllocated=20.55GB",
        "[2022-11-22 10:03:37,042] [INFO] [timer.py:198:stop] 0/200, RunningAvgSamplesPerSec=90.3166380, "
        "CurrSamplesPerSec=82.74966845933933, MemAllocated=0.72GB, MaxMemAllocated=7.0GB",
        "epoch: 0|step: 5|ppo_ep: 1|act_loss: 0.2587890625|cri_loss: 0.146240234375|unsuper_loss: 0.0",
    ],
    NanoGPTParser: [
        "step:1622/3242 train_loss:3.6626 train_time:650060ms step_avg:403.26ms",
        "step:1158/2315 train_time:70616ms step_avg:60.98ms",
        "step:0/2315 val_loss:10.8258 train_time:0ms step_avg:0.03ms",
        "step:0/3242 val_loss:10.8259 train_time:250ms step_avg:nanms",
    ],
    MegatronParser: [
        " iteration     1060/ 1716613 | consumed samples:       271360 | consumed tokens:    555745280 | "
        "elapsed time per iteration (ms): 597.9 | learning rate: 6.246E-05 | global batch size:   256 | "
        "lm loss: 3.012E+00 | loss scale: 65536.0 | grad norm: 0.612 |",
        "time (ms) | forward-compute: 340.72 | backward-compute: 176.25 | batch-generator: 2.10 | "
        "optimizer: 20.5 | all-grads-sync: 12.0",
        " [2024-10-16 04:23:00] iteration        2/  500000 | consumed samples:          256 | "
        "elapsed time per iteration (ms): 1811.8 | learning rate: 4.000000E-07 | lm loss: 1.177651E+01 |",
    ],
}


@pytest.mark.parametrize("cls", list(SHAPES))
def test_fast_takes_the_common_shapes(cls):
    p = cls()
    if cls is MegatronParser:
        p.fast(SHAPES[cls][0])
    for line in SHAPES[cls]:
        assert p.fast(line), line


PRIME = {
    "deepspeed": SHAPES[DeepSpeedParser][1],
    "nanogpt": SHAPES[NanoGPTParser][1],
    "megatron": SHAPES[MegatronParser][0],
}

EDGES = [
    # DeepSpeed-Chat latency
    "Model Parameters: 0.331 B, Latency: 0.27s, TFLOPs: 1.02, Samples/sec: 7.28",
    "Model Parameters: 0.331 B, Latency: 0.27s, TFLOPs: 1.02, Samples/sec: 7.28 ",
    "Model Parameters: 1.2.3 B, Latency: .s, TFLOPs: 1., Samples/sec: .5,",
    "Model Parameters: 1 B, Latency: 2s, TFLOPs: 3, Samples/sec: " + "9" * 400,
    "Model Parameters: 1 B, Latency: " + "9" * 306 + "s, TFLOPs: 3, Samples/sec: 4",
    "step:1/10 train_time:" + "9" * 400 + "ms step_avg:" + "9" * 400 + "ms",
    "[Rank 0] step=1, skipped=0, lr=[" + "9" * 400 + "]",
    "x 0/10, RunningAvgSamplesPerSec=" + "9" * 400 + ", CurrSamplesPerSec=2",
    "Model Parameters: 0.331 B, Latency: 0.27 s, TFLOPs: 1.02, Samples/sec: 7.28",
    "Model Parameters: ١ B, Latency: 0.27s, TFLOPs: 1.02, Samples/sec: 7.28",
    "Model Parameters: 0.3 B, Latency: 0.2s, TFLOPs: 1, Samples/sec: 7, step=1 [Rank 0] step=2, skipped=0, lr=[1]",
    "Model Parameters: 0.3 B, Latency: 0.2s, TFLOPs: 1, Samples/sec: 7 time (ms) | a: 1",
    "Model Parameters: 0.3 B, Latency: 0.2s, TFLOPs: 1, Samples/sec: 7, NCCL",
    "Model Parameters: 0.3 B, Latency: 0.2s, TFLOPs: 1, Samples/sec: x Model Parameters: 1 B, Latency: 2s, "
    "TFLOPs: 3, Samples/sec: 4",
    " Model Parameters: 0.3 B, Latency: 0.2s, TFLOPs: 1, Samples/sec: 7",
    *(("Model Parameters: 0.3 B, Latency: 0.2s, TFLOPs: 1, Samples/sec: 7, " + "x" * 2048)[:n]
      for n in (2047, 2048)),
    # DeepSpeed-Chat step 3
    "epoch: 0|step: 5|ppo_ep: 1|act_loss: 0.2587890625|cri_loss: 0.146240234375|unsuper_loss: 0.0",
    "epoch: 0|step: 5|",
    "epoch: 0|step: 5",
    "epoch: 0|step: 5 |act_loss: 1",
    "epoch: 0|step:5|act_loss: 1",
    "epoch: 0|step: ١|act_loss: 1",
    "epoch: 0|step: 5|act_loss: 1|Latency: 2",
    "epoch: 0|step: 5|act_loss: 1|" + "x" * 990 + "|b: 2|c: 3",
    "epoch: 0|step: 5|" + "|".join(f"k{i}: {i}" for i in range(30)),
    " epoch: 0|step: 5|act_loss: 1",
    # log_dist step
    "[Rank 0] step=5, skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]",
    "[Rank 3] step=5, skipped=1, lr=[ 1e-05]",
    "[Rank 3] step=5, skipped=1, lr=[\t-1e+05,",
    "[Rank 3] step=5, skipped=1, lr=[1e-05 ]",
    "[Rank 3] step=5, skipped=1, lr=[]",
    "[Rank 3] step=5, skipped=1, lr=[1e-0x5]",
    "[Rank 3] step=5, skipped=1, lr=[e]",
    "[Rank x] step=5, skipped=1, lr=[1] [Rank 2] step=6, skipped=0, lr=[2]",
    "[Rank 1] step=١, skipped=1, lr=[1]",
    "[Rank 1]  step=1, skipped=1, lr=[1]",
    "[Rank 1] step=1, skipped=1,lr=[1]",
    "[rank1]:[Rank 1] step=1, skipped=1, lr=[1]",
    "0: [Rank 1] step=1, skipped=1, lr=[1]",
    "[1,0]<stdout>:[Rank 1] step=1, skipped=1, lr=[1]",
    # ThroughputTimer
    "epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=1.5, CurrSamplesPerSec=inf",
    "epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=1.5, CurrSamplesPerSec=infinity",
    "x epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=1.5, CurrSamplesPerSec=2, MemAllocated=1GB",
    "x epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=1.5, CurrSamplesPerSec=2, foo",
    "x 0/10, RunningAvgSamplesPerSec=1.5, CurrSamplesPerSec=2, MemAllocated=1GB, MaxMemAllocated=2GB",
    "x 0/10, RunningAvgSamplesPerSec=1.5, CurrSamplesPerSec=2, MemAllocated=1GB, MaxMemAllocated=2G",
    "x 0/10, RunningAvgSamplesPerSec=1.5, CurrSamplesPerSec=2 3, MemAllocated=1GB, MaxMemAllocated=2GB",
    "x a0/10, RunningAvgSamplesPerSec=1.5, CurrSamplesPerSec=2",
    "x 1/2/10, RunningAvgSamplesPerSec=1.5, CurrSamplesPerSec=2",
    "x 1/10, RunningAvgSamplesPerSec=, CurrSamplesPerSec=2",
    "x 1/10, RunningAvgSamplesPerSec=1, CurrSamplesPerSec=",
    "epoch=0/micro_step=10/global_step=10,RunningAvgSamplesPerSec=1, CurrSamplesPerSec=2 "
    "3/4, RunningAvgSamplesPerSec=5, CurrSamplesPerSec=6",
    "[Rank 0] epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=1, CurrSamplesPerSec=2",
    # modded-nanogpt
    "step:1/10 train_time:5ms step_avg:5ms",
    "step:1/10 train_time:5ms step_avg:5ms ",
    "step:1/10 train_time:5.0ms step_avg:5ms",
    "step:1/10 train_time:5ms step_avg:nanms",
    "step:1/10 train_time:5ms step_avg:infms",
    "step:1/10 val_loss:nan train_time:5ms step_avg:1.2.3ms",
    "step:1/10 train_loss:nan train_time:5ms step_avg:1ms",
    "step:1/10 train_loss: train_time:5ms step_avg:1ms",
    "step:1/10 lr:3 train_time:5ms step_avg:1ms",
    "step:1/10  train_time:5ms step_avg:1ms",
    "step:1/10\ttrain_time:5ms step_avg:1ms",
    "step:١/10 train_time:5ms step_avg:1ms",
    "step:1/ train_time:5ms step_avg:1ms",
    "step:1 train_time:5ms step_avg:1ms",
    "step:2/10 train_time:3ms step_avg:1ms",
    "step:3/10 train_time:9ms step_avg:1msms",
    "step:1/10 train_time:5ms step_avg:1ms NCCL",
    "step:1/10 train_time:5ms step_avg:1" + "0" * 2047 + "ms",
    "step 1/10 loss 2.5 step_time_ms 1" + "0" * 2047,
    "step 1/10 loss nan step_time_ms 1.5",
    "step 1/10 loss 1e999 step_time_ms 1.5",
    "step 1/10 loss 1-2 step_time_ms 1.5",
    # Megatron
    " iteration 5/ 10 | lm loss: 1.0 | elapsed time per iteration (ms): 3 |",
    "iteration\t5\t/\t10\t|",
    "iteration5/10 | lm loss: 1.0 |",
    " iteration 5/ 10 lm loss: 1.0",
    " iteration 5 | lm loss: 1.0",
    " iteration ١/ 10 | lm loss: 1.0",
    " iteration 5/ 10 | NCCL | lm loss: 1.0",
    " validation loss at iteration 5 | lm loss value: 3.0 | lm loss PPL: 20.0 |",
    "x iteration 5/ 10 | lm loss: 1.0",
    " [2024-10-16 04:23:00] iteration 5/ 10 | lm loss: 1.0 |",
    "[2024-10-16 04:23:00]iteration 5/ 10 | lm loss: 1.0 |",
    "[] iteration 5/ 10 | lm loss: 1.0 |",
    "[2024-10-16T04:23:00] iteration 5/ 10 | lm loss: 1.0 |",
    "[" + "1" * 40 + "] iteration 5/ 10 | lm loss: 1.0 |",
    "[" + "1" * 41 + "] iteration 5/ 10 | lm loss: 1.0 |",
    "[2024-10-16 04:23:00] \titeration 5/ 10 | lm loss: 1.0 |",
    "[2024-10-16 04:23:00] [x] iteration 5/ 10 | lm loss: 1.0 |",
    "time (ms) | forward-compute: 1 | backward-compute: 2",
    "time (ms)| a: 1",
    "time (ms) x | a: 1 time (ms) | b: 2",
    "time (ms) | nothing here",
    "[Rank 0] time (ms) | forward: 1.0 | backward: 2.0 | step: 3.0",
    " time (ms) | save-checkpoint: 120.5",
]


def test_latency_lines_under_gradient_accumulation():
    """Once the config says two micro-batches a step, every path sums them into one record."""
    config = "[2025-01-02 15:46:55,970] [INFO] [config.py:1003:print]   gradient_accumulation_steps .. 2"
    lat = [f"Model Parameters: 0.331 B, Latency: 0.{i}s, TFLOPs: 1.0{i}, Samples/sec: 7.{i}" for i in range(1, 6)]
    recs, _, _ = same([PRIME["deepspeed"], config, *lat])
    steps = [(r["step"], r.get("micro_batches"), r.get("step_time_ms")) for r in recs if r.get("step_inferred")]
    assert steps == [(1, 2, 300.0), (2, 2, 700.0), (3, 1, 500.0)]       # the last at flush
    same([PRIME["deepspeed"], config, *EDGES, *lat])


def test_yielding_parser_takes_the_full_path():
    """DeepSpeed yields to Megatron: once Megatron was seen, its lines go the full path."""
    ds = SHAPES[DeepSpeedParser]
    same([PRIME["megatron"], *ds, *EDGES], "deepspeed")
    same([*ds, PRIME["megatron"], *ds, *EDGES], "deepspeed")
    same([*ds, PRIME["megatron"], *ds, *EDGES])


@pytest.mark.parametrize("fmt", [None, "deepspeed", "nanogpt", "megatron"])
@pytest.mark.parametrize("prime", list(PRIME))
def test_edges_fast_matches_full(prime, fmt):
    for line in EDGES:
        same([PRIME[prime], line, line, PRIME[prime], line], fmt)
    same([PRIME[prime], *EDGES], fmt)


FRAGMENTS = [
    "Model Parameters: ", " B, Latency: ", "s, TFLOPs: ", ", Samples/sec: ", "[Rank ", "] step=",
    ", skipped=", ", lr=[", "]", "epoch=", "/micro_step=", "/global_step=", ", RunningAvgSamplesPerSec=",
    ", CurrSamplesPerSec=", ", MemAllocated=", "GB, MaxMemAllocated=", "GB", "iteration", " iteration ",
    "time (ms)", " | ", "|", ": ", "step:", "train_time:", "ms", " step_avg:", "val_loss:",
    "train_loss:", "epoch: ", "|step: ", "act_loss: ", "/", " ", "  ", "\t", ",", "0", "7", "12", "3.5", "1e-05", "-", "+", "E", ".",
    "nan", "inf", "١", "x", "NCCL", "[rank0]:", "0: ", "lm loss", "elapsed time per iteration (ms)",
    "save-checkpoint", "forward-compute", "(", ")",
]
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
soup = st.lists(st.sampled_from(FRAGMENTS), max_size=16).map("".join)
value = st.sampled_from(["0", "12", "3.5", "1.", ".5", "1.2.3", "", "nan", "inf", "1e-05", "-1", "+2",
                         "1E+00", "١", "x", " 1", "1 ", "1,5"])


def templates(v):
    return [
        f"Model Parameters: {v[0]} B, Latency: {v[1]}s, TFLOPs: {v[2]}, Samples/sec: {v[3]}, Time/seq 0.1s",
        f"[2023-04-18 02:33:49,721] [INFO] [Rank {v[0]}] step={v[1]}, skipped={v[2]}, lr=[{v[3]}, 1], mom=[]",
        f"[t] epoch={v[0]}/micro_step={v[1]}/global_step={v[2]}, RunningAvgSamplesPerSec={v[3]}, "
        f"CurrSamplesPerSec={v[4]}, MemAllocated={v[5]}GB, MaxMemAllocated={v[0]}GB",
        f"[t] {v[0]}/{v[1]}, RunningAvgSamplesPerSec={v[2]}, CurrSamplesPerSec={v[3]}",
        f"step:{v[0]}/{v[1]} train_loss:{v[2]} train_time:{v[3]}ms step_avg:{v[4]}ms",
        f"step:{v[0]}/{v[1]} val_loss:{v[2]} train_time:{v[3]}ms step_avg:{v[4]}ms",
        f"step:{v[0]}/{v[1]} train_time:{v[3]}ms step_avg:{v[4]}ms",
        f" iteration {v[0]}/ {v[1]} | lm loss: {v[2]} | elapsed time per iteration (ms): {v[3]} | "
        f"learning rate: {v[4]} | consumed samples: {v[5]} |",
        f"time (ms) | forward-compute: {v[0]} | backward-compute: {v[1]} | save-checkpoint: {v[2]}",
        f"epoch: {v[0]}|step: {v[1]}|ppo_ep: {v[2]}|act_loss: {v[3]}|cri_loss: {v[4]}|x:{v[5]}",
    ]


@SETTINGS
@given(st.lists(soup, max_size=8), st.sampled_from(list(PRIME)), st.sampled_from([None, "deepspeed", "nanogpt"]))
@example(lines=["0: step:", "0: "], prime="deepspeed", fmt=None)    # srun -u's word, then its newline
def test_soup_fast_matches_full(lines, prime, fmt):
    same([PRIME[prime], *lines], fmt)


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 9), st.lists(value, min_size=6, max_size=6)), max_size=8),
       st.sampled_from(list(PRIME)))
def test_templates_fast_matches_full(picks, prime):
    lines = [templates(v)[i] for i, v in picks]
    same([PRIME[prime], *lines])
    same([PRIME[prime], *lines], prime)


# The generic parser's readers run only where no framework claims the stream, so no `detect`
# may claim their shapes: names here come near the markers frameworks are detected by.
METER_NAMES = ["Time", "Data", "Loss", "LR", "Tok/s", "Acc@1", "Batch time", "NCCL", "Epoch", "step",
               "iter", "NCCL version", "NCCL INFO", "DeepSpee", "iteratio", "Model Paramete", "launch",
               "lightnin", "reduced", "Loss/tok", "ppl", "@x", "Time x y", "a_b", "%|", "reduced_train_loss",
               "RunningAvgSamplesPerSec"]
MXNET_NAMES = ["accuracy", "reduced_train_loss", "top-k", "cross-entropy", "launch", "iteratio", "loss",
               "ppl", "reduced", "lightning", "top_k", "x"]
PREFIXES = ["", "0: ", "  12: ", "[rank3]:", "[1,2]<stdout>:"]
meter_lines = st.builds(
    lambda prefix, tag, e, i, items: f"{prefix}{tag} [{e}][{i}/20]" + "".join(
        f"\t{name} {v}" + (f" ({v})" if avg else "") for name, v, avg in items),
    st.sampled_from(PREFIXES), st.sampled_from(["TRAIN", "VALIDATION", "Epoch:", "Test:", "Val:", "Eval:"]),
    st.integers(0, 3), st.integers(0, 30),
    st.lists(st.tuples(st.sampled_from(METER_NAMES), value, st.booleans()), max_size=6))
mxnet_lines = st.builds(
    lambda prefix, head, node, e, speed, items: f"{prefix}{head}{node}Epoch[{e}] Batch [0-20]\tSpeed: {speed} "
    "samples/sec" + "".join(f"\t{name}={v}" for name, v in items),
    st.sampled_from(PREFIXES), st.sampled_from(["", "2020-06-23 17:44:17,723 ", " ", "INFO "]),
    st.sampled_from(["", "Node[1] "]), st.integers(0, 3), value,
    st.lists(st.tuples(st.sampled_from(MXNET_NAMES), value), max_size=4))

# Printed dicts: keys that frameworks are detected by, or that the generic parser reads.
DICT_KEYS = ["loss", "train_runtime", "eval_loss", "reduced_train_loss", "ds_config", "chosen_last_scores",
             "iteration", "step", "global_step", "training_steps", "lr", "launch", "accelerate.x", "NCCL",
             "seq/s", "eval_acc", "[Rank 0] step=", "Epoch ", "%|", "][", "a/b", "Speed:", "| train"]
dict_lines = st.builds(
    lambda prefix, items: prefix + "{" + ", ".join(f"'{k}': {v}" for k, v in items) + "}",
    st.sampled_from(PREFIXES), st.lists(st.tuples(st.sampled_from(DICT_KEYS), value | st.just("'x'")),
                                        max_size=5))


@SETTINGS
@given(st.one_of(meter_lines, mxnet_lines, dict_lines))
def test_generic_readers_match_full(line):
    same([line])
    same([line], "generic")


@SETTINGS
@given(st.sampled_from(PREFIXES), st.lists(st.sampled_from(DICT_KEYS), min_size=1, max_size=4, unique=True),
       st.lists(st.lists(value, min_size=4, max_size=4), min_size=2, max_size=5))
def test_dicts_of_one_shape_are_claimed_as_each_alone_would_be(prefix, keys, rows):
    """The generic reader asks once per shape of a dict of numbers whether another parser
    claims it: a stream of one shape, its values changing, reads as the full path reads it."""
    same([prefix + "{" + ", ".join(f"'{k}': {v}" for k, v in zip(keys, row)) + "}" for row in rows])


@SETTINGS
@given(st.lists(st.one_of(meter_lines, mxnet_lines, dict_lines, soup), max_size=8))
def test_generic_readers_in_mixed_streams(lines):
    same(lines)


# The printed-dict reader answers exactly what its regex finds, or defers.
DICT_ATOMS = ["'a'", "'loss'", '"x"', "'k k'", "'a:b'", "'é'", "1", "2.5", "-3e5", "'v'", "'v, w'",
              "True", "nan", "x" * 41, "ü", "[1, 2]", "{'n': 1}", "''", "'", ":", ", ", ": ", " ",
              "'" + "y" * 81 + "'", "1_000", "+.5", "None", "'a\"b'", "١", "007", "9" * 40, "'5'", "0", "1E5", "inf",
              "1e400", "-0", "'true'", "'97%'"]
dict_items = st.lists(st.tuples(st.sampled_from(DICT_ATOMS), st.sampled_from(DICT_ATOMS)),
                      min_size=1, max_size=6).map(lambda kv: ", ".join(f"{k}: {v}" for k, v in kv))


@SETTINGS
@given(st.one_of(dict_items, st.lists(st.sampled_from(DICT_ATOMS), max_size=12).map("".join)))
def test_plain_dict_matches_the_regex(body):
    from ridgescope.parsers.pydict import json_dict, plain_dict, regex_dict
    d = plain_dict(body)
    assert d is None or d == regex_dict(body)
    d = json_dict("{" + body + "}")
    assert d is None or d == regex_dict(body)


PREFIX_ATOMS = [" ", "0", "7", "12", "1234567", "12345678", ": ", ":", "١", "x", "[1,3]<stdout>:", "a"]


@SETTINGS
@given(st.lists(st.sampled_from(PREFIX_ATOMS), max_size=10).map("".join))
def test_srun_label_without_the_regex(line):
    from ridgescope.parsers.prefix import _PREFIX, _srun
    assert _srun("  3: x") == (3, "x") and _srun("416: y") == (416, "y")
    rank, rest = _srun(line)
    m = _PREFIX.match(line)
    if rank is not None:
        assert m is not None and (rank, rest) == (int(m.group(5)), line[m.end():])


TORCHRUN_ATOMS = ["[rank", "[default", "[", "3", "12", "12345678", "]:", "]", ":", ",", " ", "  ", "x", "\u0663"]


@SETTINGS
@given(st.lists(st.sampled_from(TORCHRUN_ATOMS), max_size=8).map("".join))
def test_torchrun_prefix_without_the_regex(line):
    """`[rankN]:` (one space after it dropped: torch's excepthook adds it), `[defaultN]:`, `[N]:`."""
    from ridgescope.parsers.prefix import _PREFIX, _torchrun
    rank, rest = _torchrun(line)
    m = _PREFIX.match(line)
    if rank is not None:
        assert m is not None and (rank, rest) == (int(m.group(1) or m.group(2) or m.group(3)), line[m.end():])


def test_plain_dicts_and_meter_items():
    from ridgescope.parsers.generic import meter_item
    from ridgescope.parsers.pydict import json_dict, plain_dict
    assert plain_dict("'training_steps': 1, 'average_loss': 6.3, 'tag': 'x', 'n': 12345678901234567890") == {
        "training_steps": 1, "average_loss": 6.3, "tag": "x", "n": 12345678901234567168}
    assert plain_dict("'a':1") is None       # other spacing: the regex decides
    assert json_dict("{'a':1, 'b': 'x', 'c': 2.5e-3}") == {"a": 1, "b": "x", "c": 0.0025}
    for doubt in ("{'a': True}", "{'a': '5'}", "{'a': NaN}", "{'a': {'b': 1}}", "{'n': 12345678901234567890}"):
        assert json_dict(doubt) is None
    assert meter_item("Data 8.63e-05 (3.91e-03)") == ("Data", "8.63e-05")
    assert meter_item("Batch time 0.1 (0.2)") == ("Batch time", "0.1")
    assert meter_item("Acc@1 -1.5E+02") == ("Acc@1", "-1.5E+02")
    assert meter_item("1a 5") is None


class CountingFeed(Dispatcher):
    """Counts the lines that reach `feed`'s line by line path: the block readers take the
    others."""

    def __init__(self, log_format=None):
        super().__init__(log_format)
        self.fed = 0

    def _feed_line(self, line, rank=None):
        self.fed += 1
        return super()._feed_line(line, rank)


# The lines of SHAPES that a block reader takes (Megatron has none).
# (None: no framework claims the stream, and the generic parser's readers take its lines.)
READ = {
    "deepspeed": SHAPES[DeepSpeedParser],
    "nanogpt": [*SHAPES[NanoGPTParser], "step 7/100 loss 2.5 step_time_ms 150.5"],
    None: ["TRAIN [0][10/1291]\tTime 0.075 (0.087)\tData 9.49e-05 (1.78e-02)\tTok/s 232016 (195956)\t"
           "Loss/tok 9.6103 (10.0141)\tLR 3.704e-05",
           "Epoch: [3][ 10/391]\tTime  0.204 ( 0.294)\tLoss 6.9e+00 (6.9e+00)\tAcc@1   0.00 (  0.10)",
           "Test: [0][0/100]\tBatch time 0.1 (0.2)",
           "2020-06-23 17:44:17,723 Node[0] Epoch[0] Batch [0-20]\tSpeed: 31830.13 samples/sec\t"
           "accuracy=0.001401",
           "Epoch[2] Batch [40-60]\tSpeed: 3.5 samples/sec",
           "{'training_steps': 1, 'average_loss': 6.30078125, 'step_loss': 6.30078125, "
           "'learning_rate': 0.0019973333333333336, 'seq/s': 1684.2148183014438, 'global_steps': 0}"],
}


@pytest.mark.parametrize("fmt", list(READ))
def test_block_readers_take_their_lines_in_place(fmt):
    """In a block, the lines of the readers' shapes never reach `feed`, and give what `feed`
    gives them one by one, launcher prefix or not; a line of another shape between them does
    reach it."""
    lines = READ[fmt] * 3
    d = CountingFeed(fmt)
    got = d.feed_chunk("".join(line + "\n" for line in lines)) + d.flush()
    assert d.fed == 0
    assert (got, d.stats) == run(FullPath, lines, fmt)[:2]
    assert d.stats["records"] == len(lines)
    mixed = [*lines, "[rank1]:" + lines[0], "  3: " + lines[-1], "x time 1", *lines]
    d = CountingFeed(fmt)
    got = d.feed_chunk("".join(line + "\n" for line in mixed)) + d.flush()
    assert d.fed == 1
    assert (got, d.stats) == run(FullPath, mixed, fmt)[:2]


NCCL_PIECES = ["host:1:2 [0] NCCL INFO ", "NCCL INFO", "NCCL version 2.18.1+cuda12.1", "Channel 00/02 :",
               " via NET/IB/0", "via P2P/IPC", "2 coll channels, 2 p2p channels", "opCount 1f",
               "Init COMPLETE", "Init timings - ", "comm 0x7f", "rank 0 nranks 8", "Using network IB", "NET/Plugin",
               "Setting affinity", "NCCL_DEBUG=INFO", " ", "/", ":", "0", "12"]


# Lines that a run (`Parser.runs`) reads at once: the runs take them all, not the readers.
RUN_LINES = {
    DeepSpeedParser: [SHAPES[DeepSpeedParser][0]] * 3,
    NanoGPTParser: [*SHAPES[NanoGPTParser], "step 7/100 loss 2.5 step_time_ms 150.5"],
}


@pytest.mark.parametrize("cls", list(RUN_LINES))
def test_runs_take_their_lines(cls):
    lines = RUN_LINES[cls]
    (first, name), = cls.runs
    assert {line[0] for line in lines} == {first}
    text = "".join(line + "\n" for line in lines) + "other line\n"
    pos, n, recs = getattr(cls(), name)(text, 0, len(text))
    assert (n, text[pos:]) == (len(lines), "other line\n")
    assert recs == run(FullPath, lines, cls.name)[0]


@SETTINGS
@given(st.lists(st.sampled_from(NCCL_PIECES) | st.text(max_size=6), min_size=1, max_size=8).map("".join))
def test_nccl_chatter_is_an_nccl_line_without_a_word_the_parser_reads(line):
    from ridgescope.parsers.nccl import READS, chatter
    assert chatter(line) == ("NCCL INFO" in line and not any(word in line for word in READS))


@SETTINGS
@given(st.lists(st.sampled_from(NCCL_PIECES), min_size=1, max_size=8).map("".join))
def test_nccl_chatter_yields_nothing_and_changes_nothing(line):
    """A line `chatter` drops: the NCCL parser gives it no record and keeps no state from it."""
    import copy

    from ridgescope.parsers.nccl import NcclParser, chatter
    p = NcclParser()
    p.parse("h:1:2 [0] NCCL INFO Channel 00/02 : 0 1", None)
    before = copy.deepcopy(vars(p))
    if chatter(line):
        assert p.parse(line, None) == [] and vars(p) == before
