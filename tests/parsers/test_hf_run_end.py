"""The Trainer's log dicts numbered from how its run ended, where no banner was logged
(`hf_run_end`): against the Trainer's own arithmetic and logging, and on a real run's two files."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ridgescope.parsers.hf_epochs import TrainingBanner
from ridgescope.parsers.hf_run_end import (RunEnd, logged_steps, printed_bounds, read_ahead,
                                           steps_an_epoch, summary_totals)

from .test_hf_epochs import trainer_epochs
from .test_pipe_pairs import parsed

CAPTURED = Path(__file__).resolve().parents[1] / "data" / "captured"
SLURM = CAPTURED / "transformers-4.57.3_trainer_tqdm_66-examples_slurm-out-err"


def printed(epoch: float, style: str) -> str:
    """The epoch as the Trainer prints it: 4.57 with its bar (`round(epoch, 2)`), 4.57 without
    (the float whole), 5.x (`'%.4g'`, quoted)."""
    if style == "round2":
        return str(round(epoch, 2))
    if style == "whole":
        return repr(epoch)
    return f"'{epoch:.4g}'"


def speed(value: float, decimals: int, style: str) -> str:
    """A summary's speed metric: rounded by `speed_metrics`, then printed as 4.x or 5.x does."""
    value = round(value, decimals)
    return f"'{value:.4g}'" if style == "4g" else repr(value)


def trainer_stdout(batches, accumulation, total, interval, first_step, eval_every, style, step_s=0.25,
                   resumed_at=0):
    """(lines, true step of each dict) of a run's stdout, as the Trainer logs: a dict every
    `interval` steps (and at step 1 where told), an evaluation's after it every `eval_every`,
    the summary at the end, its run having taken `step_s` a step; resumed from a checkpoint at
    step `resumed_at`, the steps up to it printed nothing."""
    lines, truth, epoch = [], [], 0.0
    for step, epoch in trainer_epochs(batches, accumulation, total):
        if step <= resumed_at:
            continue
        if step % interval == 0 or (first_step and step == 1):
            lines.append(f"{{'loss': 1.25, 'grad_norm': 2.5, 'learning_rate': 1e-05, "
                         f"'epoch': {printed(epoch, style)}}}")
            truth.append(step)
        if step % eval_every == 0:
            lines.append(f"{{'eval_loss': 1.5, 'eval_runtime': 0.1, 'epoch': {printed(epoch, style)}}}")
            truth.append(step)
    runtime = total * step_s
    lines.append(f"{{'train_runtime': {speed(runtime, 4, style)}, 'train_samples_per_second': 12.5, "
                 f"'train_steps_per_second': {speed(total / runtime, 3, style)}, 'train_loss': 1.3, "
                 f"'epoch': {printed(epoch, style)}}}")
    return lines, truth


def numbered(lines: list[str], total: int | None) -> list[int | None]:
    """The steps the stdout file's dicts get, its stderr bar having drawn `total` steps (None:
    no bar was drawn)."""
    ahead = read_ahead([("\n".join(lines) + "\n").encode()])
    banner = TrainingBanner()
    if total is not None:
        banner.drawn(total)
    banner.run_end = RunEnd(ahead)
    return [banner.step(line) for line in lines[:-1]]


