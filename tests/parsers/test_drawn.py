"""A bar's records say when the bar first drew their step (`drawn_ns`), where the reader says
when it read each part (`base.CLOCK`, which the log probe sets): the end of that step."""
from __future__ import annotations

import re

import pytest

from ridgescope.parsers import Dispatcher
from ridgescope.parsers.base import CLOCK
from ridgescope.probes.logprobe import cut_read

from .test_captured import CAPTURED, TEE_BARS, TEE_BARS_STEPS, parse_file


def writes_of(data: bytes) -> list[bytes]:
    """A captured bar's writes: each redraw (`\r` and its text), and each line's rest."""
    return [w for w in re.findall(rb"\r?[^\r\n]*\n?", data) if w]


def read_redraw_by_redraw(data: bytes | list[bytes], per_read: int = 1
                          ) -> tuple[list[dict], list[bytes]]:
    """Records of `data` (or of these writes) read `per_read` writes at a time as the log probe
    reads them, with the number of the read for its time; and the reads."""
    writes = writes_of(data) if isinstance(data, bytes) else data
    reads = [b"".join(writes[i:i + per_read]) for i in range(0, len(writes), per_read)]
    d, out, pending, since = Dispatcher(), [], b"", 0
    try:
        for i, piece in enumerate(reads):
            parts, pending, since = cut_read(pending, since, piece, i)
            for drawn_ns, lines, redraws in parts:
                CLOCK.now_ns = drawn_ns
                if lines:
                    out += d.feed_chunk(lines)
                if redraws:
                    out += d.feed_redraws(redraws)
        CLOCK.now_ns = since
        if pending:
            out += d.feed_chunk(pending)
        out += d.flush()
    finally:
        CLOCK.now_ns = None
    return out, reads


@pytest.mark.parametrize("per_read", [1, 2, 3])
def test_a_loops_own_bar_gives_the_read_that_first_drew_each_step(per_read):
    """Also where a read brings the end of the redraw held back and the next redraws at once
    (the held one came with the read before)."""
    data = (CAPTURED / "accelerate-1.15.0_own-loop_tqdm-steps-bar_pipe.log").read_bytes()
    recs, reads = read_redraw_by_redraw(data, per_read)
    first: dict[int, int] = {}
    for i, piece in enumerate(reads):
        for m in re.finditer(rb"\| *(\d+)/24 \[", piece):
            first.setdefault(int(m.group(1)), i)
    progress = [r for r in recs if r["kind"] == "progress"]
    assert [(r["step"], r["drawn_ns"]) for r in progress] == [(s, first[s]) for s in range(1, 25)]
    # without a clock (a file read later), no record says when
    assert all("drawn_ns" not in r for r in parse_file(
        "accelerate-1.15.0_own-loop_tqdm-steps-bar_pipe.log"))


@pytest.mark.parametrize("name", ["keras-3.15.1_fit-325-step-epochs_pipe.log",
                                  "transformers-5.24.0_trainer_tqdm_pipe.log",
                                  "lightning-2.6.6_tqdmprogressbar_pipe.log",
                                  "accelerate-1.15.0_own-loop_tqdm-epoch-iteration-bars_pipe.log",
                                  "ignite-0.5.5_torch-2.11_progressbar_3-epochs_pipe.log"])
def test_each_frameworks_bar_says_when_it_drew_each_step(name):
    """Every step of the training bar carries the read that first drew it: later steps were
    drawn later, and the records are those of the bar read without a clock."""
    recs, _ = read_redraw_by_redraw((CAPTURED / name).read_bytes())
    progress = [r for r in recs if r["kind"] == "progress" and r.get("step") is not None
                and not r.get("summary")]
    assert len(progress) >= 8 and all("drawn_ns" in r for r in progress)
    drawn = [r["drawn_ns"] for r in progress]
    assert drawn == sorted(drawn) and len(set(drawn)) == len(drawn)
    assert [{k: v for k, v in r.items() if k != "drawn_ns"} for r in recs] == parse_file(name)


def test_a_bar_behind_a_prefix_on_every_redraw_gives_the_read_that_first_drew_each_step():
    """One rank's bar behind its prefix on every write, `\r` kept, alone on the stream, and
    with another rank's lines ending the stream's lines between redraws."""
    data = (CAPTURED / "accelerate-1.15.0_own-loop_tqdm-steps-bar_pipe.log").read_bytes()
    teed = [b"[default0]:" + w for w in writes_of(data)]
    mixed = [w for piece in teed for w in (piece, b"[default1]:waiting for rank 0\n")]
    for writes in (teed, mixed):
        recs, reads = read_redraw_by_redraw(writes)
        first: dict[int, int] = {}
        for i, piece in enumerate(reads):
            for m in re.finditer(rb"\| *(\d+)/24 \[", piece):
                first.setdefault(int(m.group(1)), i)
        assert [(r["rank"], r["step"], r["drawn_ns"]) for r in recs if r["kind"] == "progress"
                ] == [(0, s, first[s]) for s in range(1, 25)]


def test_a_redraw_held_in_parts_carries_the_read_that_brought_it():
    """Where a rank's part is held (another rank's text came after it) and its line ends in a
    later read, each redraw carries the read that brought its text, not the read that ended
    the line: the held one the first read, the one that came with the line's end the second."""
    d = Dispatcher()
    try:
        CLOCK.now_ns = 5
        recs = d.feed_chunk(b"[default0]:\rSteps:  50%|#  | 1/2 [00:01<00:01, 1.00it/s, loss=0.5]"
                            b"[default1]:x\n")
        CLOCK.now_ns = 9
        recs += d.feed_chunk(b"[default0]:\rSteps: 100%|## | 2/2 [00:02<00:00, 1.00it/s, loss=0.4]\n")
        recs += d.flush()
    finally:
        CLOCK.now_ns = None
    assert [(r["step"], r["drawn_ns"]) for r in recs if r["kind"] == "progress"] == [(1, 5), (2, 9)]


