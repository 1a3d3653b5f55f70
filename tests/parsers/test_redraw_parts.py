"""A bar's line, read part by part as the log probe reads a pipe (`cut_pending`: its `\r` redraws
as they come, before the line's newline), gives exactly the records and stats of the whole line."""
from __future__ import annotations

import re

import pytest

from ridgescope.parsers import Dispatcher
from ridgescope.probes.logprobe import cut_pending

from .conftest import CORPUS
from .test_captured import behind_prefix_on_every_write

LOGS = [p for p in sorted(CORPUS.rglob("*.log")) + sorted((CORPUS.parent / "captured").glob("*.log"))
        if re.search(rb"\r[^\n]", p.read_bytes())]
"""The logs with a redraw: a `\r` that does not end its line."""


def as_the_probe_reads(data: bytes, read_size: int) -> tuple[list[dict], dict, int]:
    """Records, stats and the number of `feed_redraws` calls, for `data` read `read_size`
    bytes at a time."""
    d, out, pending, parts = Dispatcher(), [], b"", 0
    for i in range(0, len(data), read_size):
        lines, redraws, pending = cut_pending(pending + data[i:i + read_size])
        if lines:
            out += d.feed_chunk(lines)
        if redraws:
            out += d.feed_redraws(redraws)
            parts += 1
    if pending:
        out += d.feed_chunk(pending)
    return out + d.flush(), d.stats, parts


def whole(data: bytes) -> tuple[list[dict], dict]:
    d = Dispatcher()
    out = d.feed_chunk(data)
    return out + d.flush(), d.stats


def comparable(recs: list[dict], data: bytes) -> list[dict]:
    """The records in their order; where several ranks' writes interleave (mpirun), in any
    order: read as they come, each rank's come as it drew them, where the whole file gives
    each rank's line when the line ends."""
    writers = set(re.findall(rb"\[\d+,\d+\]<std(?:out|err)>:|\[default\d+\]:", data))
    return sorted(recs, key=repr) if len(writers) > 1 else recs


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_redraws_read_as_they_come(path):
    data = path.read_bytes()
    recs, stats = whole(data)
    want = comparable(recs, data), stats
    for read_size in (4096, 333, 40):
        recs, stats, parts = as_the_probe_reads(data, read_size)
        assert (comparable(recs, data), stats) == want
    assert parts > 0        # at 40 bytes a read, some line was read in parts


@pytest.mark.parametrize("path", [p for p in LOGS if p.parent.name == "captured"],
                         ids=lambda p: p.name)
def test_redraws_behind_a_prefix_on_every_write_read_as_they_come(path):
    """The same bars behind a rank's prefix on every write, `\r` kept."""
    data = behind_prefix_on_every_write(path.read_bytes(), 2)
    want = whole(data)
    assert want[1]["garbage"] == whole(path.read_bytes())[1]["garbage"]
    for read_size in (4096, 333):
        assert as_the_probe_reads(data, read_size)[:2] == want


def test_the_logs_hold_bars():
    names = {p.name for p in LOGS}
    assert "keras-3.15.1_fit-325-step-epochs_pipe.log" in names
    assert "transformers-5.24.0_trainer_tqdm_pipe.log" in names
    assert len(LOGS) >= 12


def test_a_bar_gives_each_step_before_its_line_ends():
    """Keras' epoch, read as it is written: step 1's record comes once step 2 is drawn, long
    before the epoch's newline; the rank of a prefixed line holds for its later parts."""
    d = Dispatcher()
    assert d.feed_chunk(b"Epoch 1/1\n") == []
    bar = "\b" * 40 + "\r{}/300 \u2501\u2501\u2501 0s 5ms/step - loss: 0.{}"
    assert d.feed_redraws(("[rank2]:" + bar.format(1, 50) + bar.format(2, 48) + "\b\r").encode()) == [
        {"kind": "progress", "rank": 2, "step": 1, "framework": "keras", "epoch": 1, "iter_in_epoch": 1,
         "total_steps": 300, "loss": 0.5, "step_avg_ms": 5.0}]
    (step2,) = d.feed_redraws((bar.format(3, 47)[40:] + "\r").encode())
    assert (step2["rank"], step2["step"], step2["loss"]) == (2, 2, 0.48)
    assert d.stats["lines"] == 1            # `Epoch 1/1`; the bar's line is not over
    assert d.feed_chunk(b"\n") == [] and d.stats["lines"] == 2
    (step3,) = d.flush()                    # the epoch's last redraw may still come: held
    assert (step3["step"], step3["rank"]) == (3, 2)
