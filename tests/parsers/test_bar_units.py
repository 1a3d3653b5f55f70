"""tqdm draws a rate under one a second as seconds per unit (`1.52s/it`): a loop whose steps take
longer, as an LLM's do, draws no `/s` at all.  And a loop may name its own unit
(`tqdm(loader, unit="batch")`): `6.60batch/s`.  Every bar shape gives such a loop's steps and
rates.  The bars are drawn by tqdm itself, on a clock of the test's (`tqdm.std.time`)."""
from __future__ import annotations

import io

import pytest
import tqdm.std
from tqdm import tqdm as bar_of

from ridgescope.parsers import Dispatcher

STEP_S = {1: 1.5, 2: 1.5, 3: 4.0, 4: 1.5, 5: 1.5}
"""Each step's seconds: step 3 is the slow one."""


@pytest.fixture
def clock(monkeypatch):
    """tqdm's clock, moved on by the test."""
    now = [1000.0]
    monkeypatch.setattr(tqdm.std, "time", lambda: now[0])
    return now


def draw(clock, iterable, with_loss: bool = False, **kw) -> str:
    """A loop of one's own over `iterable` under a bar drawn with `kw`, each step taking
    STEP_S's seconds; every update drawn."""
    out = io.StringIO()
    bar = bar_of(iterable, file=out, mininterval=0, miniters=1, **kw)
    for step, _ in enumerate(bar, 1):
        clock[0] += STEP_S[step]
        if with_loss:
            bar.set_postfix(loss=round(2.0 - step / 10, 2))
    bar.close()
    return out.getvalue()


def batches():
    """A loader with no length (an iterable dataset's)."""
    yield from range(5)


def steps_and_rates(text: str, redraw_by_redraw: bool = False) -> list[tuple[int, float]]:
    """The progress records' steps and rates, of `text` read at once or, as a pipe hands a live
    bar over, one redraw at a time."""
    d = Dispatcher()
    chunks = ["\r" + redraw for redraw in text.split("\r") if redraw] if redraw_by_redraw else [text]
    recs = [r for chunk in chunks for r in d.feed_chunk(chunk)] + d.flush()
    return [(r["step"], r["it_per_s"]) for r in recs if r["kind"] == "progress"]


@pytest.mark.parametrize("shape, with_loss, kw", [
    ("no cells", False, {"desc": "train", "total": 5, "ncols": 0}),
    ("no total", False, {"desc": "train"}),
    ("no total, loss", True, {"desc": "train"}),
    ("no total, own unit", False, {"desc": "train", "unit": "batch"}),
    ("no cells, own unit", False, {"desc": "train", "total": 5, "ncols": 0, "unit": "batch"}),
    ("cells, own unit", False, {"desc": "train", "total": 5, "unit": "batch"}),
])
def test_steps_slower_than_a_second(clock, shape, with_loss, kw):
    """The label says it is the training loop, or the loss set in the postfix does.  Each of
    the 5 steps once, its rate as drawn (seconds per unit, so under 1 a second), the slow step's
    the lowest.  A redraw such as `train: 3batch [00:04,  1.50s/batch]` holds no other word that
    the pre-check looks for (`scan.RATE_PER_UNIT`)."""
    text = draw(clock, batches(), with_loss, **kw)
    counted = [redraw for redraw in text.replace("\n", "\r").split("\r") if redraw and "?" not in redraw]
    assert len(counted) >= 6 and all("/s" not in redraw and "s/" in redraw for redraw in counted)
    got = steps_and_rates(text)
    assert [step for step, _ in got] == [1, 2, 3, 4, 5], shape
    assert all(0 < rate < 1 for _, rate in got)
    assert min(got, key=lambda sr: sr[1])[0] == 3
    assert steps_and_rates(text, redraw_by_redraw=True) == got


def test_a_bar_in_the_loops_own_unit_gives_its_rate(clock, monkeypatch):
    """`tqdm(loader, unit="batch")` with the loss set each step (a common tutorial's loop):
    faster than a step a second, its rate is `batch/s`, read as steps a second."""
    monkeypatch.setitem(STEP_S, 3, 0.5)
    for step in (1, 2, 4, 5):
        monkeypatch.setitem(STEP_S, step, 0.25)
    text = draw(clock, range(5), with_loss=True, unit="batch")
    assert "batch/s" in text
    got = steps_and_rates(text)
    assert [step for step, _ in got] == [1, 2, 3, 4, 5]
    assert all(rate > 1 for _, rate in got)
    assert min(got, key=lambda sr: sr[1])[0] == 3


def test_scaled_counts_and_other_bars_give_none(clock):
    """A count that `unit_scale` scales (`1.20kit`) counts no step it can be trusted for; an
    unlabelled bar with no total may be an evaluation's; a `Map` bar is no training loop."""
    for text in (draw(clock, batches(), desc="train", unit_scale=True, initial=1195),
                 draw(clock, batches()),
                 draw(clock, batches(), desc="Map", unit=" examples")):
        assert steps_and_rates(text) == []
