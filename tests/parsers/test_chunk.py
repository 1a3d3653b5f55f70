"""`Dispatcher.feed_chunk` gives exactly the records and stats of `feed` on each line."""
from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ridgescope.cli.cmd_parse import workers_per_node
from ridgescope.parsers import FORMATS, Dispatcher
from ridgescope.parsers.base import MAX_LINE

from .conftest import CORPUS
from .test_captured import CAPTURED
from .test_fuzz import FRAGMENTS

LOGS = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.log"))
OWN_RUNS = sorted(p.name for p in CAPTURED.glob("*.log"))


def fed(method, items, log_format=None, cls=Dispatcher, nproc=None):
    """Records and stats of a fresh ``cls`` fed ``items`` through ``method``."""
    d = cls(log_format, nproc)
    out = []
    for item in items:
        out.extend(getattr(d, method)(item))
    out.extend(d.flush())
    return out, d.stats


def per_line(lines, log_format=None, nproc=None):
    return fed("feed", lines, log_format, nproc=nproc)


class Scanning(Dispatcher):
    def _worth_scanning(self, data):
        return True     # scan every block, however small or dense


def chunked(blocks, log_format=None, nproc=None):
    got = fed("feed_chunk", blocks, log_format, Scanning, nproc)
    assert fed("feed_chunk", blocks, log_format, nproc=nproc) == got      # small blocks go line by line
    return got


def blocks_of(data, size):
    """Cut like the log probe does: at the last newline of each read."""
    nl = data[:0].__class__(b"\n" if isinstance(data, bytes) else "\n")
    out, pos = [], 0
    while pos < len(data):
        cut = data.rfind(nl, pos, pos + size) + 1
        if cut <= pos:
            cut = min(len(data), pos + size)
            e = data.find(nl, cut)
            cut = len(data) if e < 0 else e + 1
        out.append(data[pos:cut])
        pos = cut
    return out


@pytest.mark.parametrize("path", [CORPUS / rel for rel in LOGS] + [CAPTURED / name for name in OWN_RUNS],
                         ids=LOGS + OWN_RUNS)
def test_logs_chunks_match_lines(path):
    """With the workers a node has read from the file's head, as `parse` and `ingest` read them
    (a node's later workers may show only after another node's lines: torchx's replicas)."""
    data = path.read_bytes()
    nproc = workers_per_node(str(path))
    want = per_line(data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"), nproc=nproc)
    assert chunked([data], nproc=nproc) == want
    assert chunked(blocks_of(data, 65536), nproc=nproc) == want
    assert chunked(blocks_of(data, 700), nproc=nproc) == want
    text = data.decode("utf-8", "replace")
    want_text = per_line(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"), nproc=nproc)
    assert chunked(blocks_of(text, 4096), nproc=nproc) == want_text


TIMER = ("[2025-01-02 15:54:42,299] [INFO] [timer.py:264:stop] epoch=0/micro_step={}/global_step={}, "
         "RunningAvgSamplesPerSec=46.44, CurrSamplesPerSec=46.34, MemAllocated=5.53GB, MaxMemAllocated=8.61GB")


@pytest.mark.parametrize("tail", ["", "-", "nan", "]", ", Throughput=3"])
def test_a_deepspeed_timer_line_with_more_after_it_reads_alike_in_blocks(tail):
    """DeepSpeed's throughput timer line read by the block reader gives what `feed` gives,
    whatever follows its memory (before, anything but a comma after `GB` lost its memory)."""
    lines = [TIMER.format(2 * i, i) for i in range(1, 40)]
    lines[20] += tail
    want = per_line(lines)
    assert [r.get("mem_gb") for r in want[0]] == [5.53] * 39
    assert chunked(["\n".join(lines) + "\n"]) == want


def test_edges():
    assert chunked([b""]) == per_line([])
    assert chunked([b"a\nb"]) == per_line([b"a", b"b"])
    assert chunked([b"\n\n"]) == per_line([b"", b""])
    long = b"x" * (MAX_LINE + 5)
    lines = [b"hello"] * 500 + [long] + [b"world"] * 600 + [long, long, b"x" * MAX_LINE]
    got = chunked([b"\n".join(lines) + b"\n"])
    assert got == per_line(lines) and got[1]["truncated"] == 3
    lines = [b"ok", b"\xff\xfe bad", b"caf\xc3\xa9", b"\x1b[31mred\x1b[0m", b"a\rb", b"tab\there"]
    assert chunked([b"\n".join(lines)]) == per_line(lines)
    tb = ["Traceback (most recent call last):", '  File "x.py", line 1, in <module>', "    f()",
          "ValueError: nope", "after", "step 3/9 loss 1.0 step_time_ms 5"]
    got = chunked(["\n".join(tb) + "\n"])
    assert got == per_line(tb) and any(r["kind"] == "error" for r in got[0])


def test_torchrun_tee_parts_chunks_match_lines():
    """Lines that torchrun's `--tee` split (see tee.py), read in blocks as the probe reads."""
    data = (CORPUS.parent / "captured" / "torch-2.15_torchrun-tee3_lines-in-two-writes_3rank.log"
            ).read_bytes()
    want = per_line(data.split(b"\n")[:-1])
    assert want[1]["records"] == 12
    for size in (65536, 700, 40):
        assert chunked(blocks_of(data, size)) == want
    assert chunked(blocks_of(data.decode(), 100)) == want


lines = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=20), max_size=30).map("".join)
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.lists(lines, max_size=12), st.sampled_from([None, *FORMATS]))
def test_any_text_chunk_matches_lines(batch, fmt):
    batch = [line.replace("\n", " ") for line in batch]
    want = per_line(batch, fmt)
    assert chunked(["".join(line + "\n" for line in batch)], fmt) == want
    if batch and batch[-1]:
        assert chunked(["\n".join(batch)], fmt) == want


