"""An unlabelled bar's steps, read before a framework claimed the stream, are that framework's
once it does: HF's Trainer draws its training bar with no label and prints its first log dict
`logging_steps` (500 by default) steps on.  The bars are drawn by tqdm itself."""
from __future__ import annotations

import io

from tqdm import tqdm

from ridgescope.parsers import Dispatcher
from ridgescope.parsers.base import CLOCK
from ridgescope.parsers.loopbars import UNLABELLED_STEPS


def draw(steps: int, *, before: int = 0, evaluation_after: int = 0, warning_after: int = 0,
         map_items: int = 0) -> str:
    """A Trainer-like stderr: a labelled `Map` bar and an unlabelled preprocessing loop of
    `before` items, then the training bar (unlabelled) of `steps` steps, an unlabelled
    evaluation bar (4 batches) after step `evaluation_after`, and a warning's line after
    `warning_after`.  Every update is drawn."""
    out = io.StringIO()
    if map_items:
        for _ in tqdm(range(map_items), desc="Map", file=out, mininterval=0, miniters=1):
            pass
    if before:
        for _ in tqdm(range(before), file=out, mininterval=0, miniters=1):
            pass
    train = tqdm(total=steps, file=out, mininterval=0, miniters=1)
    for step in range(1, steps + 1):
        train.update()
        if step == evaluation_after:
            for _ in tqdm(range(4), file=out, leave=False, position=1, mininterval=0, miniters=1):
                pass
        if step == warning_after:
            out.write("UserWarning: something the job warns about\n")
    train.close()
    return out.getvalue()


def redraw_of(text: str, count: str) -> int:
    """Where the redraw that shows `count` starts (its `\r`)."""
    return text.rindex("\r", 0, text.index(count))


def progress(records: list[dict]) -> list[tuple]:
    return [(r["step"], r["framework"], r["total_steps"]) for r in records if r["kind"] == "progress"]


def test_adopted_from_the_other_pipe_the_bar_gives_every_step_it_drew():
    text = draw(40, before=50, evaluation_after=12, warning_after=15, map_items=20)
    cut = redraw_of(text, "| 21/40 ")
    d = Dispatcher()
    assert progress(d.feed_chunk(text[:cut])) == []
    assert d.adopt("hf_trainer")
    out = d.feed_chunk(text[cut:]) + d.flush()
    # not the Map bar's, the preprocessing loop's nor the evaluation's: the training bar's, each once
    assert progress(out) == [(n, "hf_trainer", 40) for n in range(1, 41)]


def test_adopted_before_any_bar_a_labelled_bar_is_not_the_trainers():
    """Read as HF's from the first line (`parse` and `ingest` of a stdout file and its stderr
    file): a dataset's `Map` bar, drawn part way, is not the training bar, which has no label."""
    d = Dispatcher()
    assert d.adopt("hf_trainer")
    assert progress(d.feed_chunk(draw(40, map_items=20, evaluation_after=12)) + d.flush()) == [
        (n, "hf_trainer", 40) for n in range(1, 41)]


def test_the_banners_total_names_the_training_bar():
    """An unlabelled preprocessing loop drawn after the banner: the Trainer logged its training's
    steps (`Total optimization steps`), and the loop's bar of 50 items is not it."""
    banner = ("***** Running training *****\n  Num examples = 320\n  Num Epochs = 1\n"
              "  Total train batch size (w. parallel, distributed & accumulation) = 8\n"
              "  Gradient Accumulation steps = 1\n  Total optimization steps = 40\n")
    d = Dispatcher()
    assert d.adopt("hf_trainer")
    out = d.feed_chunk(banner + draw(40, before=50)) + d.flush()
    assert progress(out) == [(n, "hf_trainer", 40) for n in range(1, 41)]


def test_a_bar_never_claimed_gives_nothing():
    d = Dispatcher()
    assert progress(d.feed_chunk(draw(40, evaluation_after=12)) + d.flush()) == []


def test_the_first_log_dict_on_the_same_stream_joins_its_step_and_the_steps_before_come_first():
    """Drawn to one stream (`2>&1`, a file): the dict comes after the bar's line that a warning
    ended, so the steps before the warning are only in the unlabelled bar read so far."""
    text = draw(30, warning_after=8)
    start = redraw_of(text, "| 12/30 ")
    end = text.index("\r", start + 1)
    # as `tqdm.write` prints it: the bar cleared, the dict on a line, the bar drawn again
    text = (text[:end] + "\r" + " " * 40 + "\r{'loss': 1.25, 'grad_norm': 3.5, 'learning_rate': "
            "4e-05, 'epoch': 0.4}\n" + text[start:])
    d = Dispatcher()
    out = d.feed_chunk(text) + d.flush()
    records = [r for r in out if r["kind"] == "progress"]
    assert progress(records) == [(n, "hf_trainer", 30) for n in range(1, 31)]
    assert [r["step"] for r in records if "loss" in r] == [12]


