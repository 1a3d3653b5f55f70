"""From a probe inside a rank to the `ridgescope run` relay on the same node.

Wrappers only stamp times and call ``emit``, which appends to a bounded deque and does
nothing else: no lock, no wake-up.  A daemon thread drains the deque every SEND_INTERVAL_S
and sends each message as one datagram on a non-blocking Unix socket, so the training thread
never waits on I/O.  Waking the sender on every emit cost ~170 µs per step in GIL hand-offs
(bench/spine/results.md); polling costs at most SEND_INTERVAL_S of latency.  When the deque is full or the relay is gone, messages
are dropped and counted, never queued without bound.
"""
from __future__ import annotations

import collections
import os
import socket
import threading
import time

from ridgescope.schemas import envelope

MAX_QUEUED = 10_000
SEND_INTERVAL_S = 0.05


class Channel:
    def __init__(self, socket_path: str, job: str, rank: int, host: str):
        self.socket_path = socket_path
        self.job, self.rank, self.host = job, rank, host
        self.dropped = 0
        self.sent = 0
        self._seq = 0
        self._done = 0      # messages the sender thread is through with: sent or dropped
        self._queue: collections.deque = collections.deque()
        self._wake = threading.Event()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.setblocking(False)
        self._thread = threading.Thread(target=self._run, name="ridgescope-channel", daemon=True)
        self._thread.start()
        self._pid = os.getpid()

    def emit(self, kind: str, payload: dict, ts_ns: int | None = None) -> None:
        """Queue one message; O(1), never blocks, never raises."""
        if len(self._queue) >= MAX_QUEUED or os.getpid() != self._pid:
            self.dropped += 1  # a forked child (DataLoader worker) has no sender thread
            return
        self._seq += 1
        self._queue.append((kind, payload, ts_ns or time.time_ns(), self._seq))

    def flush(self, timeout_s: float = 2.0) -> None:
        """Wait until the sender is through with every queued message (at exit: the last step's
        summary).  An empty queue is not enough: the sender may still hold the last one."""
        deadline = time.monotonic() + timeout_s
        self._wake.set()
        while self._done < self._seq and time.monotonic() < deadline:
            time.sleep(0.005)

    def _run(self) -> None:
        while True:
            self._wake.wait(SEND_INTERVAL_S)
            self._wake.clear()
            while self._queue:
                kind, payload, ts_ns, seq = self._queue.popleft()
                try:
                    data = envelope.encode(envelope.make(
                        kind, self.job, self.rank, self.host, ts_ns, seq, payload))
                    self._send(data)
                    self.sent += 1
                except (OSError, ValueError):
                    self.dropped += 1
                self._done += 1

    def _send(self, data: bytes) -> None:
        """Send one datagram; when the relay's buffer is full, wait a little on this thread."""
        for _ in range(200):
            try:
                self._sock.sendto(data, self.socket_path)
                return
            except BlockingIOError:
                time.sleep(0.001)
        raise OSError("relay socket stayed full")
