"""A job that prints as Ignite 0.5.5 does with its ProgressBar and the MNIST example's handlers:
the captured output (tests/data/captured/ignite-0.5.5_torch-2.11_progressbar_1-epoch_pipe.log:
one epoch of 47 iterations) written again, the bar and the engines' logger to stderr and the
example's prints to stdout, as the job wrote them, with the iterations' times set here.

The bar's count lags the iterations by one (parsers/ignite.py): a count's first redraw is
written as the iteration after it ends.  So the wait before a count's first redraw is that
iteration's time: STEP_S each, SLOW_S for iteration SLOW_ITERATION.

Run: python replay_ignite.py  (stdout and stderr together are exactly the captured bytes)
"""
import re
import sys
import time
from pathlib import Path

CAPTURE = (Path(__file__).resolve().parents[1] / "data" / "captured"
           / "ignite-0.5.5_torch-2.11_progressbar_1-epoch_pipe.log")
STEP_S, SLOW_S, SLOW_ITERATION = 0.1, 1.0, 21
PRINTED = (b"] Iteration[", b" Results - Epoch: ")

data = CAPTURE.read_bytes()
writes = re.findall(rb"\r[^\r\n]*|[^\r\n]*\n", data)
assert b"".join(writes) == data, "the writes must be the captured bytes, all of them"


def write(stream, piece: bytes) -> None:
    stream.buffer.write(piece)
    stream.buffer.flush()


last_count, ends_on = None, sys.stderr
for piece in writes:
    if piece == b"\n":
        write(ends_on, piece)       # the newline after a print that ran on after the bar
        continue
    bar = re.match(rb"\r(?:Iteration: )?\[(\d+)/47\][^\[]*\[[\d:]+<[\d:?]+\]", piece)
    if bar is not None:
        count = int(bar.group(1))
        if piece.startswith(b"\rIteration: ") and count != last_count:
            time.sleep(SLOW_S if count + 1 == SLOW_ITERATION else STEP_S)
            last_count = count
        write(sys.stderr, piece[:bar.end()])
        piece = piece[bar.end():]
        if not piece:
            ends_on = sys.stderr
            continue
    if any(p in piece for p in PRINTED):
        if piece.startswith(b"\r"):     # the bar's close, then the print
            write(sys.stderr, b"\r")
            piece = piece[1:]
        write(sys.stdout, piece)
        ends_on = sys.stdout
    else:
        write(sys.stderr, piece)
        ends_on = sys.stderr