def test_torchrun_tee_bars_carry_the_read_that_brought_each_redraw():
    """torchrun's `--tee` turns each redraw into a line, its text passed on when drawn and its
    newline with the rank's next redraw: read a write at a time, each rank's step carries the
    write of its text, not the later one of its newline."""
    data = (CAPTURED / TEE_BARS).read_bytes()
    writes = [w for w in re.split(rb"(?=\[default\d\]:)", data) if w]
    first: dict = {}
    for i, write in enumerate(writes):
        for m in re.finditer(rb"\| *(\d+)/10 \[", write):
            first.setdefault((int(write[8:9]), int(m.group(1))), i)
    recs, _ = read_redraw_by_redraw(writes)
    assert sorted((r["rank"], r["step"], r["drawn_ns"]) for r in recs if r["kind"] == "progress") == sorted(
        (rank, step, first[rank, step]) for rank, step, _ in TEE_BARS_STEPS)

def test_an_olmo_record_says_when_its_header_was_read():
    """OLMo's record is read over several lines, and given when the next one begins: it carries
    the read of its header (when its step ended), not of the line that closed it."""
    lines = (CAPTURED.parent / "excerpts" / "olmo_console-metrics.log").read_bytes().splitlines(keepends=True)
    headers = [i for i, line in enumerate(lines) if b"[step=" in line]
    recs, _ = read_redraw_by_redraw(lines)      # one line a read: the read's number is the line's
    assert [(r["step"], r["drawn_ns"]) for r in recs] == [(1, headers[0]), (2, headers[1]), (3, headers[2])]


def test_a_litgpt_step_with_no_time_says_when_it_was_read():
    """Under accumulation LitGPT prints no step time: read live, each step's line says when it
    was read (its step's end); a step's own time, where printed, needs none."""
    lines = (CAPTURED / "litgpt-0.5.13_pretrain_accum_cpu.log").read_bytes().splitlines(keepends=True)
    at = {int(m.group(1)): i for i, line in enumerate(lines) if (m := re.search(rb" step (\d+) \|", line))}
    recs, _ = read_redraw_by_redraw(lines)
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [(r["step"], r["drawn_ns"]) for r in prog] == sorted(at.items())
    timed, _ = read_redraw_by_redraw((CAPTURED / "litgpt-0.5.13_pretrain_noaccum_cpu.log").read_bytes().splitlines(keepends=True))
    assert not any("drawn_ns" in r for r in timed)


def test_a_clu_step_says_when_it_was_read():
    """CLU writes a line of a step's metrics with no step time: read live, each says when."""
    lines = (CAPTURED / "clu-0.0.12_flax-0.12.8_logging-writer_cpu.log").read_bytes().splitlines(keepends=True)
    at = {}
    for i, line in enumerate(lines):
        m = re.search(rb"\] \[(\d+)\] learning_rate=", line)
        if m:
            at[int(m.group(1))] = i
    recs, _ = read_redraw_by_redraw(lines)
    assert [(r["step"], r["drawn_ns"]) for r in recs if r["kind"] == "progress"] == sorted(at.items())


def test_a_verl_sft_step_says_when_it_was_read():
    """verl's SFT trainer times no step: read live, each step line (after the bar's redraw on
    its line) says when it was read, its step's end."""
    writes = writes_of((CAPTURED / "verl-0.9.1_sft-trainer_tiny-qwen2_cpu.log").read_bytes())
    at = {int(m.group(1)): i for i, w in enumerate(writes) if (m := re.search(rb"step:(\d+) - perf/", w))}
    recs, _ = read_redraw_by_redraw(writes)
    prog = [r for r in recs if r["kind"] == "progress"]
    assert len(at) == 20 and [(r["step"], r["drawn_ns"]) for r in prog] == sorted(at.items())


def test_a_torchtitan_step_says_when_it_was_read():
    """torchtitan's step line times nothing (its timestamp is the log's, not the reader's):
    read live, each says when it was read; a validation line is no step."""
    lines = (CAPTURED / "torchtitan-0.3.0_llama3-debugmodel_1rank_cpu.log").read_bytes().splitlines(keepends=True)
    at = {int(m.group(1)): i for i, line in enumerate(lines) if (m := re.search(rb"\x1b\[31mstep: +(\d+) ", line))}
    recs, _ = read_redraw_by_redraw(lines)
    prog = [r for r in recs if r["kind"] == "progress"]
    assert len(at) == 20 and [(r["step"], r["drawn_ns"]) for r in prog] == sorted(at.items())


def test_ignites_bar_gives_the_redraw_that_ended_each_step():
    """Ignite's count lags by one: a count's last redraw is drawn as the next iteration ends
    (`ignite.py`), and that redraw's read is the step's time, so that a slow iteration's time
    falls in its own step's window."""
    data = (CAPTURED / "ignite-0.5.5_torch-2.11_progressbar_3-epochs_pipe.log").read_bytes()
    recs, reads = read_redraw_by_redraw(data)
    last: dict[int, int] = {}
    for i, piece in enumerate(reads):
        for m in re.finditer(rb"Epoch \[(\d)/3\]: \[(\d+)/47\]", piece):
            count = int(m.group(2))
            last[(int(m.group(1)) - 1) * 47 + (count if count == 47 else count + 1)] = i
    progress = [r for r in recs if r["kind"] == "progress"]
    assert len(progress) == 138 and all(r["drawn_ns"] == last[r["step"]] for r in progress)
