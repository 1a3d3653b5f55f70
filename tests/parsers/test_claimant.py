"""The dispatcher shows a line whose shape (its digits aside) no `detect` claimed before only to
the detectors that read state from lines (`Parser.detect_reads`, see `Dispatcher._claimant`).

That is sound where every other detector answers from the line's shape alone and changes no
state; these tests hold the detectors to it on every line of the real logs, and compare the
records with those of a dispatcher that asks every detector every time."""
from __future__ import annotations

import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ridgescope.parsers import FORMATS, PARSERS, Dispatcher
from ridgescope.parsers.base import SHORT_LINE
from ridgescope.parsers.dispatcher import _UNCLAIMED_SHAPES
from ridgescope.parsers.prefix import split_rank_prefix

from .conftest import CORPUS
from .test_chunk import blocks_of, damaged_window, fed
from .test_captured import CAPTURED

LOGS = sorted(CORPUS.rglob("*.log")) + sorted(CAPTURED.glob("*.log"))
PURE = {name: cls for name, cls in PARSERS.items() if name != "generic" and not cls.detect_reads}


def log_lines() -> list[str]:
    """Every line and redraw of the real logs that `_claimant` may remember, behind no prefix."""
    out = []
    for path in LOGS:
        for line in path.read_bytes().decode("utf-8", "replace").split("\n"):
            for part in line.split("\r"):
                if part and len(part) <= SHORT_LINE:
                    out.append(split_rank_prefix(part)[1])
    return out


LINES = log_lines()
ZEROS = str.maketrans("123456789", "000000000")


def state(parser) -> bytes:
    return pickle.dumps(vars(parser))


@pytest.mark.parametrize("name", sorted(PURE))
def test_a_detector_that_reads_no_state_answers_alike_whatever_the_digits(name):
    """...so that one line's answer holds for every line of its shape (a step of another
    number, another rank's time)."""
    detect = PURE[name]().detect
    differ = [line for line in LINES if detect(line) != detect(line.translate(ZEROS))]
    assert differ == []


@pytest.mark.parametrize("name", sorted(PURE))
def test_a_detector_that_reads_no_state_changes_none(name):
    parser = PURE[name]()
    before = state(parser)
    for line in LINES:
        parser.detect(line)
    assert state(parser) == before


@pytest.mark.parametrize("name", ["hf_trainer", "keras"])
def test_the_detectors_that_read_state_say_so(name):
    """The counter-check of the test above: the two that read their banner or header from the
    lines they are shown would lose it behind a remembered shape, and declare it."""
    parser = PARSERS[name]()
    before = state(parser)
    for line in LINES:
        parser.detect(line)
    assert state(parser) != before and parser.detect_reads


class AskingEveryDetector(Dispatcher):
    def _claimant(self, line):
        for p, detect in self._detects:
            if p is not self.active and detect(line):
                return p
        return None


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_a_log_gives_the_records_of_a_dispatcher_that_asks_every_detector(path):
    data = path.read_bytes()
    for method, items in (("feed", data.split(b"\n")), ("feed_chunk", blocks_of(data, 65536))):
        assert fed(method, items) == fed(method, items, cls=AskingEveryDetector)


def test_a_keras_epoch_line_is_read_behind_a_remembered_shape():
    """`Epoch 1/3` before anything Keras's: Keras reads it and claims nothing, so its shape is
    remembered; the next epoch's line, of that shape, must still reach Keras, whose bar then
    runs under epoch 2."""
    d = Dispatcher()
    lines = ["Epoch 1/3", "loading shards...", "Epoch 2/3",
             "5/5 [==============================] - 1s 200ms/step - loss: 0.5000"]
    recs = [r for line in lines for r in d.feed(line)] + d.flush()
    assert d.framework == "keras"
    assert {(r["kind"], r.get("epoch")) for r in recs} == {("progress", 2)}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_window(), st.sampled_from([None, None, *FORMATS]))
def test_a_damaged_window_of_a_real_log_gives_the_records_of_a_dispatcher_that_asks_every_detector(window, fmt):
    """Shapes remembered from one framework's lines, then another's, cut or run together."""
    data = b"\n".join(window) + b"\n"
    assert fed("feed_chunk", [data], fmt) == fed("feed_chunk", [data], fmt, cls=AskingEveryDetector)
    assert fed("feed", window, fmt) == fed("feed", window, fmt, cls=AskingEveryDetector)


def test_the_remembered_shapes_stay_bounded():
    """A stream of ever new shapes (each line's words differ) holds at most _UNCLAIMED_SHAPES."""
    d = Dispatcher()
    for i in range(3 * _UNCLAIMED_SHAPES):
        d.feed(f"stepper: task {'x' * (i % 97)} {'y' * (i // 97)}")
    assert 0 < len(d._unclaimed) <= _UNCLAIMED_SHAPES
    assert d.stats["lines"] == 3 * _UNCLAIMED_SHAPES and d.stats["garbage"] == 0
