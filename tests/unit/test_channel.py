"""The rank-side channel, against a real Unix datagram socket: order, and a flush at exit that
waits for the last message (a job's last step summary was lost once without it)."""
from __future__ import annotations

import socket
import time

import pytest

from ridgescope.probes.channel import Channel
from ridgescope.schemas import envelope


@pytest.fixture
def relay(tmp_path):
    path = str(tmp_path / "relay.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    yield path, sock
    sock.close()


def received(sock) -> list[dict]:
    sock.setblocking(False)
    out = []
    while True:
        try:
            out.append(envelope.decode(sock.recv(65536)))
        except BlockingIOError:
            return out


def summary(step: int) -> dict:
    return {"step": step, "t0_ns": step * 10, "t1_ns": step * 10 + 9, "spans": [], "buckets": [],
            "world_size": 4}


class SlowChannel(Channel):
    """Holds each message a while between taking it off the queue and sending it, as a sender
    thread descheduled on a busy node does."""

    def _send(self, data: bytes) -> None:
        time.sleep(0.3)
        super()._send(data)


def test_messages_arrive_in_order(relay):
    path, sock = relay
    ch = Channel(path, "job", 3, "node-1")
    for step in range(1, 6):
        ch.emit("step_spans", summary(step))
    ch.flush()
    msgs = received(sock)
    assert [m["p"]["step"] for m in msgs] == [1, 2, 3, 4, 5]
    assert [m["seq"] for m in msgs] == [1, 2, 3, 4, 5]
    assert {(m["job"], m["rank"]) for m in msgs} == {("job", 3)}
    assert ch.sent == 5 and ch.dropped == 0


def test_flush_waits_for_the_message_the_sender_holds(relay):
    path, sock = relay
    ch = SlowChannel(path, "job", 0, "node-1")
    ch.emit("step_spans", summary(60))
    ch.flush()
    assert [m["p"]["step"] for m in received(sock)] == [60]
    assert ch.sent == 1
