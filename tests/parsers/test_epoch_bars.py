"""A training loop's own bar over each epoch's batches, labelled with the epoch
(`tqdm(loader, desc=f"Epoch {epoch}/{epochs}")`) or with its loss (`set_description(f"Epoch
{epoch} loss {loss:.4f}")`): one run of steps across the epochs, never Lightning's bar (`Epoch
3:`, 0-based, which counts its own steps); each step with the values the loop set after it.
Drawn by tqdm itself."""
from __future__ import annotations

import io

import pytest
from tqdm import tqdm

from ridgescope.parsers import Dispatcher


def steps_of(labels: list[str], batches: int = 5, loss: bool = True) -> tuple[str | None, list[tuple]]:
    out = io.StringIO()
    for label in labels:
        bar = tqdm(range(batches), desc=label, file=out, mininterval=0, miniters=1)
        for i in bar:
            if loss:
                bar.set_postfix(loss=round(2.0 / (i + 1), 3))
    d = Dispatcher()
    recs = d.feed_chunk(out.getvalue()) + d.flush()
    return d.framework, [(r["step"], r.get("epoch"), r.get("iters_per_epoch"), r.get("loss"))
                         for r in recs if r["kind"] == "progress"]


@pytest.mark.parametrize("label", ["Epoch {}/3", "Epoch [{}/3]", "epoch {}/3", "Train epoch {}",
                                   "Training Epoch {}/3"])
def test_an_epochs_bar_runs_its_steps_on_across_epochs(label):
    framework, steps = steps_of([label.format(epoch) for epoch in (1, 2, 3)])
    assert framework is None
    # each step's own loss (2 / its batch), which the loop set before tqdm counted the batch
    assert steps == [(epoch * 5 + n, epoch + 1, 5, round(2.0 / n, 3))
                     for epoch in range(3) for n in range(1, 6)]


def test_with_no_loss_in_its_postfix_the_epoch_label_says_it_is_training():
    _, steps = steps_of(["Epoch 1/2", "Epoch 2/2"], batches=3, loss=False)
    assert [s[0] for s in steps] == [1, 2, 3, 4, 5, 6]


def test_lightnings_own_bar_stays_lightnings():
    framework, steps = steps_of(["Epoch 0", "Epoch 1"], batches=4)
    assert framework == "lightning"
    assert [s[0] for s in steps] == list(range(1, 9))


def test_a_label_of_dots_is_still_its_word():
    _, steps = steps_of(["Training..."], batches=4, loss=False)
    assert [s[0] for s in steps] == [1, 2, 3, 4]


def described(label, epochs: int = 2, batches: int = 4) -> list[tuple]:
    """A bar whose label the loop sets after each batch, from `label(epoch, batch)`."""
    out = io.StringIO()
    for epoch in range(1, epochs + 1):
        bar = tqdm(range(batches), file=out, mininterval=0, miniters=1)
        for i in bar:
            bar.set_description(label(epoch, i))
    d = Dispatcher()
    recs = d.feed_chunk(out.getvalue()) + d.flush()
    assert d.framework is None
    return [(r["step"], r.get("epoch"), r.get("loss"), r.get("lr")) for r in recs if r["kind"] == "progress"]


def test_a_loss_in_the_label_makes_it_a_training_bar_with_its_loss():
    steps = described(lambda epoch, i: f"Epoch {epoch} loss {epoch + 1 / (i + 1):.4f}")
    assert [(s, e) for s, e, _, _ in steps] == [(n, 1 + (n - 1) // 4) for n in range(1, 9)]
    # the label set after each batch shows before tqdm counts it: each step has its own loss
    assert [loss for _, _, loss, _ in steps] == [2.0, 1.5, 1.3333, 1.25, 3.0, 2.5, 2.3333, 2.25]


def test_a_label_of_metrics_alone():
    steps = described(lambda epoch, i: f"loss: {2 / (i + 1):.3f} lr: 0.001", epochs=1)
    assert [(s, loss, lr) for s, _, loss, lr in steps] == [(1, 2.0, 0.001), (2, 1.0, 0.001),
                                                          (3, 0.667, 0.001), (4, 0.5, 0.001)]


def test_an_evaluations_loss_in_its_label_is_no_training_step():
    assert described(lambda epoch, i: f"Validation loss {1 / (i + 1):.3f}") == []
