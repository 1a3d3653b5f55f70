"""Outputs captured from the frameworks' own code where no public log shows the format
(tests/data/captured/README.md says how each was made)."""
from __future__ import annotations

from pathlib import Path

from ridgescope.parsers import Dispatcher

CAPTURED = Path(__file__).resolve().parents[1] / "data" / "captured"


def parse_file(name: str) -> list[dict]:
    d = Dispatcher()
    out = d.feed_chunk((CAPTURED / name).read_bytes())
    return out + d.flush()


def test_lightning_rich_bar_on_a_terminal():
    """Each step's last redraw is one record; epoch 1's steps run on after epoch 0's 8."""
    recs = parse_file("lightning-2.6.6_rich-15.0.0_richprogressbar_tty.log")
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [r["step"] for r in prog] == list(range(1, 17))
    assert {r["framework"] for r in recs} == {"lightning"}
    by_step = {r["step"]: r for r in prog}
    assert (by_step[1]["loss"], by_step[1]["epoch"], by_step[1]["total_steps"]) == (1.093, 0, 8)
    assert (by_step[8]["loss"], by_step[9]["epoch"], by_step[9]["loss"]) == (0.719, 1, 0.851)
    assert by_step[2]["it_per_s"] == 8.13
    assert "metrics" not in by_step[8]                      # no validation had run yet
    assert by_step[9]["metrics"] == {"val_loss": 0.747}     # the first validation's result
    # the last redraw of step 16, after the second validation, replaced the one before it
    assert (by_step[16]["loss"], by_step[16]["metrics"]) == (0.537, {"val_loss": 0.691})
    (ev,) = [r for r in recs if r["kind"] == "eval"]
    assert (ev["phase"], ev["batches"], ev["total_batches"]) == ("Validation", 2, 4)


def test_lightning_rich_bar_into_a_pipe():
    """Into a pipe Rich prints only the final state: one record, with the metrics that the
    console's width wrapped onto the next line."""
    (r,) = parse_file("lightning-2.6.6_rich-15.0.0_richprogressbar_pipe.log")
    assert (r["kind"], r["framework"], r["step"], r["epoch"], r["loss"], r["it_per_s"]) == (
        "progress", "lightning", 16, 1, 1.987, 8.11)
    assert r["metrics"] == {"val_loss": 1.018}


def test_lightning_tqdm_bar_one_eval_record_per_pass():
    """Lightning's default bar: a record per step, and one per validation pass (its last
    redraw, at the training step it followed), never one per validation batch."""
    recs = parse_file("lightning-2.6.6_tqdmprogressbar_pipe.log")
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [r["step"] for r in prog] == list(range(1, 17))
    assert (prog[0]["loss"], prog[7]["loss"], prog[7]["metrics"], prog[15]["loss"]) == (
        2.07, 0.71, {"val_loss": 1.2}, 0.732)
    evals = [(r["phase"], r["step"], r["batches"], r["total_batches"]) for r in recs if r["kind"] == "eval"]
    assert evals == [("Sanity Checking DataLoader 0", None, 2, 2), ("Validation DataLoader 0", 8, 4, 4),
                     ("Validation DataLoader 0", 16, 4, 4)]
