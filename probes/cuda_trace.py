"""CUDA/NCCL trace tier: CUPTI activity records, merged in the rank into per-step busy intervals.

Armed by the same bootstrap as the hook probe (``preload``), in the main process of a rank,
when asked for (``RIDGESCOPE_CUPTI=1``), ``cupti-python`` is installed (the ``cuda`` extra) and
CUDA sees a GPU.  It is opt-in because its per-record cost on real records (19.5 µs on an H200,
against ~1 µs on recorded ones) is far over its 3 % budget on short steps.  It enables the
activity kinds for kernels (concurrent mode), memcpy, memset and synchronisation, and receives
CUPTI's buffers, where each record is reduced to ``(phase, start, end)``:

- ``gpu_compute``: kernels and memsets, except NCCL's (``ncclKernel_*``/``ncclDevKernel_*``,
  mangled or not);
- ``gpu_comm``: NCCL kernels;
- ``gpu_h2d``/``gpu_d2h``/``gpu_d2d``: copies (pinned or pageable host memory is counted);
- ``gpu_sync``: host time blocked in a CUDA synchronisation.

Each buffer is merged as it is delivered (on CUPTI's thread, or on the tier's own flushing
thread, which asks CUPTI for its buffers every ``FLUSH_PERIOD_S``) into one list of disjoint busy
intervals per phase: overlaps are charged once, and since kernels arrive nearly in time order
most records only extend or append the last interval.  At each step end the hook probe's
recorder asks for the window of the *previous* step (so the GPU has finished its work and CUPTI
has delivered it); the training thread then only cuts each phase's list at the window's end
(an interval across it is split between the two steps), caps the count per phase and adds them
to that step's ``step_spans`` message.  Nothing is sent per kernel.  ``merge_window`` (pure) is
the specification the incremental path is tested against.  The intervals held are bounded;
CUPTI's own drops (``activity_get_num_dropped_records``), ours, and records that arrive after
their step was sent (``late``) are counted and reported.

CUPTI allows one subscriber per process on CUDA < 13.3 or drivers < r610.  When another
profiler (Nsight, the PyTorch profiler) already holds it, or the job starts the PyTorch
profiler later, this tier steps aside with one line on stderr; the hook tier keeps working.
"""
from __future__ import annotations

import operator
import os
import sys
import threading
import time
from bisect import bisect_left, bisect_right
from itertools import compress, repeat

import regex

from ridgescope.pipeline import lanes
from ridgescope.probes import env

NCCL_KERNEL = regex.compile(r"nccl(?:Dev)?Kernel_")
"""NCCL kernels, named ncclKernel_* before NCCL 2.19 and ncclDevKernel_* since; C++ names may
be mangled (``_Z29ncclDevKernel_...``), so the name is searched, not prefix-matched."""

PHASES = ("gpu_compute", "gpu_comm", "gpu_h2d", "gpu_d2h", "gpu_d2d", "gpu_sync")
MAX_RECORDS = 200_000
MAX_SPANS_PER_PHASE = 256
BUFFER_BYTES = 8 * 1024 * 1024
FLUSH_PERIOD_S = 0.02
"""How often the rank's flushing thread asks CUPTI for its buffers (``arm_in_rank``)."""
FLUSH_MARGIN_NS = 5_000_000
"""A window's records count as delivered once a flush has started this long after its end."""
INFLIGHT_WAIT_S = 0.2
"""At most this long a step boundary waits for a buffer being merged at that moment."""
MULTIPLE_SUBSCRIBERS = 39
"""CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED."""

# CUpti_ActivityMemcpyKind and CUpti_ActivityMemoryKind values.
MEMCPY_HTOD, MEMCPY_DTOH, MEMCPY_DTOD, MEMCPY_PTOP = 1, 2, 8, 10
MEMORY_PAGEABLE, MEMORY_PINNED = 1, 2


def say(message: str) -> None:
    print(f"[ridgescope] {message}", file=sys.stderr, flush=True)


# --- pure parts ---------------------------------------------------------------------------------

