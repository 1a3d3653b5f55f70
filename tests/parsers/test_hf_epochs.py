"""The Trainer's step from its printed epoch (`hf_epochs`): against the Trainer's own arithmetic,
and on a real log with its bar taken out."""
from __future__ import annotations

import math
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ridgescope.parsers import Dispatcher
from ridgescope.parsers.hf_epochs import TrainingBanner, printed_epoch, schedules, step_at

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"


def trainer_epochs(batches: int, accumulation: int, total_steps: int, carried: bool = False):
    """(step, epoch) at each optimizer step, as the Trainer counts them: transformers 4.57 and
    5.x (`_inner_training_loop`) a step on each whole accumulation and on an epoch's last batch;
    4.45 (`carried`) on each whole accumulation of the run's batches (`total_batched_samples`,
    across epochs), or on an epoch's last batch where an epoch holds no more batches than one
    accumulation.  Then `epoch + (batch + 1) / batches`."""
    step = batched = epoch = 0
    while True:
        for batch in range(batches):
            batched += 1
            if carried:
                ends = batched % accumulation == 0 or (batches <= accumulation and batch + 1 == batches)
            else:
                ends = (batch + 1) % accumulation == 0 or batch + 1 == batches
            if ends:
                step += 1
                yield step, epoch + (batch + 1) / batches
                if step == total_steps:
                    return
        epoch += 1


def banner(examples, epochs, total_batch, accumulation, total_steps):
    return [f"  Num examples = {examples:,}", f"  Num Epochs = {epochs:,}",
            f"  Total train batch size (w. parallel, distributed & accumulation) = {total_batch:,}",
            f"  Gradient Accumulation steps = {accumulation}", f"  Total optimization steps = {total_steps:,}"]


def unsloth_banner(examples, epochs, per_device, accumulation, total_steps):
    """Unsloth's banner, which its patched training loop logs in place of the Trainer's
    (`debug_info` in unslothai/unsloth's models/_utils.py): the form of 2025, then that of 2024."""
    total = per_device * accumulation
    return [[
        "==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1",
        f"   \\\\   /|    Num examples = {examples:,} | Num Epochs = {epochs:,} | Total steps = {total_steps:,}",
        f"O^O/ \\_/ \\    Batch size per device = {per_device:,} | Gradient accumulation steps = {accumulation}",
        f"\\        /    Data Parallel GPUs = 1 | Total batch size ({per_device} x {accumulation} x 1) = {total:,}",
        ' "-____-"     Trainable parameters = 61,214,720 of 31,334,301,232 (0.20% trained)',
    ], [
        "==((====))==  Unsloth - 2x faster free finetuning | Num GPUs = 1",
        f"   \\\\   /|    Num examples = {examples:,} | Num Epochs = {epochs:,}",
        f"O^O/ \\_/ \\    Batch size per device = {per_device:,} | Gradient Accumulation steps = {accumulation}",
        f"\\        /    Total batch size = {total:,} | Total steps = {total_steps:,}",
        ' "-____-"     Number of trainable parameters = 982,515,712',
    ]]


