"""The log probe reads a real pipe: a bar's steps come as the bar is drawn, not when its line ends."""
from __future__ import annotations

import io
import os
import queue
import time

from ridgescope.probes.logprobe import StreamPump, cut_pending


def test_cut_pending_keeps_a_last_cr_back():
    assert cut_pending(b"a\nb\rc\rd") == (b"a\n", b"b\rc\r", b"d")
    assert cut_pending(b"line\r") == (b"", b"", b"line\r")       # a \n may follow: CRLF
    assert cut_pending(b"x\r\ny") == (b"x\r\n", b"", b"y")


def test_a_bars_steps_come_before_its_line_ends():
    """Keras' bar for a 300-step epoch into a pipe: each step's record comes once the bar has
    moved on past it (its next redraw is complete), while the epoch's line is still open; the
    job's bytes pass through unchanged."""
    read_fd, write_fd = os.pipe()
    records: queue.Queue = queue.Queue()
    out = io.BytesIO()
    pump = StreamPump(read_fd, out, "stdout", lambda rank, payload, ts: records.put((rank, payload)), 7).start()
    sent = b"Epoch 1/1\n"
    os.write(write_fd, sent)
    for n in range(1, 5):
        redraw = ("\b" * 40 + f"\r{n}/300 \u2501\u2501\u2501 0s 5ms/step - loss: 0.{60 - n}").encode()
        os.write(write_fd, redraw)
        sent += redraw
    steps = [records.get(timeout=20) for _ in range(2)]
    assert [(rank, p["stream"], p["record"]["step"], p["record"]["loss"]) for rank, p in steps] == [
        (7, "stdout", 1, 0.59), (7, "stdout", 2, 0.58)]
    assert records.empty()              # step 3 is drawn, but its redraw may not be complete
    os.write(write_fd, b"\n")
    os.close(write_fd)
    pump.join(20)
    assert [p["record"]["step"] for _, p in [records.get(timeout=5) for _ in range(2)]] == [3, 4]
    assert out.getvalue() == sent + b"\n"
    assert (pump.lines, pump.framework) == (2, "keras")


def test_a_bars_steps_carry_when_the_bar_drew_them():
    """A bar that prints no step time: each step's record says when the bar first drew that
    step (the time of the read that brought its redraw), not when the next redraw came and
    showed it complete.  Each redraw is written once the one before has been read."""
    read_fd, write_fd = os.pipe()
    records: queue.Queue = queue.Queue()
    out = io.BytesIO()
    pump = StreamPump(read_fd, out, "stdout", lambda rank, payload, ts: records.put(payload), 0).start()
    os.write(write_fd, b"Epoch 1/1\n")
    sent, written, seen = b"Epoch 1/1\n", [], []
    for n in range(1, 6):
        redraw = ("\b" * 40 + f"\r{n}/5 \u2501\u2501\u2501 0s 5ms/step - loss: 0.{60 - n}").encode()
        written.append(time.time_ns())
        os.write(write_fd, redraw)
        sent += redraw
        while out.getvalue() != sent:     # the probe has read it
            time.sleep(0.001)
        seen.append(time.time_ns())
    os.write(write_fd, b"\n")
    os.close(write_fd)
    pump.join(20)
    steps = [records.get(timeout=5)["record"] for _ in range(5)]
    assert [r["step"] for r in steps] == [1, 2, 3, 4, 5]
    for record, wrote, read in zip(steps, written, seen):
        assert wrote <= record["drawn_ns"] <= read