@SETTINGS
@given(st.lists(st.binary(max_size=60) | lines.map(str.encode), max_size=12))
def test_any_bytes_chunk_matches_lines(batch):
    batch = [line.replace(b"\n", b" ") for line in batch]
    want = per_line(batch)
    assert chunked([b"".join(line + b"\n" for line in batch)]) == want
    if batch and batch[-1]:
        assert chunked([b"\n".join(batch)]) == want


SPINE_LIKE = ["step 12/60 loss 2.3451 step_time_ms 153.2", "step 13/60 loss nan step_time_ms 1e3",
              "step 14/60 loss 2.1 step_time_ms 150.0 tokens_per_s 1234", "step 15/60 loss 2.1",
              "step 16/60  loss 2.1 step_time_ms 3", "step 17/60 | loss 2.1 step_time_ms 3",
              "step 18/60 loss 2.1 step_time_ms 3 NCCL_x 1", "step 19/60 lr 1e-3 step_time_ms 3 step 4",
              "step ١/60 loss 2 step_time_ms 3", "step 20/60 loss 2 time 3s", "step 21/60 (loss 2) step_time_ms 3"]


@pytest.mark.parametrize("fmt", [None, "nanogpt", "generic"])
def test_fast_path_matches_full_path(fmt):
    """The no-regex fast path gives the records of the full path (which `[rank0]:` lines take)."""
    for line in SPINE_LIKE:
        fast, _ = per_line([SPINE_LIKE[0], line], fmt)
        full, _ = per_line([SPINE_LIKE[0], "[rank0]:" + line], fmt)
        for r in full:
            r["rank"] = None
        assert fast == full, line


@SETTINGS
@given(st.lists(st.sampled_from(["step", "1/2", "12/60", "loss", "2.5", "step_time_ms", "153.2", "lr",
                                 "1e-3", "nan", "inf", "1_0", "|", ":", "x:", "tok/s", "=", "3", "NCCL"]), max_size=10))
def test_fast_path_any_tokens(toks):
    line = " ".join(toks)
    fast, _ = per_line([SPINE_LIKE[0], line])
    full, _ = per_line([SPINE_LIKE[0], "[rank0]:" + line])
    for r in full:
        r["rank"] = None
    assert fast == full


ONE_STREAM_LOGS = [CORPUS / rel for rel in LOGS if not any(w in rel for w in ("srun", "tee", "slurm"))] + [
    CAPTURED / name for name in OWN_RUNS if not any(w in name for w in ("srun", "tee", "slurm", "mpirun", "openmpi",
                                                                        "glued", "two-writes", "node",
                                                                        "dist-ddp-2x2"))]
"""Logs with no launcher label to learn from the lines seen so far (a window that starts inside
`1: [default0]:` lines, or torchx's `crash/1 [0]:` of replicas of two workers, can learn a node's
width later than the blocks, which see further)."""
LOGGED = re.compile(rb"\[?\d{4}-\d\d-\d\d|\[\d\d/|[A-Z]\d{4} |\d\d/\d\d/\d{4}|[A-Z]+[:|]")
"""A line a logger wrote (a time or a level first): it writes its newline in the same call, so no
other print runs into its end."""
DAMAGE = [b"\r", b"\x1b[31m", b"\xff", b"\t", b"]", b"{", b":", b"=", b"%|", b"nan", b"1" * 30]


@st.composite
def damaged_window(draw):
    """Up to 120 lines of a real log, from anywhere in it, with up to four of its lines damaged."""
    path = draw(st.sampled_from(ONE_STREAM_LOGS))
    lines = path.read_bytes().split(b"\n")
    start = draw(st.integers(0, len(lines) - 1))
    window = lines[start:start + draw(st.integers(1, 120))]
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(window) - 1))
        line, at = window[i], draw(st.integers(0, len(window[i])))
        if i + 1 < len(window) and not LOGGED.match(line) and draw(st.booleans()):
            window[i:i + 2] = [line + window[i + 1]]    # two prints run together (`glued.py`)
            continue
        window[i] = draw(st.sampled_from([line[:at] + draw(st.sampled_from(DAMAGE)) + line[at:],
                                          line[:at] + line[at + 1:], line[:at]]))
    return window


def as_set(result):
    records, stats = result
    return sorted(map(repr, records)), stats


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_window(), st.sampled_from([40, 700, 65536]), st.sampled_from([None, None, *FORMATS]))
def test_a_damaged_window_of_a_real_log_reads_alike_in_blocks(window, size, fmt):
    """The probe's blocks give the records of `feed` line by line, from anywhere in a real log,
    damaged or not (their order aside: a bar's held steps and a message on its line may come in
    either order)."""
    want = per_line(window, fmt)
    assert as_set(chunked(blocks_of(b"\n".join(window) + b"\n", size), fmt)) == as_set(want)