def cap_intervals(merged: list[lanes.Interval], max_n: int) -> tuple[list[lanes.Interval], int]:
    """At most ``max_n`` intervals: close the smallest gaps first.  Returns the intervals and
    the ns of gap that were added (the error this bound introduces)."""
    if max_n < 1:
        raise ValueError("max_n must be at least 1")
    if len(merged) <= max_n:
        return list(merged), 0
    gaps = sorted(range(len(merged) - 1), key=lambda i: merged[i + 1][0] - merged[i][1])
    close = set(gaps[:len(merged) - max_n])
    out: list[lanes.Interval] = []
    added = 0
    start, end = merged[0]
    for i in range(len(merged) - 1):
        if i in close:
            added += merged[i + 1][0] - end
            end = merged[i + 1][1]
        else:
            out.append((start, end))
            start, end = merged[i + 1]
    out.append((start, end))
    return out, added


def merge_window(raw: dict[str, list[lanes.Interval]], lo: int, hi: int,
                 max_spans: int = MAX_SPANS_PER_PHASE) -> tuple[list, dict[str, int], int]:
    """Per-phase busy intervals of [lo, hi]: clipped, merged (overlaps counted once), capped.

    Returns (spans as [phase, start, end], busy ns per phase before capping, ns added by the
    cap).  Concurrent kernels on several streams give one busy interval, never double time.
    """
    spans: list = []
    busy: dict[str, int] = {}
    added = 0
    for phase in PHASES:
        merged = lanes.clip_and_merge(raw.get(phase, ()), lo, hi)
        busy[phase] = lanes.total(merged)
        capped, extra = cap_intervals(merged, max_spans) if merged else ([], 0)
        added += extra
        spans.extend([phase, s, e] for s, e in capped)
    return spans, busy, added


_NCCL_COUNT = {"nccl_kernels": 1}
_KERNEL_COUNT = {"kernels": 1}
_nccl_names: dict[str, bool] = {}


def _is_nccl(name: str) -> bool:
    """NCCL_KERNEL.search, remembered per name (a job launches few distinct kernels)."""
    hit = _nccl_names.get(name)
    if hit is None:
        hit = bool(NCCL_KERNEL.search(name))
        if len(_nccl_names) < 50_000:
            _nccl_names[name] = hit
    return hit


def classify(record, kinds: dict[int, str]) -> tuple[str, int, int, dict] | None:
    """(phase, start, end, counters) for one activity record; None for kinds not traced."""
    what = kinds.get(int(record.kind))
    start, end = int(record.start), int(record.end)
    if what is None or end < start:
        return None
    if what == "kernel":
        name = getattr(record, "name", None) or ""
        if _is_nccl(name):
            return "gpu_comm", start, end, _NCCL_COUNT
        return "gpu_compute", start, end, _KERNEL_COUNT
    if what == "memset":
        return "gpu_compute", start, end, {"memsets": 1}
    if what == "sync":
        return "gpu_sync", start, end, {"syncs": 1}
    copy = int(getattr(record, "copy_kind", 0))
    size = int(getattr(record, "bytes", 0))
    if copy == MEMCPY_HTOD:
        host = int(getattr(record, "src_kind", 0))
        key = "h2d_pinned_bytes" if host == MEMORY_PINNED else (
            "h2d_pageable_bytes" if host == MEMORY_PAGEABLE else "h2d_other_bytes")
        return "gpu_h2d", start, end, {"memcpy_h2d": 1, key: size}
    if copy == MEMCPY_DTOH:
        host = int(getattr(record, "dst_kind", 0))
        key = "d2h_pinned_bytes" if host == MEMORY_PINNED else (
            "d2h_pageable_bytes" if host == MEMORY_PAGEABLE else "d2h_other_bytes")
        return "gpu_d2h", start, end, {"memcpy_d2h": 1, key: size}
    if copy in (MEMCPY_DTOD, MEMCPY_PTOP):
        return "gpu_d2d", start, end, {"memcpy_d2d": 1, "d2d_bytes": size}
    return None


# --- incremental merging (CUPTI's thread) ---------------------------------------------------------
#
# A phase's busy time is held as one flat list [s0, e0, s1, e1, ...] of disjoint intervals, sorted
# and never touching (s0 < e0 < s1 < e1 < ...), so the list is strictly increasing and ``bisect``
# finds an instant's place in it.  Kernels on a stream arrive nearly in time order, so most
# records extend the last interval or append one; the rest take ``merge_into``.