@st.composite
def runs(draw, carried: bool = False):
    """A run as TrainingArguments and a dataset make it: the banner's numbers and the batches
    a process reads an epoch (`carried`: as transformers before 4.46 counts its steps an epoch)."""
    examples = draw(st.integers(1, 5000))
    per_device, world = draw(st.integers(1, 16)), draw(st.sampled_from([1, 2, 3, 8]))
    accumulation = draw(st.integers(1, 8))
    drop_last = draw(st.booleans()) and examples >= per_device * world
    batches = examples // (per_device * world) if drop_last else -(-examples // (per_device * world))
    per_epoch = max(batches // accumulation if carried else -(-batches // accumulation), 1)
    if draw(st.booleans()):     # num_train_epochs, maybe a fraction
        wanted = draw(st.sampled_from([0.5, 1, 1.5, 2, 3]))
        total_steps = math.ceil(wanted * per_epoch)
        epochs = math.ceil(wanted)
    else:                       # max_steps
        total_steps = draw(st.integers(1, 3 * per_epoch))
        epochs = -(-total_steps // per_epoch)
    return examples, epochs, per_device * world * accumulation, accumulation, total_steps, batches


@settings(max_examples=300, deadline=None)
@given(runs())
def test_an_epoch_printed_whole_names_its_step(run):
    """Transformers 4.57 prints the float whole: every step is found, the right one."""
    *numbers, batches = run
    allowed = schedules(*numbers)
    assert batches in [s.batches for s in allowed]
    b = TrainingBanner()
    for line in banner(*numbers):
        b.read(line)
    for step, epoch in trainer_epochs(batches, numbers[3], numbers[4]):
        text = repr(epoch)
        found = b.step(f"{{'loss': 1.0, 'epoch': {text}}}")
        if len(allowed) == 1 and len(text.partition(".")[2]) > 2:   # else maybe rounded: below
            assert found == step
        else:
            assert found in (step, None)


@settings(max_examples=300, deadline=None)
@given(runs())
def test_an_epoch_printed_short_names_its_step_or_none(run):
    """Transformers 5 (`'0.3529'`) and older 4.x (`round(epoch, 2)`) lose digits: a step is the
    right one or none, and with 4 digits and up to 200 batches an epoch, always found where the
    banner allows one schedule (it allows two where the last batch may have been dropped)."""
    *numbers, batches = run
    allowed = schedules(*numbers)
    quoted, rounded = TrainingBanner(), TrainingBanner()
    for b in (quoted, rounded):
        for line in banner(*numbers):
            b.read(line)
    for step, epoch in trainer_epochs(batches, numbers[3], numbers[4]):
        found = quoted.step(f"{{'loss': 1.0, 'epoch': '{epoch:.4g}'}}")
        assert found in (step, None)
        if batches <= 200 and len(allowed) == 1:
            assert found == step
        assert rounded.step(f"{{'loss': 1.0, 'epoch': {round(epoch, 2)!r}}}") in (step, None)


@settings(max_examples=300, deadline=None)
@given(runs(carried=True))
def test_an_epoch_printed_before_4_46_names_its_step(run):
    """Transformers 4.45 carried its accumulation across epochs: a step found is the right one,
    and printed whole, every step is found where the banner allows only the true batches an
    epoch, and an epoch holds more batches than one accumulation."""
    *numbers, batches = run
    accumulation, total_steps = numbers[3], numbers[4]
    allowed = schedules(*numbers)
    whole, rounded = TrainingBanner(), TrainingBanner()
    for b in (whole, rounded):
        for line in banner(*numbers):
            b.read(line)
    sure = batches > accumulation and {s.batches for s in allowed} == {batches}
    for step, epoch in trainer_epochs(batches, accumulation, total_steps, carried=True):
        found = whole.step(f"{{'loss': 1.0, 'epoch': {epoch!r}}}")
        assert found == step if sure and len(repr(epoch).partition(".")[2]) > 2 else found in (step, None)
        assert rounded.step(f"{{'loss': 1.0, 'epoch': {round(epoch, 2)!r}}}") in (step, None)


def test_rounded_epochs_of_a_long_epoch_give_no_step():
    """300 batches an epoch, rounded to 2 decimals: step 100 prints 0.33, as step 99 would."""
    allowed = schedules(300, 1, 1, 1, 300)
    assert step_at(*printed_epoch("'epoch': 0.33"), allowed) is None
    assert step_at(*printed_epoch("'epoch': 0.3333333333333333"), allowed) == 100


def test_a_banner_that_contradicts_itself_gives_no_schedule():
    """ceil(examples / batch) steps an epoch must make the epochs printed: a sequence-parallel
    run (its batches multiplied) or a changed banner gives none rather than wrong steps."""
    assert schedules(64, 2, 8, 1, 16) == schedules(64, 2, 8, 1, 16, steps_per_epoch=8) != []
    assert schedules(64, 2, 8, 1, 16, steps_per_epoch=9) == []
    assert schedules(64, 5, 8, 1, 16) == []
    assert schedules(64, 2, 9, 2, 16) == []     # a total batch that accumulation does not divide


def test_a_dataset_with_no_length_is_one_long_epoch():
    """An iterable dataset: `Num Epochs = 9,223,372,036,854,775,807`, and the Trainer counts
    max_steps x accumulation batches as the epoch."""
    allowed = schedules(2400, sys.maxsize, 24, 2, 100)
    assert step_at(*printed_epoch("'epoch': 0.37"), allowed) == 37
    assert step_at(*printed_epoch("'epoch': '0.37'"), allowed) == 37


def test_the_banner_is_read_under_any_logger_prefix_and_an_evaluation_changes_nothing():
    b = TrainingBanner()
    lines = ["[INFO|trainer.py:2519] 2026-12-05 00:26:30,062 >>" + s for s in banner(66, 2, 12, 3, 12)]
    assert all(b.read(line) for line in lines)
    assert b.read("[transformers]   Num examples = 16") and not b.read("  Batch size = 8")
    assert b.step("{'loss': 1.48, 'epoch': 0.35294117647058826}") == 2
    assert b.step("{'loss': 1.48}") is None and TrainingBanner().step("{'epoch': 1.0}") is None
    assert not b.read("  Num examples = 66 and more")


def test_a_real_log_without_its_bar_gives_the_bar_s_steps():
    """ezpz's Llama run (transformers 4.57, an iterable dataset of 100 steps) drew a bar; its lines
    taken out, as `disable_tqdm=True` would print, the dicts' epochs give the same steps."""
    text = (CORPUS / "hf_trainer" / "ezpz_hf-trainer_llama3.2-1b_aurora-xpu_24rank_fsdp.log").read_text()
    kept = []
    for line in text.replace("\r", "\n").splitlines(True):
        if "%|" in line:
            if "{'" not in line:
                continue
            line = line[line.index("{'"):]
        kept.append(line)

    def steps(log: str) -> list:
        d = Dispatcher()
        recs = d.feed_chunk(log.encode()) + d.flush()
        return [(r["step"], r["loss"]) for r in recs if r["kind"] == "progress" and not r.get("summary")]

    with_bar, without = steps(text), steps("".join(kept))
    assert without == with_bar
    assert [s for s, _ in without] == list(range(1, 12)) + list(range(96, 101))


def test_a_banner_read_again_keeps_what_the_epochs_ruled_out():
    """The log probe notes a banner as its pipe holds it, and the parser reads it again later:
    the second reading changes nothing, so a schedule that a printed epoch ruled out stays out.
    A banner with other numbers (the next training) is worked out anew."""
    b = TrainingBanner()
    for line in banner(66, 2, 12, 3, 12):
        b.read(line)
    assert len(b.allowed) == 2      # 17 batches an epoch, or 16 with the last dropped
    assert b.step("{'loss': 1.48, 'epoch': 0.35294117647058826}") == 2 and len(b.allowed) == 1
    for line in banner(66, 2, 12, 3, 12):
        b.read(line)
    assert len(b.allowed) == 1
    for line in banner(64, 2, 16, 1, 8):
        b.read(line)
    assert [(s.batches, s.steps_per_epoch) for s in b.allowed] == [(4, 4)]


def test_unsloth_s_banner_numbers_the_dicts_as_the_trainer_s_does():
    """Unsloth's banner gives the same numbers several to a line, the schedule's last after the
    total steps in the form of 2025.  A run of 1,736 examples, 1 x 4 a step, no bar on the
    stream: the dicts' epochs (`'0.002304'`, Transformers 5) name every one of its 434 steps,
    and 2-decimal epochs over 3 epochs of 8 steps each of theirs."""
    def read(lines: list[str]) -> list[dict]:
        d = Dispatcher()
        return d.feed_chunk(("\n".join(lines) + "\n").encode()) + d.flush()

    quoted = [f"{{'loss': '1.5', 'grad_norm': '0.7', 'learning_rate': '2e-05', 'epoch': '{epoch:.4g}'}}"
              for _, epoch in trainer_epochs(1736, 4, 434)]
    rounded = [f"{{'loss': 1.5, 'learning_rate': 2e-05, 'epoch': {round(epoch, 2)!r}}}"
               for _, epoch in trainer_epochs(32, 4, 24)]
    for form, short in zip(unsloth_banner(1736, 1, 1, 4, 434), unsloth_banner(64, 3, 2, 4, 24)):
        recs = read(form + quoted)
        assert [r["step"] for r in recs] == list(range(1, 435))
        assert {r["framework"] for r in recs} == {"hf_trainer"} and recs[0]["epoch"] == 0.002304
        assert [r["step"] for r in read(short + rounded)] == list(range(1, 25))


def test_a_line_of_other_numbers_behind_pipes_is_no_banner():
    """Numbers several to a line are read only under the banner's own names; a training loop's
    `key = value | ...` line with none of them changes nothing."""
    b = TrainingBanner()
    for line in banner(66, 2, 12, 3, 12):
        b.read(line)
    before = list(b.allowed)
    assert not b.read("step = 3 | loss = 1.5 | Total tokens = 4,096")
    assert b.allowed == before and b.step("{'loss': 1.48, 'epoch': 0.35294117647058826}") == 2


def test_a_trainer_before_4_46_that_carries_its_accumulation_gets_its_steps():
    """467 examples in batches of 2, 4 a step, 5 epochs: 234 batches an epoch.  The banner's 290
    steps fit both 59 steps an epoch (4.46 and later: the epoch's last 2 batches a step) and 58
    (4.45: carried on).  The two agree through the first epoch; 4.45's step 59 ends at batch 2 of
    the second epoch, where 4.46's schedule has none, which rules that schedule out: every step
    is found.  A banner with that epoch alone (its step 118, 4 batches into the third epoch)
    could be either schedule's, 118 or 119: none."""
    lines = banner(467, 5, 8, 4, 290)
    b = TrainingBanner()
    for line in lines:
        b.read(line)
    found = [(step, b.step(f"{{'loss': 1.0, 'epoch': {epoch!r}}}"))
             for step, epoch in trainer_epochs(234, 4, 290, carried=True)]
    assert len(found) == 290 and all(got == step for step, got in found)
    fresh = TrainingBanner()
    for line in lines:
        fresh.read(line)
    assert fresh.step(f"{{'loss': 1.0, 'epoch': {2 + 4 / 234!r}}}") is None
    for line in banner(64, 2, 16, 1, 8):    # the next training's banner is trusted anew
        b.read(line)
    assert b.step("{'loss': 1.0, 'epoch': 0.25}") == 1
