"""`pairs` finds exactly what the `_PAIR` regex finds, whichever way it takes."""
from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ridgescope.parsers.kv import _fast_pairs, pairs, regex_pairs

KEYS = ["iter", "loss", "lr", "dt", "loss/mean", "a.b", "_x", "step", "Time", "x" * 49, "y" * 50,
        "9a", "a#b", "é", "max mem", "dtb/std", "a-b@c"]
VALUES = ["1", "15", "7.011230", ".5", "-.5", "+3", "1.", "1e5", "1E+05", "1e1234", "1.5.2",
          "nan", "inf", "-inf", "NaN", "Infinity", "1_000", "١٢", "1" * 31, "1" * 32, "N/A",
          "5s", "1.5ms", "3%", "2GiB", "0x10", "", "-", "e5"]
SEPS = ["=", ": ", ":", " ", "  ", " " * 9, "\t", " = "]
GLUE = [" ", " | ", "|", "  ", ", ", "\t", "", " ("]
HEADS = ["", "[2025-12-31 12:15:36,066943][I][examples/vit:445:train_fn] ", "[x] ", "a]b ", "]"]

pair = st.tuples(st.sampled_from(KEYS), st.sampled_from(SEPS), st.sampled_from(VALUES)).map("".join)
messy = st.lists(st.tuples(pair, st.sampled_from(GLUE)).map("".join) | st.text(max_size=4), max_size=12)


@st.composite
def uniform(draw):
    """One separator and one glue for the whole line, the shape the fast reader takes."""
    sep, glue = draw(st.sampled_from(SEPS)), draw(st.sampled_from(GLUE[:2] + ["\t"]))
    items = draw(st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(VALUES)), min_size=1, max_size=8))
    return glue.join(k + sep + v for k, v in items)


line = st.tuples(st.sampled_from(HEADS), messy.map("".join) | uniform()).map("".join)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line, st.sampled_from([64, 3]))
@example("[2025-12-31 12:15:36,066943][I][examples/vit:445:train_fn] iter=15 loss=7.011230 dt=0.7", 64)
@example("step 5 | loss 2.5 | lr 1e-4", 64)
def test_pairs_is_the_regex(text, limit):
    assert pairs(text, limit) == regex_pairs(text, limit)


def test_plain_lines_skip_the_regex():
    """The shapes the fast reader exists for do take it (else the speed-up is gone unnoticed)."""
    assert _fast_pairs("iter=15 loss=7.011230 dt=0.735597 loss/mean=7.0 dtb/std=3e-4", 64) == [
        ("iter", "15", None), ("loss", "7.011230", None), ("dt", "0.735597", None),
        ("loss/mean", "7.0", None), ("dtb/std", "3e-4", None)]
    assert _fast_pairs("step: 5 | loss: 2.5 lr: 1e-4", 64) == [
        ("step", "5", None), ("loss", "2.5", None), ("lr", "1e-4", None)]
    for odd in ("step=1_000", "a#b=1", "x=1e1234", "k=" + "1" * 32, "a  1", "a=-inf", "é=1"):
        assert _fast_pairs(odd, 64) is None, odd