def merge_into(flat: list, start: int, end: int, allow_new: bool = True) -> int | None:
    """Add [start, end) (start < end) to the flat interval list ``flat``, in place: overlapping
    or touching intervals become one.  Returns the change in the number of intervals (1, 0 or
    negative); None, and ``flat`` unchanged, when it would add a new interval and not
    ``allow_new``."""
    a = bisect_left(flat, start)
    b = bisect_right(flat, end)
    if a == b and not a & 1:  # in a gap, touching nothing
        if not allow_new:
            return None
        flat[a:a] = (start, end)
        return 1
    if a & 1:  # starts inside (or at the end of) interval (a-1, a)
        a -= 1
        start = flat[a]
    if b & 1:  # ends inside (or at the start of) interval (b-1, b)
        end = flat[b]
        b += 1
    removed = (b - a) // 2
    flat[a:b] = (start, end)
    return 1 - removed


def clip_flat(flat: list, lo: int) -> tuple[list, int]:
    """``flat`` without what lies before ``lo`` (an interval across ``lo`` starts at ``lo``), and
    the number of intervals that lost some time."""
    k = bisect_right(flat, lo)
    if k == 0:
        return flat, 0
    if k & 1:
        return [lo] + flat[k:], (k + 1) // 2
    return flat[k:], k // 2


def split_flat(flat: list, hi: int) -> tuple[list, list]:
    """(the part of ``flat`` before ``hi``, the part after), an interval across ``hi`` cut in two."""
    i = bisect_left(flat, hi)
    if i == len(flat):
        return flat, []
    if not i & 1:
        return flat[:i], flat[i:]
    if flat[i] == hi:
        return flat[:i + 1], flat[i + 1:]
    return flat[:i] + [hi], [hi] + flat[i:]


def busy_flat(flat: list) -> int:
    return sum(flat[1::2]) - sum(flat[0::2])


def cap_flat(flat: list, max_n: int) -> tuple[list, int]:
    """``cap_intervals`` on a flat list: at most ``max_n`` intervals, the smallest gaps closed
    first (ties: the earliest); returns the list and the ns of gap added."""
    if max_n < 1:
        raise ValueError("max_n must be at least 1")
    n = len(flat) // 2
    if n <= max_n:
        return flat, 0
    gaps = list(map(operator.sub, flat[2::2], flat[1:-1:2]))
    k = max_n - 1  # gaps that stay open: the largest; of equal ones, the latest
    if k:
        threshold = sorted(gaps)[-k]
        indices = range(n - 1)
        keep = list(compress(indices, map(threshold.__lt__, gaps)))
        if len(keep) < k:
            ties = list(compress(indices, map(threshold.__eq__, gaps)))
            keep = sorted(keep + ties[len(keep) - k:])
    else:
        keep = []
    out = [flat[0]]
    for g in keep:
        out.append(flat[2 * g + 1])
        out.append(flat[2 * g + 2])
    out.append(flat[-1])
    return out, sum(gaps) - sum(map(gaps.__getitem__, keep))


_KERNEL, _MEMSET, _SYNC, _MEMCPY = "kernel", "memset", "sync", "memcpy"
_TAGS = ("kernels", "nccl_kernels", "memsets", "syncs")