def test_steps_read_redraw_by_redraw_keep_when_each_was_first_drawn():
    text = draw(20, warning_after=5)
    cut = redraw_of(text, "| 9/20 ")
    d, out = Dispatcher(), []
    try:
        for i, redraw in enumerate(text[:cut].split("\r")):
            CLOCK.now_ns = 1000 * (i + 1)
            out += d.feed_redraws((redraw + "\r").encode())
        assert progress(out) == []
        assert d.adopt("hf_trainer")
        CLOCK.now_ns = 10 ** 9
        out += d.feed_chunk(text[cut:].encode()) + d.flush()
    finally:
        CLOCK.now_ns = None
    records = [r for r in out if r["kind"] == "progress"]
    assert [r["step"] for r in records] == list(range(1, 21))
    drawn = [r["drawn_ns"] for r in records[:8]]
    assert drawn == sorted(drawn) and max(drawn) < 10 ** 9, drawn


def test_a_long_wait_for_the_first_dict_keeps_the_latest_steps():
    steps = UNLABELLED_STEPS + 400
    text = draw(steps + 10)
    cut = redraw_of(text, f"| {steps + 1}/{steps + 10} ")
    d = Dispatcher()
    d.feed_chunk(text[:cut])
    assert d.adopt("hf_trainer")
    got = [s for s, _, _ in progress(d.feed_chunk(text[cut:]) + d.flush())]
    assert got == list(range(steps - UNLABELLED_STEPS, steps + 11))


def loop(epochs: int, steps: int, *, evaluation: int = 0) -> str:
    """A loop of one's own (`for batch in tqdm(loader)`), each epoch's bar unlabelled, and after
    it an unlabelled evaluation bar of `evaluation` batches.  Every update is drawn, as tqdm
    does where a step takes longer than its `mininterval`."""
    out = io.StringIO()
    for _ in range(epochs):
        for _ in tqdm(range(steps), file=out, mininterval=0, miniters=1):
            pass
        if evaluation:
            for _ in tqdm(range(evaluation), file=out, mininterval=0, miniters=1):
                pass
    return out.getvalue()


def test_told_the_loop_draws_it_each_epochs_bar_gives_the_runs_steps():
    d = Dispatcher("tqdm")
    records = [r for r in d.feed_chunk(loop(3, 8, evaluation=4)) + d.flush() if r["kind"] == "progress"]
    # the epochs' bars, not the evaluations' (their total differs), each step once, in order
    assert [(r["step"], r["total_steps"]) for r in records] == [(n, 8) for n in range(1, 25)]
    assert [r.get("iter_in_epoch") for r in records[7:10]] == [None, 1, 2]
    assert all(r.get("step_inferred") for r in records[8:]) and not records[7].get("step_inferred")
    assert all(r["it_per_s"] > 0 for r in records)
    assert d.unlabelled_bar_steps() == 4     # the evaluation bar: held, no record


def test_told_the_loop_draws_it_the_first_bar_of_each_rank_is_its_own():
    d = Dispatcher("tqdm")
    out = []
    for rank, steps in ((0, 6), (1, 6)):
        for redraw in loop(1, steps, evaluation=2).split("\r"):
            out += d.feed(redraw, rank)
    out += d.flush()
    assert sorted((r["rank"], r["step"]) for r in out if r["kind"] == "progress") == [
        (rank, n) for rank in (0, 1) for n in range(1, 7)]


def test_a_bar_no_framework_claims_is_counted_for_the_hint():
    d = Dispatcher()
    assert progress(d.feed_chunk(loop(2, 8, evaluation=4)) + d.flush()) == []
    assert d.unlabelled_bar_steps() == 8
    d = Dispatcher()
    assert progress(d.feed_chunk("step 1/4 loss 2.5\nstep 2/4 loss 2.4\n") + d.flush()) != []
    assert d.unlabelled_bar_steps() == 0


def test_a_bar_drawn_with_no_cells_gives_its_steps():
    """`ncols=0` (EasyLM's `trange(start, total, ncols=0)`) draws the percentage, count and
    times with no cells: `train:  75% 3/4 [00:00<00:00, 14.0it/s, loss=1.7]`.  Labelled, its
    steps are read as any loop bar's; with no label, where told."""
    def draw(losses: bool, **kw) -> str:
        out = io.StringIO()
        bar = tqdm(range(6), file=out, mininterval=0, miniters=1, ncols=0, **kw)
        for i in bar:
            if losses:
                bar.set_postfix(loss=round(2.0 - i / 10, 2))
        bar.close()
        return out.getvalue()

    labelled = draw(True, desc="train")
    assert "%|" not in labelled and " 50% 3/6 [" in labelled
    d = Dispatcher()
    records = [r for r in d.feed_chunk(labelled) + d.flush() if r["kind"] == "progress"]
    assert [(r["step"], r["total_steps"], r["loss"]) for r in records] == [
        (n, 6, round(2.1 - n / 10, 2)) for n in range(1, 7)]
    unlabelled = draw(False)
    assert progress(Dispatcher().feed_chunk(unlabelled)) == []
    d = Dispatcher("tqdm")
    assert [s for s, _, _ in progress(d.feed_chunk(unlabelled) + d.flush())] == list(range(1, 7))
