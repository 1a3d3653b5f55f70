"""A job that prints as SpeechBrain 1.1.2's `Brain.fit` did under DDP: rank 0's captured output
(tests/data/captured/speechbrain-1.1.2_torch-2.11_brain-fit_ddp-gloo_torchrun-tee3_2rank.log),
the bar's redraws to stderr (each behind its `\r` again: torchrun's tail had made each a line)
and the logger's lines to stdout, in the order torchrun passed them on.  That order is the
point: epochs 2 and 3 logged their summary and save before the bar's last redraws of the
epoch came through, as a reader of two pipes can see them.

Times set here: each training batch STEP_S (the wait before its count's first redraw), batch
SLOW_STEP SLOW_S, and each epoch's validation and save EVAL_S (the wait before the next
epoch's bar starts, where it ran).

Run: python replay_speechbrain.py
"""
import re
import sys
import time
from pathlib import Path

CAPTURE = (Path(__file__).resolve().parents[1] / "data" / "captured"
           / "speechbrain-1.1.2_torch-2.11_brain-fit_ddp-gloo_torchrun-tee3_2rank.log")
STEP_S, SLOW_S, EVAL_S, SLOW_STEP = 0.1, 1.0, 0.6, 15
PREFIX = b"[default0]:"
COUNT = re.compile(rb"\| *(\d+)/(\d+) \[")


def write(stream, data: bytes) -> None:
    stream.buffer.write(data)
    stream.buffer.flush()


def rank0_writes(data: bytes) -> list[bytes]:
    """Rank 0's parts of each line, in order; a part glued behind another is its own."""
    parts = []
    for line in data.split(b"\n"):
        if line.startswith(PREFIX):
            parts += line[len(PREFIX):].split(PREFIX)
    return parts


epoch, last_count = 0, None
for part in rank0_writes(CAPTURE.read_bytes()):
    if b"%|" not in part:
        if part:
            write(sys.stdout, part + b"\n")
        continue
    count = COUNT.search(part)
    if count is not None and b"train_loss" in part:
        n = int(count.group(1))
        if last_count is None or n < last_count:       # the bar starts again: an epoch begins
            epoch += 1
            if last_count is not None:
                time.sleep(EVAL_S)      # the epoch's validation and save ran before this bar
        if n != last_count and n > 0:
            step = (epoch - 1) * int(count.group(2)) + n
            time.sleep(SLOW_S if step == SLOW_STEP else STEP_S)
        last_count = n
    write(sys.stderr, b"\r" + part)
write(sys.stderr, b"\n")