def reduce_buffer(activities, kinds: dict[int, str], offset: int, budget: int) -> tuple:
    """One completed buffer → (flat interval list per phase, counters, records classified,
    records dropped for the bound, a device id or None).

    At most ``budget`` new intervals are made; a record that would make one more is dropped
    (and counted), one that falls inside or extends a held interval still counts.
    """
    flats = {phase: [] for phase in PHASES}
    compute, comm, syncs = flats["gpu_compute"], flats["gpu_comm"], flats["gpu_sync"]
    tags = dict.fromkeys(_TAGS, 0)
    sizes: dict[str, int] = {}
    cache = _nccl_names
    seen = dropped = new = 0
    device_record = None
    for record in activities:
        try:
            what = kinds.get(record.kind)
            if what is None:
                what = kinds.get(int(record.kind))
                if what is None:
                    continue
            start = record.start + offset
            end = record.end + offset
            if end < start:
                continue
            size_key = None
            if what is _KERNEL:
                name = getattr(record, "name", None) or ""
                nccl = cache.get(name)
                if nccl is None:
                    nccl = _is_nccl(name)
                if nccl:
                    flat, tag = comm, "nccl_kernels"
                else:
                    flat, tag = compute, "kernels"
            elif what is _MEMSET:
                flat, tag = compute, "memsets"
            elif what is _SYNC:
                flat, tag = syncs, "syncs"
            else:
                got = classify(record, kinds)
                if got is None:
                    continue
                phase, _, _, counts = got
                flat, tag = flats[phase], None
                (tag, _), (size_key, size) = counts.items()
        except Exception:  # noqa: BLE001 - a record we cannot read is skipped
            continue
        seen += 1
        if end > start:
            if flat and start <= flat[-1]:
                if start >= flat[-2]:
                    if end > flat[-1]:
                        flat[-1] = end
                else:
                    delta = merge_into(flat, start, end, new < budget)
                    if delta is None:
                        dropped += 1
                        continue
                    new += delta
            elif new < budget:
                flat.append(start)
                flat.append(end)
                new += 1
            else:
                dropped += 1
                continue
        tags[tag] = tags.get(tag, 0) + 1
        if size_key is not None:
            sizes[size_key] = sizes.get(size_key, 0) + size
        if what is not _SYNC:
            device_record = record
    counters = {k: v for k, v in tags.items() if v}
    counters.update(sizes)
    device = None
    if device_record is not None:
        try:
            device = int(getattr(device_record, "device_id", 0) or 0)
        except Exception:  # noqa: BLE001
            device = None
    return flats, counters, seen, dropped, device


# --- the tier -------------------------------------------------------------------------------------

