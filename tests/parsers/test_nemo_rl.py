"""NeMo RL's step blocks over epochs, as its driver prints them (`nemo_rl/algorithms/sft.py` and
`grpo.py`: the `Epoch`/`Step` headers of 25 `=` a side, `▶` phases, then the `Training Results`
and `Timing` bullets); the excerpts of real runs are in test_excerpts.py."""
from __future__ import annotations

from ridgescope.parsers import Dispatcher

from .conftest import feed_all


def run_of(epochs: int, steps: int, blank_after_timing: bool = True) -> list[str]:
    lines: list[str] = []
    for epoch in range(1, epochs + 1):
        lines += ["", f"{'=' * 25} Epoch {epoch}/{epochs} {'=' * 25}"]
        for n in range(1, steps + 1):
            done = (epoch - 1) * steps + n
            lines += ["", f"{'=' * 25} Step {n}/{steps} {'=' * 25}", "▶ Preparing batch...",
                      "▶ Taking a training step..."]
            if done == 4:
                lines.append("Saving checkpoint for step 4...")
            lines += ["", "📊 Training Results:", f"  • Loss: {done / 10:.4f}", "", "⏱️  Timing:",
                      f"  • Total step time: {1 + done:.2f}s"]
            lines.append("  • checkpointing: 1.20s (24.0%)" if done == 4 else "  • data_processing: 0.25s (12.5%)")
            if blank_after_timing:
                lines.append("")
    return lines


def test_steps_count_on_across_epochs():
    """The header counts the epoch's steps: the second epoch's `Step 1/3` is the run's step 4,
    the one that saved a checkpoint (a checkpoint event, and its phase the checkpoint lane)."""
    lines = run_of(2, 3)
    recs, _ = feed_all([line.encode() for line in lines])
    d = Dispatcher()
    assert d.feed_chunk(("\n".join(lines) + "\n").encode()) + d.flush() == recs
    prog = [r for r in recs if r["kind"] == "progress"]
    assert [(r["step"], r["epoch"], r["iter_in_epoch"], r["iters_per_epoch"]) for r in prog] == [
        (1, 1, 1, 3), (2, 1, 2, 3), (3, 1, 3, 3), (4, 2, 1, 3), (5, 2, 2, 3), (6, 2, 3, 3)]
    assert [r["loss"] for r in prog] == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    assert [r["step_time_ms"] for r in prog] == [2000, 3000, 4000, 5000, 6000, 7000]
    assert prog[3]["lanes_ms"] == {"checkpoint": 1200} and prog[4]["lanes_ms"] == {"input": 250}
    (save,) = [r for r in recs if r["kind"] == "checkpoint"]
    assert (save["step"], save["action"]) == (4, "save")
    assert {r["framework"] for r in recs} == {"nemo_rl"}


def test_a_block_ends_at_the_next_header_or_the_stream_s_end():
    """No blank line after the timing bullets: the next header ends the block, and the stream's
    end the last one."""
    recs, _ = feed_all([line.encode() for line in run_of(1, 3, blank_after_timing=False)])
    assert [(r["step"], r["step_time_ms"]) for r in recs] == [(1, 2000), (2, 3000), (3, 4000)]


def test_grpo_s_validation_time_is_an_evaluation_in_its_step():
    """GRPO validates inside the step (`val_period`), then prints its results and time deeper
    (`validate` in grpo.py): an eval record at that step, with the validation's time."""
    lines = [f"{'=' * 25} Step 5/20 {'=' * 25}", "▶ Training policy...", "", "📊 Validation Results:",
             "    • Accuracy: 0.4500", "    • Average response length: 245.3 tokens", "    • Samples processed: 128",
             "", "  ⏱️  Validation Timing:", "    • Total validation time: 32.10s", "", "📊 Training Results:",
             "  • Loss: 0.0500", "", "⏱️  Timing:", "  • Total step time: 80.00s", "  • policy_training: 30.00s (37.5%)", ""]
    recs, _ = feed_all([line.encode() for line in lines])
    assert [(r["kind"], r["step"], r.get("duration_ms"), r.get("step_time_ms")) for r in recs] == [
        ("eval", 5, 32100, None), ("progress", 5, None, 80000)]


def _grpo_step_with_validation(inside: list[str]) -> list[str]:
    """GRPO's step 5 as `grpo_train` prints it where it validates (`validate` in grpo.py): its
    start, what `inside` the validation prints, then its results and timing bullets."""
    return [f"{'=' * 25} Step 5/20 {'=' * 25}", "▶ Preparing batch...", "▶ Starting validation at step 5...",
            *inside, "", "📊 Validation Results:", "    • Accuracy: 0.4500",
            "    • Average response length: 245.3 tokens", "    • Samples processed: 128", "",
            "  ⏱️  Validation Timing:", "    • Total validation time: 32.10s", "", "📊 Training Results:",
            "  • Loss: 0.0500", "", "⏱️  Timing:", "  • Total step time: 80.00s", "  • policy_training: 30.00s (37.5%)", ""]


def test_grpo_s_validation_results_are_its_evaluations_values():
    """The validation's results, accuracy included (a bullet no keyword marks), and its time make
    one eval record at the step; what it printed before them (samples, generation's bars) is passed
    over.  Read line by line and in one block."""
    lines = _grpo_step_with_validation([
        "Processed prompts: 100%|██████████| 128/128 [00:05<00:00, 22.1it/s, est. speed input: 900 toks/s]",
        "Prompt: What is 2+2? Response: 4 Reward: 1.0", "step 3 of the sample's reasoning: loss of sign"])
    recs, _ = feed_all([line.encode() for line in lines])
    d = Dispatcher()
    assert d.feed_chunk(("\n".join(lines) + "\n").encode()) + d.flush() == recs
    assert [(r["kind"], r["step"]) for r in recs] == [("eval", 5), ("progress", 5)]
    assert recs[0]["metrics"] == {"accuracy": 0.45, "samples_processed": 128}
    assert (recs[0]["duration_ms"], recs[0]["phase"]) == (32100, "result")
    assert recs[1]["step_time_ms"] == 80000


def test_a_validation_that_raises_gives_its_traceback_not_an_evaluation():
    lines = _grpo_step_with_validation([
        "Traceback (most recent call last):", '  File "grpo.py", line 900, in validate',
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"])[:6]
    recs, _ = feed_all([line.encode() for line in lines])
    assert [(r["kind"], r.get("error")) for r in recs] == [("error", "cuda_oom")]


def test_a_validation_before_the_first_step_is_step_0s():
    """`val_at_start`: GRPO validates before its first step header, `at step 0`."""
    lines = _grpo_step_with_validation([])[2:12] + run_of(1, 1)
    assert lines[0] == "▶ Starting validation at step 5..."
    lines[0] = "▶ Starting validation at step 0..."
    recs, _ = feed_all([line.encode() for line in lines])
    assert [(r["kind"], r["step"], r.get("duration_ms")) for r in recs] == [("eval", 0, 32100), ("progress", 1, None)]
    assert recs[0]["metrics"]["accuracy"] == 0.45