@st.composite
def runs(draw):
    batches = draw(st.integers(1, 400))
    accumulation = draw(st.integers(1, 4))
    per_epoch = -(-batches // accumulation)
    epochs = draw(st.integers(1, 4))
    total = epochs * per_epoch if draw(st.booleans()) else draw(st.integers(1, epochs * per_epoch))
    return (batches, accumulation, total, draw(st.integers(1, 80)), draw(st.booleans()),
            draw(st.integers(1, 80)), draw(st.sampled_from(["round2", "whole", "4g"])),
            draw(st.floats(0.001, 30.0)))


@settings(max_examples=400, deadline=None)
@given(runs(), st.booleans(), st.integers(0, 800))
def test_a_dict_gets_its_own_step_or_none(run, bar, checkpoint):
    """Never a wrong step: whatever the schedule, accumulation, logging and printing, with the
    bar's total or the summary's speed, from the start or resumed from a checkpoint."""
    resumed_at = min(checkpoint, run[2] - 1) if checkpoint % 2 else 0
    lines, truth = trainer_stdout(*run, resumed_at=resumed_at)
    for line, step, got in zip(lines, truth, numbered(lines, run[2] if bar else None)):
        assert got in (None, step), (line, step, got)


@pytest.mark.parametrize("batches, accumulation, total, interval, style", [
    (1_000, 1, 3_000, 50, "round2"),        # 4.57 with its bar: 10 steps to a printed 0.01 epoch
    (4_001, 4, 2_001, 10, "round2"),        # 1,001 steps an epoch, the last of one batch; 2 epochs
    (10_000, 2, 7_500, 100, "round2"),      # max_steps part way through the second epoch
    (8_000, 1, 16_000, 500, "4g"),          # 5.x
    (300, 8, 114, 5, "4g"),
])
def test_the_training_dicts_of_long_runs_are_numbered(batches, accumulation, total, interval, style):
    """Epochs of thousands of steps, printed to 2 decimals or 4 digits: each dict's epoch leaves
    several steps, but only one logging interval fits them all."""
    lines, truth = trainer_stdout(batches, accumulation, total, interval, False, 10**9, style)
    assert numbered(lines, total) == truth


def test_the_real_runs_dicts_and_evaluations():
    """66 examples, 9 steps an epoch, the bar's 18 steps: a dict every 2 steps, all numbered
    though each epoch is printed to 2 decimals; of the evaluations (every 5 steps), the one
    printed with the dict of its step (10): at 5 and 15, an accumulation the run does not print
    might put it a step away."""
    lines = (SLURM / "train-4242.out").read_text().splitlines()[1:]
    assert numbered(lines, 18) == [2, 4, None, 6, 8, 10, 10, 12, 14, None, 16, 18]
    assert numbered(lines, 20) == [None] * 12     # another run's bar: no count of steps fits


def test_dicts_behind_torchruns_prefix(capsys):
    """`torchrun --tee 3`, no bar, no banner: `parse` reads the file ahead behind the
    `[default0]:` prefix, and the summary numbers rank 0's dicts."""
    rows = parsed([str(CAPTURED / "transformers-4.57.3_trainer_disable-tqdm_torchrun-tee3_2rank.log")], capsys)
    (out,) = rows.values()
    assert [(r["rank"], r["step"], r["loss"]) for r in out if r["kind"] == "progress" and not r.get("summary")] == [
        (0, 2, 1.2694), (0, 4, 1.8109), (0, 6, 1.4973), (0, 8, 1.5821)]


def test_read_ahead_stops_at_the_summary():
    ahead = read_ahead([(SLURM / "train-4242.out").read_bytes()])
    assert ahead.end == (2.0, 0.005)
    assert [epoch for epoch, _ in ahead.logged] == [0.22, 0.44, 0.67, 0.89, 1.11, 1.33, 1.56, 1.78, 2.0]
    assert ahead.totals == range(18, 19)        # 1.2654 s at 14.225 steps a second
    assert read_ahead([b"{'loss': 1.0, 'epoch': 0.5}\n"]) is None       # no end


def test_the_steps_from_the_summarys_speed():
    """`speed_metrics`: the runtime rounded to 4 decimals, the steps a second to 3; 5.x prints
    each to 4 digits."""
    assert summary_totals("{'train_runtime': 1.2654, 'train_samples_per_second': 104.319, "
                          "'train_steps_per_second': 14.225, 'train_loss': 1.52, 'epoch': 2.0}") == range(18, 19)
    assert summary_totals("{'train_runtime': '1.273', 'train_samples_per_second': '100.6', "
                          "'train_steps_per_second': '12.57', 'train_loss': '1.52', 'epoch': '2'}") == range(16, 17)
    # 10 hours at 2.778 steps a second: 100,008 steps give or take 18, too many to look at
    assert summary_totals("{'train_runtime': 36000.1234, 'train_steps_per_second': 2.778}") == range(0)
    assert summary_totals("{'train_runtime': 12.5, 'epoch': 1.0}") == range(0)
    assert printed_bounds("1.273") == (1.2725, pytest.approx(1.2735))
    assert printed_bounds("4.688e-05") == (pytest.approx(4.6875e-05), pytest.approx(4.6885e-05))


def test_with_no_bar_the_summary_numbers_the_dicts():
    """`disable_tqdm`, no banner: the runtime and speed give the steps (16), the epoch at the end
    the steps an epoch; the real 5.x run's dicts and the evaluations printed with them."""
    lines = (CAPTURED / "transformers-5.24.0_trainer_disable-tqdm_pipe.log").read_text().splitlines()
    assert numbered(lines, None) == [2, 4, None, 6, 8, 10, 10, 12, 14, None, 16, 16]


def test_steps_an_epoch_from_the_end():
    assert list(steps_an_epoch(18, 2.0, 0.005)) == [9]
    # the last step ends at 3.0 +- 0.005 at most a step past 10,000 / s
    assert list(steps_an_epoch(10_000, 3.0, 0.005)) == list(range(3328, 3340))
    assert list(steps_an_epoch(1_000_000, 3.0, 0.005)) == []       # too many to look at
    assert list(steps_an_epoch(7, 2.3333333333333335, 1e-9)) == [3]


def test_one_interval_or_none():
    epochs = [(round(step / 9, 2), 0.005) for step in range(2, 19, 2)]
    assert logged_steps([18], (2.0, 0.005), epochs) == (list(range(2, 19, 2)), [9])
    assert logged_steps([18], (2.0, 0.005), [(0.11, 0.005)] + epochs) == ([1] + list(range(2, 19, 2)), [9])
    # a run resumed from its checkpoint at step 2 or 3: its dicts from step 4 on
    assert logged_steps([18], (2.0, 0.005), epochs[1:]) == (list(range(4, 19, 2)), [9])
    # every step logged, or the first and every second: the same steps
    assert logged_steps([2], (2.0, 0.005), [(1.0, 0.005), (2.0, 0.005)]) == ([1, 2], [1])
    assert logged_steps([17, 18], (2.0, 0.005), epochs) == (list(range(2, 19, 2)), [9])  # 17 fits none
    # 36 steps, 18 an epoch, a dict every 4 fits too: no step
    assert logged_steps([18, 36], (2.0, 0.005), epochs) == (None, [])