class CuptiTier:
    """Collects CUPTI activity records in a rank and turns them into per-step spans.

    Records are merged as they arrive, on the thread that delivers CUPTI's buffers, into one
    flat busy-interval list per phase (``reduce_buffer``, then ``merge_into`` under the lock).
    At a step boundary the training thread cuts those lists at the window's end (bisection and
    slices, no per-record work), caps and sends them.  With ``flush_period_s`` a thread of ours
    asks CUPTI for its buffers every so often, so that they are merged off the training thread;
    the training thread then flushes only when that thread has not flushed since the window
    ended.
    """

    def __init__(self, cupti, emit=None, max_records: int = MAX_RECORDS,
                 device_uuid=None, flush_period_s: float | None = None,
                 flush_margin_ns: int = FLUSH_MARGIN_NS):
        self.cupti = cupti
        self.emit = emit
        self.max_records = max_records
        """Bound on the busy intervals held (records merged into a held interval cost nothing);
        a record that would make one more is dropped and counted."""
        self.device_uuid = device_uuid or (lambda device: f"cuda:{device}")
        self.flush_period_s = flush_period_s
        self.flush_margin_ns = flush_margin_ns
        self.active = False
        self.stepped_aside: str | None = None
        self.live: dict[str, list] = {phase: [] for phase in PHASES}
        self.counters: dict[str, int] = {}
        self.held = 0
        self.dropped_cupti = 0
        self.dropped_local = 0
        self.late = 0
        """Records delivered after their step was sent (the part before its end is lost)."""
        self.records = 0
        self.device = 0
        self.offset_ns = 0
        self.sync_flushes = 0
        self.attach_cost_ns: list[int] = []
        self._mark: int | None = None  # end of the last window taken
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._inflight = 0  # buffers being reduced outside the lock
        self._enabled: list = []
        self._kinds: dict[int, str] = {}
        self._flusher: threading.Thread | None = None
        self._wake = threading.Event()
        self._stop = False
        self._flushed_from = 0  # wall-clock start of the flusher's last completed flush

    # -- arming
    def arm(self) -> bool:
        """Enable the activity kinds; False (and ``stepped_aside`` says why) when CUPTI is not
        ours to use."""
        cupti = self.cupti
        injected = os.environ.get("CUDA_INJECTION64_PATH")
        if injected:
            return self._aside(f"a CUDA profiler is injected ({injected})")
        kinds = cupti.ActivityKind
        self._kinds = {}
        for attr, what in (("CONCURRENT_KERNEL", _KERNEL), ("MEMCPY", _MEMCPY),
                           ("MEMSET", _MEMSET), ("SYNCHRONIZATION", _SYNC)):
            kind = getattr(kinds, attr, None)
            if kind is not None:
                self._kinds[int(kind)] = what
        try:
            cupti.activity_register_callbacks(self._buffer_requested, self._buffer_completed)
            for kind in self._kinds:
                cupti.activity_enable(kind)
                self._enabled.append(kind)
        except Exception as exc:  # noqa: BLE001
            self._disable()
            if _is_multiple_subscribers(exc):
                return self._aside("CUPTI is held by another profiler "
                                   "(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)")
            return self._aside(f"CUPTI could not be enabled ({type(exc).__name__}: {exc})",
                               loud=False)
        self._calibrate()
        self.active = True
        if self.flush_period_s:
            self._stop = False
            self._flusher = threading.Thread(target=self._flush_loop, daemon=True,
                                             name="ridgescope-cupti-flush")
            self._flusher.start()
        return True

    def _aside(self, why: str, loud: bool = True) -> bool:
        self.stepped_aside = why
        self.active = False
        if loud:
            say(f"CUDA trace tier stepped aside: {why}; the hook probe keeps running")
        elif os.environ.get(env.DEBUG) == "1":
            say(f"CUDA trace tier off: {why}")
        return False

    def step_aside(self, why: str) -> None:
        """Give CUPTI up (the job starts its own profiler): flush, disable, say so once."""
        if not self.active:
            return
        self._stop_flusher()
        try:
            self.cupti.activity_flush_all(0)
        except Exception:  # noqa: BLE001
            pass
        self._disable()
        self._aside(why)

    def _disable(self) -> None:
        for kind in self._enabled:
            try:
                self.cupti.activity_disable(kind)
            except Exception:  # noqa: BLE001
                pass
        self._enabled.clear()

    def _calibrate(self) -> None:
        """CUPTI timestamps → wall-clock ns, as the hook probe stamps them."""
        try:
            before = time.time_ns()
            stamp = int(self.cupti.get_timestamp())
            after = time.time_ns()
            self.offset_ns = (before + after) // 2 - stamp
        except Exception:  # noqa: BLE001
            self.offset_ns = 0

    # -- our flushing thread
    def _flush_loop(self) -> None:
        while not self._stop:
            self._wake.wait(self.flush_period_s)
            self._wake.clear()
            if self._stop:
                return
            started = time.time_ns()
            try:
                self.cupti.activity_flush_all(0)
            except Exception:  # noqa: BLE001
                continue
            self._flushed_from = started

    def _stop_flusher(self) -> None:
        flusher, self._flusher = self._flusher, None
        if flusher is not None:
            self._stop = True
            self._wake.set()
            if flusher is not threading.current_thread():
                flusher.join(timeout=5)

    # -- CUPTI's thread (or ours, or the training thread's flush)
    def _buffer_requested(self):
        return BUFFER_BYTES, 0

    def _buffer_completed(self, activities) -> None:
        with self._lock:
            self._inflight += 1
            budget = self.max_records - self.held
        try:
            # the per-record work, outside the lock: a step boundary waits only for the merge
            flats, counters, seen, dropped, device = reduce_buffer(
                activities, self._kinds, self.offset_ns, budget)
        except Exception:  # noqa: BLE001 - never raise into CUPTI
            flats, counters, seen, dropped, device = {}, {}, 0, 0, None
        with self._lock:
            try:
                self._merge(flats)
                self.records += seen
                self.dropped_local += dropped
                mine = self.counters
                for key, value in counters.items():
                    mine[key] = mine.get(key, 0) + value
                if device is not None:
                    self.device = device
            finally:
                self._inflight -= 1
                if not self._inflight:
                    self._idle.notify_all()

    def _merge(self, flats: dict[str, list]) -> None:
        """Fold one buffer's intervals into the held ones (the lock is held)."""
        mark = self._mark
        live = self.live
        for phase, flat in flats.items():
            if not flat:
                continue
            if mark is not None and flat[0] < mark:
                flat, lost = clip_flat(flat, mark)
                self.late += lost
                if not flat:
                    continue
            held = live[phase]
            if not held or flat[0] > held[-1]:
                held.extend(flat)  # the usual case: this buffer follows what is held
                self.held += len(flat) // 2
            else:
                for i in range(0, len(flat), 2):
                    self.held += merge_into(held, flat[i], flat[i + 1])

    # -- per step, on the training thread
    def collect(self, lo: int, hi: int) -> dict:
        """Take the window [lo, hi]: spans, busy time and counters (the counters are of the
        records delivered since the last window: CUPTI delivers by buffer, not by step).

        Flushes CUPTI first unless our flushing thread has done so since ``hi`` (plus a
        margin); waits for a buffer being merged at that moment.  What lies after ``hi`` stays
        for the next window, an interval across ``hi`` cut in two.
        """
        started = time.perf_counter_ns()
        if self.active:
            if self._flusher is None or self._flushed_from < hi + self.flush_margin_ns:
                self.sync_flushes += 1
                try:
                    self.cupti.activity_flush_all(0)
                except Exception:  # noqa: BLE001
                    pass
            self.dropped_cupti += _dropped(self.cupti)
            self._calibrate()
        taken: dict[str, list] = {}
        with self._idle:
            if self._inflight:
                self._idle.wait_for(lambda: not self._inflight, timeout=INFLIGHT_WAIT_S)
            live = self.live
            for phase in PHASES:  # O(phases): a bisection and slices per phase
                flat = live[phase]
                if flat:
                    taken[phase], live[phase] = split_flat(flat, hi)
            self.held = sum(map(len, live.values())) // 2
            counters, self.counters = self.counters, {}
            late = self.late
            if late:
                counters["late"] = late
            dropped = self.dropped_cupti + self.dropped_local
            self.dropped_cupti = self.dropped_local = self.late = 0
            self._mark = hi if self._mark is None else max(self._mark, hi)
        spans: list = []
        busy = dict.fromkeys(PHASES, 0)
        added = 0
        for phase, flat in taken.items():
            if flat and flat[0] < lo:
                flat, _ = clip_flat(flat, lo)
            if not flat:
                continue
            busy[phase] = busy_flat(flat)
            flat, extra = cap_flat(flat, MAX_SPANS_PER_PHASE)
            added += extra
            spans.extend(map(list, zip(repeat(phase), flat[0::2], flat[1::2])))
        self.attach_cost_ns.append(time.perf_counter_ns() - started)
        if len(self.attach_cost_ns) > 10_000:
            del self.attach_cost_ns[:5_000]
        return {"spans": spans, "busy_ns": busy, "coalesced_ns": added,
                "counters": counters, "dropped": dropped}

    def attach(self, payload: dict) -> dict:
        """Add the GPU spans of ``payload``'s window to it (a step_spans payload), and send the
        step's GPU busy summary as a gpu_sample."""
        if not self.active and not self.held:
            return payload
        window = self.collect(payload["t0_ns"], payload["t1_ns"])
        out = dict(payload, spans=list(payload["spans"]) + window["spans"])
        out["gpu"] = {"busy_ns": window["busy_ns"], "dropped": window["dropped"],
                      "coalesced_ns": window["coalesced_ns"], **window["counters"]}
        if self.emit is not None:
            metrics = {"step": float(payload["step"]),
                       "cupti.dropped": float(window["dropped"]),
                       "cupti.coalesced_ms": window["coalesced_ns"] / 1e6}
            for phase, ns in window["busy_ns"].items():
                metrics[f"cupti.{phase[4:]}_busy_ms"] = ns / 1e6
            for key, value in window["counters"].items():
                metrics[f"cupti.{key}"] = float(value)
            try:
                # 1 ns after the step end, so that it never replaces the NVML summary of the
                # same GPU and step in the store (same ordering key otherwise).
                self.emit("gpu_sample", {"gpu_uuid": self.device_uuid(self.device),
                                         "metrics": metrics}, payload["t1_ns"] + 1)
            except Exception:  # noqa: BLE001
                pass
        return out

    def close(self) -> None:
        if self.active:
            self._stop_flusher()
            try:
                self.cupti.activity_flush_all(1)
            except Exception:  # noqa: BLE001
                pass
            self._disable()
            self.active = False


