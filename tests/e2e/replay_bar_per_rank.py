"""A job whose ranks each print nothing but their own tqdm bar, run under torchrun's `--tee`:
a loop of one's own under one `Steps` bar (tests/data/captured/
accelerate-1.15.0_own-loop_tqdm-steps-bar_pipe.log: 24 steps with `step_loss` and `lr`), written
again as tqdm wrote it, a redraw at a time on stderr, with the steps' times set here: STEP_S for
each step, SLOW_S for step SLOW_STEP of rank SLOW_RANK.  torchrun's tail turns each `\r` into a
newline and passes each redraw's text on before its newline, between the other rank's.

Run: torchrun --nproc-per-node 2 --tee 3 replay_bar_per_rank.py
"""
import os
import re
import sys
import time
from pathlib import Path

CAPTURE = (Path(__file__).resolve().parents[1] / "data" / "captured"
           / "accelerate-1.15.0_own-loop_tqdm-steps-bar_pipe.log")
STEP_S, SLOW_S, SLOW_STEP, SLOW_RANK = 0.5, 2.5, 12, 1

rank = int(os.environ["RANK"])
data = CAPTURE.read_bytes()
writes = re.findall(rb"\r?[^\r\n]*\n?", data)
assert b"".join(writes) == data, "the writes must be the captured bytes, all of them"
last = None
for piece in writes:
    m = re.search(rb"\| *(\d+)/24 \[", piece)
    if m and m.group(1) != last and int(m.group(1)) > 0:   # a step's first redraw: it just ended
        last = m.group(1)
        step = int(last)
        time.sleep(SLOW_S if (rank, step) == (SLOW_RANK, SLOW_STEP) else STEP_S)
    sys.stderr.buffer.write(piece)
    sys.stderr.buffer.flush()
