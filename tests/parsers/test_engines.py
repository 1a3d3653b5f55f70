"""Every parser pattern has two engines (`base.Pattern`): stdlib `re` for short ASCII lines, `regex`
for the rest.  They must find the same matches, with the same groups, wherever `re` is used: on
every short ASCII line of the corpus, and on generated ASCII text near each pattern's own words."""
from __future__ import annotations

import importlib
import pkgutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ridgescope.parsers
from ridgescope.parsers import generic
from ridgescope.parsers.base import SHORT_LINE, Pattern
from ridgescope.parsers.generic import step_total, stepish
from ridgescope.parsers.scan import interesting

from .conftest import CORPUS


def _patterns() -> dict[str, Pattern]:
    found = {}
    for info in pkgutil.iter_modules(ridgescope.parsers.__path__):
        module = importlib.import_module(f"ridgescope.parsers.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, Pattern):
                found[f"{info.name}.{name}"] = value
    return found


PATTERNS = _patterns()


def _short_ascii_lines() -> list[str]:
    """The corpus's lines (and `\\r` segments) that a pattern may see through `re`: short,
    ASCII, and past the keyword pre-check."""
    lines = set()
    for path in sorted(CORPUS.rglob("*.log")):
        for line in path.read_bytes().decode("utf-8", "replace").split("\n"):
            for seg in line.split("\r"):
                if seg.isascii() and len(seg) <= SHORT_LINE and interesting(seg):
                    lines.add(seg)
    return sorted(lines)


CORPUS_LINES = _short_ascii_lines()


def _found(found) -> tuple | None:
    return None if found is None else (found.span(), found.groups())


def _same(pattern: Pattern, text: str) -> None:
    assert _found(pattern._re.search(text)) == _found(pattern._regex.search(text)), text
    assert _found(pattern._re.match(text)) == _found(pattern._regex.match(text)), text
    assert _found(pattern._re.fullmatch(text)) == _found(pattern._regex.fullmatch(text)), text
    assert [_found(m) for m in pattern._re.finditer(text)] == \
        [_found(m) for m in pattern._regex.finditer(text)], text


def test_every_parser_pattern_is_dual():
    assert len(PATTERNS) > 60
    assert "kv._PAIR" in PATTERNS and "generic.METER" in PATTERNS


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_engines_agree_on_the_corpus(name):
    """Each line as printed, and every 8th with its spaces turned into ASCII characters that
    Unicode and ASCII classes could disagree on."""
    pattern = PATTERNS[name]
    for i, line in enumerate(CORPUS_LINES):
        _same(pattern, line)
        if i % 8 == 0:
            _same(pattern, line.replace(" ", "\x1c\x0b"[i % 16 // 8]))


# Words of the patterns and of the lines they read, and the ASCII characters whose class
# membership could differ between engines (controls, \x1c-\x1f, \x85 is not ASCII).
ATOMS = ["step", "Step", "STEP", "iter", "iteration", "forward-backward", " ....: ", "(min, max) ",
         "time across ranks (ms):", "[2024-10-16 04:23:00]", "loss", "lr", "time", "ms", "s", "GB", "GiB",
         "NCCL", "INFO", "Epoch", "TRAIN", "Node", "Batch", "Speed:", "samples/sec", "checkpoint",
         "Saving", "to", "from", "Error", "(ms)", "|", ":", "=", ",", ".", "/", "[", "]", "(", ")",
         "{", "}", "'", '"', "-", "+", "e", "E", "_", "@", "%", " ", "  ", "\t", "\x0b", "\x0c",
         "\x1c", "\x1f", "\x7f", "0", "7", "12", "3.5", "1e-05", "nan", "inf", "x", "a_b"]
ascii_text = st.one_of(st.lists(st.sampled_from(ATOMS), max_size=24).map("".join),
                       st.text(st.characters(max_codepoint=127), max_size=80))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(PATTERNS)), ascii_text)
def test_engines_agree_on_generated_text(name, text):
    _same(PATTERNS[name], text)


_STEP_WORDS = ["step", "Step", "STEP", "iter", "Iter", "ITER", "iteration", "Iteration",
               "global_step", "training_steps", "num_updates", "steps", "iTer", "Global_step"]
_AROUND = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "|", ",", "[", ":", "=", "_",
           "a", "s", "ation", "é", "\xa0", ""]
step_words = st.tuples(st.sampled_from(_AROUND), st.sampled_from(_STEP_WORDS),
                       st.sampled_from(_AROUND)).map("".join)


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step_words | st.sampled_from(ATOMS), max_size=8).map("".join))
def test_stepish_is_the_pattern(text):
    """`generic.stepish` reads ASCII text without the regex: it must find what `_STEPISH` finds."""
    assert stepish(text) == (generic._STEPISH._regex.search(text) is not None)


def test_stepish_on_the_corpus():
    hits = 0
    for path in sorted(CORPUS.rglob("*.log")):
        for line in path.read_bytes().decode("utf-8", "replace").split("\n"):
            for seg in line.split("\r"):
                found = stepish(seg.strip())
                assert found == (generic._STEPISH._regex.search(seg.strip()) is not None), seg
                hits += found
    assert hits > 1000


_WS = ["", " ", "  ", "\t", "\x0b", "\x1c", "\xa0"]
_DIGITS = ["1", "10", "٣", "x", ""]
step_totals = st.tuples(*[st.sampled_from(part) for part in (
    ["step", "STEP", "Iter", "iteration", "_step", "iters"], _WS, ["", ":", "="], _WS, _DIGITS, _WS,
    ["/", "|", ""], _WS, _DIGITS)]).map("".join)


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step_totals | st.sampled_from(ATOMS), max_size=6).map("".join))
def test_step_total_is_the_pattern(text):
    """`generic.step_total` skips the regex where its literal is missing: same answers."""
    assert _found(step_total(text)) == _found(generic._STEP_TOTAL.search(text))
