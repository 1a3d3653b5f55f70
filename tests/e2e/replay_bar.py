"""A job that prints nothing but Keras' bar: Keras 3's own `model.fit` output, captured
(tests/data/captured/keras-3.15.1_fit-verbose1-evaluate-predict_pipe.log: 2 epochs of 16
steps, one redraw a step), written again as Keras wrote it, a redraw at a time, with the steps'
times set here: STEP_S for each step, SLOW_S for step SLOW_STEP (counted across epochs).

Run: python replay_bar.py  (the bytes written are exactly the captured ones)
"""
import re
import sys
import time
from pathlib import Path

CAPTURE = (Path(__file__).resolve().parents[1] / "data" / "captured"
           / "keras-3.15.1_fit-verbose1-evaluate-predict_pipe.log")
STEP_S, SLOW_S, SLOW_STEP = 0.3, 1.5, 20
STEPS_PER_EPOCH = 16

data = CAPTURE.read_bytes()
writes = re.findall(rb"\x08*\r[^\x08\r\n]*|[^\x08\r\n]*\n", data)
assert b"".join(writes) == data, "the writes must be the captured bytes, all of them"
epoch, last = 0, None
for piece in writes:
    if piece.startswith(b"Epoch "):
        epoch += 1
    m = re.search(rb"(\d+)/16\b", piece)
    if m and epoch and (epoch, m.group(1)) != last:       # a step's first redraw: it just ended
        last = (epoch, m.group(1))
        step = (epoch - 1) * STEPS_PER_EPOCH + int(m.group(1))
        time.sleep(SLOW_S if step == SLOW_STEP else STEP_S)
    sys.stdout.buffer.write(piece)
    sys.stdout.buffer.flush()
