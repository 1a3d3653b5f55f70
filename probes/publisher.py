"""Publishes the node's probe messages to Kafka from one background thread.

The buffer is bounded: when it is full, the oldest messages are dropped and counted.  When the
broker is unreachable it retries with backoff; what is still undelivered at close is written
to a bounded spool file, which the next publisher on this node sends first.  Nothing here can
block or fail the job: ``publish`` is O(1) and never raises.
"""
from __future__ import annotations

import asyncio
import collections
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import msgpack

# The wrapped command owns stderr: the client library's connection errors must not reach it.
# They are counted in PublishStats and reported once, at the end.
for _name in ("aiokafka", "kafka"):
    logging.getLogger(_name).addHandler(logging.NullHandler())
    logging.getLogger(_name).propagate = False

MAX_BUFFERED = 200_000
MAX_SPOOL_BYTES = 64 * 1024 * 1024
SEND_CHUNK = 2000


@dataclass
class PublishStats:
    published: int = 0
    delivered: int = 0
    dropped: int = 0
    """Lost because the memory buffer or the spool was full."""
    spooled: int = 0
    """Not delivered before close; kept in the spool for the next run."""
    replayed: int = 0
    """Taken from an earlier run's spool."""
    last_error: str = ""

    @property
    def undelivered(self) -> int:
        return self.dropped + self.spooled


class Publisher:
    def __init__(self, bootstrap: str | None, spool_path: Path | None = None,
                 max_buffered: int = MAX_BUFFERED):
        self.bootstrap = bootstrap
        self.spool_path = spool_path
        self.stats = PublishStats()
        self._buffer: collections.deque = collections.deque()
        self._max = max_buffered
        self._wake = threading.Event()
        self._closing = threading.Event()
        self._done = threading.Event()
        self._deadline = 0.0
        self._thread = threading.Thread(target=self._run, name="ridgescope-publisher",
                                        daemon=True)
        self._replay_spool()

    def start(self) -> "Publisher":
        self._thread.start()
        return self

    def publish(self, topic: str, key: bytes, value: bytes) -> None:
        if len(self._buffer) >= self._max:
            self._buffer.popleft()
            self.stats.dropped += 1
        self._buffer.append((topic, key, value))
        self.stats.published += 1
        self._wake.set()

    def close(self, timeout_s: float = 5.0) -> PublishStats:
        """Deliver what is buffered within ``timeout_s``; spool the rest."""
        self._deadline = time.monotonic() + timeout_s
        self._closing.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout_s + 2.0)
        self._spool_rest()
        return self.stats

    # --- the background thread ------------------------------------------------------------

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except Exception as exc:  # noqa: BLE001
            self.stats.last_error = f"{type(exc).__name__}: {exc}"
        finally:
            self._done.set()

    def _expired(self) -> bool:
        return self._closing.is_set() and time.monotonic() >= self._deadline

    async def _main(self) -> None:
        if not self.bootstrap:
            self.stats.last_error = "no broker configured"
            return
        from aiokafka import AIOKafkaProducer
        backoff = 0.2
        while not self._expired():
            producer = AIOKafkaProducer(bootstrap_servers=self.bootstrap, linger_ms=5,
                                        request_timeout_ms=5000, max_batch_size=256 * 1024,
                                        acks=1)
            try:
                await asyncio.wait_for(producer.start(), timeout=5.0)
            except Exception as exc:  # noqa: BLE001 - unreachable broker: retry with backoff
                self.stats.last_error = f"cannot reach broker {self.bootstrap}: {exc or type(exc).__name__}"
                await _close_quietly(producer)
                await asyncio.sleep(min(backoff, max(self._deadline - time.monotonic(), 0))
                                    if self._closing.is_set() else backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            backoff = 0.2
            try:
                await self._drain(producer)
                return
            except Exception as exc:  # noqa: BLE001 - broker went away: reconnect
                self.stats.last_error = f"send failed: {exc or type(exc).__name__}"
            finally:
                await _close_quietly(producer)

    async def _drain(self, producer) -> None:
        while True:
            if not self._buffer:
                if self._closing.is_set():
                    return
                await asyncio.get_running_loop().run_in_executor(None, self._wake.wait, 0.2)
                self._wake.clear()
                continue
            if self._expired():
                return
            chunk = [self._buffer.popleft() for _ in range(min(SEND_CHUNK, len(self._buffer)))]
            try:
                futures = [await producer.send(t, value=v, key=k) for t, k, v in chunk]
                await asyncio.gather(*futures)
            except Exception:
                self._buffer.extendleft(reversed(chunk))
                raise
            self.stats.delivered += len(chunk)

    # --- the spool -------------------------------------------------------------------------

    def _spool_rest(self) -> None:
        if not self._buffer:
            return
        if self.spool_path is None:
            self.stats.dropped += len(self._buffer)
            self._buffer.clear()
            return
        self.spool_path.parent.mkdir(parents=True, exist_ok=True)
        size = self.spool_path.stat().st_size if self.spool_path.exists() else 0
        with open(self.spool_path, "ab") as spool:
            while self._buffer:
                frame = msgpack.packb(self._buffer.popleft(), use_bin_type=True)
                if size + len(frame) > MAX_SPOOL_BYTES:
                    self.stats.dropped += 1
                    continue
                spool.write(frame)
                size += len(frame)
                self.stats.spooled += 1

    def _replay_spool(self) -> None:
        if self.spool_path is None or not self.spool_path.exists():
            return
        try:
            with open(self.spool_path, "rb") as spool:
                for topic, key, value in msgpack.Unpacker(spool, raw=False):
                    self._buffer.append((topic, key, value))
                    self.stats.replayed += 1
        except Exception as exc:  # noqa: BLE001 - a torn spool tail loses only that tail
            self.stats.last_error = f"spool partly unreadable: {exc}"
        self.spool_path.unlink(missing_ok=True)


async def _close_quietly(producer) -> None:
    try:
        await asyncio.wait_for(producer.stop(), timeout=2.0)
    except Exception:  # noqa: BLE001
        pass
