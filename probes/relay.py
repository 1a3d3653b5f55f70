"""The node side of the in-job channel: a Unix datagram socket that forwards to the publisher."""
from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import msgpack

from ridgescope.schemas.kinds import TOPIC_FOR_KIND


class Relay:
    def __init__(self, path: Path, forward):
        """``forward(topic, key, value, msg)`` is called for every datagram received."""
        self.path = path
        self.forward = forward
        self.received = 0
        self.ranks: set[int] = set()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * 1024 * 1024)
        self._sock.bind(str(path))
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ridgescope-relay", daemon=True)

    def start(self) -> "Relay":
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._sock.recv(1 << 20)
            except socket.timeout:
                continue
            except OSError:
                return
            self.received += 1
            try:
                msg = msgpack.unpackb(data, raw=False)
                kind, job, rank = msg["kind"], msg["job"], int(msg["rank"])
            except Exception:  # noqa: BLE001 - the worker dead-letters what it cannot read
                self.forward("rs.raw.hook", b"unknown/-1", data, None)
                continue
            self.ranks.add(rank)
            self.forward(TOPIC_FOR_KIND.get(kind, "rs.raw.hook"), f"{job}/{rank}".encode(), data,
                         msg)

    def drain(self, quiet_s: float = 0.3) -> None:
        """Wait until no datagram arrived for ``quiet_s`` (the job's last steps in flight)."""
        import time
        last = -1
        while last != self.received:
            last = self.received
            time.sleep(quiet_s)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(1.0)
        self._sock.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass
