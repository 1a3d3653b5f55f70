"""A fake of ``cupti.cupti`` (cupti-python) at the library boundary.

Records pushed with ``push`` wait in a bounded "device buffer"; past ``capacity`` they are
dropped and counted, the way CUPTI drops records it has no buffer space for.  A flush hands
them to the registered completion callback in chunks.  ``holder`` makes registration fail the
way CUPTI does when another subscriber holds it.
"""
from __future__ import annotations

import ctypes
import enum
from types import SimpleNamespace


class ActivityKind(enum.IntEnum):
    MEMCPY = 1
    MEMSET = 2
    CONCURRENT_KERNEL = 10
    SYNCHRONIZATION = 38


class cuptiError(Exception):  # noqa: N801 - the binding's own spelling
    def __init__(self, status: int):
        self.status = status
        names = {39: "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED",
                 17: "CUPTI_ERROR_NOT_INITIALIZED"}
        super().__init__(f"{names.get(status, 'CUPTI_ERROR')}: status {status}")


class FakeCupti:
    ActivityKind = ActivityKind
    cuptiError = cuptiError

    def __init__(self, capacity: int = 100_000, holder: bool = False, clock_offset: int = 0,
                 chunk: int = 64):
        self.capacity = capacity
        self.holder = holder
        self.clock_offset = clock_offset  # CUPTI clock = wall clock - offset
        self.chunk = chunk
        self.pending: list = []
        self.dropped = 0
        self.enabled: set[int] = set()
        self.callbacks = None
        self.flushes = 0

    # control
    def push(self, *records) -> None:
        for record in records:
            if len(self.pending) >= self.capacity:
                self.dropped += 1
            else:
                self.pending.append(record)

    # binding
    def activity_register_callbacks(self, requested, completed):
        if self.holder:
            raise cuptiError(39)
        size, _ = requested()
        assert size > 0
        self.callbacks = (requested, completed)

    def activity_enable(self, kind):
        self.enabled.add(int(kind))

    def activity_disable(self, kind):
        self.enabled.discard(int(kind))

    def activity_flush_all(self, flag):
        self.flushes += 1
        records, self.pending = self.pending, []
        for i in range(0, len(records), self.chunk):
            self.callbacks[1](records[i:i + self.chunk])

    def activity_get_num_dropped_records(self, context, stream_id, address):
        ctypes.c_size_t.from_address(address).value = self.dropped
        self.dropped = 0  # CUPTI resets the count when it is read
        return None

    def get_timestamp(self):
        import time
        return time.time_ns() - self.clock_offset


def kernel(start, end, name="void at::native::vectorized_elementwise_kernel<4>", device=0):
    return SimpleNamespace(kind=int(ActivityKind.CONCURRENT_KERNEL), start=start, end=end,
                           name=name, device_id=device, stream_id=7)


def memcpy(start, end, copy_kind, src_kind=2, dst_kind=3, nbytes=1 << 20, device=0):
    return SimpleNamespace(kind=int(ActivityKind.MEMCPY), start=start, end=end,
                           copy_kind=copy_kind, src_kind=src_kind, dst_kind=dst_kind,
                           bytes=nbytes, device_id=device)


def memset(start, end, device=0):
    return SimpleNamespace(kind=int(ActivityKind.MEMSET), start=start, end=end, bytes=4096,
                           device_id=device)


def sync(start, end):
    return SimpleNamespace(kind=int(ActivityKind.SYNCHRONIZATION), start=start, end=end, type=3)
