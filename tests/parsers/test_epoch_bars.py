"""A training loop's own bar over each epoch's batches, labelled with the epoch
(`tqdm(loader, desc=f"Epoch {epoch}/{epochs}")`): one run of steps across the epochs, never
Lightning's bar (`Epoch 3:`, 0-based, which counts its own steps).  Drawn by tqdm itself."""
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
    return d.framework, [(r["step"], r.get("epoch"), r.get("iters_per_epoch"))
                         for r in recs if r["kind"] == "progress"]


@pytest.mark.parametrize("label", ["Epoch {}/3", "Epoch [{}/3]", "epoch {}/3", "Train epoch {}",
                                   "Training Epoch {}/3"])
def test_an_epochs_bar_runs_its_steps_on_across_epochs(label):
    framework, steps = steps_of([label.format(epoch) for epoch in (1, 2, 3)])
    assert framework is None
    assert steps == [(epoch * 5 + n, epoch + 1, 5) for epoch in range(3) for n in range(1, 6)]


def test_with_no_loss_in_its_postfix_the_epoch_label_says_it_is_training():
    _, steps = steps_of(["Epoch 1/2", "Epoch 2/2"], batches=3, loss=False)
    assert [s for s, _, _ in steps] == [1, 2, 3, 4, 5, 6]


def test_lightnings_own_bar_stays_lightnings():
    framework, steps = steps_of(["Epoch 0", "Epoch 1"], batches=4)
    assert framework == "lightning"
    assert [s for s, _, _ in steps] == list(range(1, 9))


def test_a_label_of_dots_is_still_its_word():
    _, steps = steps_of(["Training..."], batches=4, loss=False)
    assert [s for s, _, _ in steps] == [1, 2, 3, 4]