def _dropped(cupti) -> int:
    """Records CUPTI dropped for want of buffer space (global queue: context 0, stream 0)."""
    import ctypes
    try:
        out = ctypes.c_size_t(0)
        result = cupti.activity_get_num_dropped_records(0, 0, ctypes.addressof(out))
        return int(out.value) or int(result or 0)
    except TypeError:
        try:
            return int(cupti.activity_get_num_dropped_records(0, 0) or 0)
        except Exception:  # noqa: BLE001
            return 0
    except Exception:  # noqa: BLE001
        return 0


def _is_multiple_subscribers(exc: Exception) -> bool:
    status = getattr(exc, "status", None)
    if status is not None:
        try:
            if int(status) == MULTIPLE_SUBSCRIBERS:
                return True
        except (TypeError, ValueError):
            pass
    return "MULTIPLE_SUBSCRIBERS" in str(exc).upper()


def _torch_device_uuid(device: int) -> str:
    try:
        import torch
        uuid = str(torch.cuda.get_device_properties(device).uuid)
        return uuid if uuid.startswith("GPU-") else f"GPU-{uuid}"
    except Exception:  # noqa: BLE001
        return f"cuda:{device}"


def arm_in_rank(emit, recorder) -> CuptiTier | None:
    """Arm the tier for the hook probe's ``recorder`` (preload calls this once torch is in).

    Only where RIDGESCOPE_CUPTI=1.  Quiet (one line only with RIDGESCOPE_DEBUG=1) when it does
    not apply: not asked for, not the
    rank's main process, cupti-python missing, or no GPU.  Loud when it steps aside for a
    profiler.
    """
    import importlib.util
    import multiprocessing

    if os.environ.get(env.CUPTI) != "1":
        return None  # opt-in: on an H200 it cost +85 % on a 5 ms step (bench/gpu/README.md)
    if multiprocessing.parent_process() is not None:
        return None  # a DataLoader worker or other helper: no GPU work of its own
    if importlib.util.find_spec("cupti") is None:
        _quiet("cupti-python is not installed (pip install 'ridgescope[cuda]')")
        return None
    import torch
    if not torch.cuda.is_available():
        _quiet("no CUDA GPU visible to this rank")
        return None
    from cupti import cupti
    try:
        max_records = int(os.environ.get(env.CUPTI_MAX_RECORDS, MAX_RECORDS))
    except ValueError:
        max_records = MAX_RECORDS
    tier = CuptiTier(cupti, emit=emit, max_records=max_records, device_uuid=_torch_device_uuid,
                     flush_period_s=FLUSH_PERIOD_S)
    if not tier.arm():
        return None
    recorder.gpu = tier
    _watch_profilers(tier)
    return tier


def _quiet(why: str) -> None:
    if os.environ.get(env.DEBUG) == "1":
        say(f"CUDA trace tier off: {why}")


def _watch_profilers(tier: CuptiTier) -> None:
    """Step aside before the PyTorch profiler (Kineto) takes CUPTI."""
    def wrap(owner, attr):
        original = getattr(owner, attr, None)
        if original is None:
            return

        def wrapper(self, *args, **kwargs):
            tier.step_aside("the PyTorch profiler was started in this process")
            return original(self, *args, **kwargs)
        wrapper.__ridgescope_original__ = original
        setattr(owner, attr, wrapper)
    try:
        from torch.profiler import profiler as torch_profiler
        wrap(torch_profiler._KinetoProfile, "prepare_trace")
    except Exception:  # noqa: BLE001
        pass
    try:
        from torch.autograd import profiler as autograd_profiler
        wrap(autograd_profiler.profile, "_prepare_trace")
    except Exception:  # noqa: BLE001
        pass
