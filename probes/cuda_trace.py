"""CUDA/NCCL trace tier: CUPTI activity records, merged in the rank into per-step busy intervals.

Armed by the same bootstrap as the hook probe (``preload``), in the main process of a rank,
when ``cupti-python`` is installed (the ``cuda`` extra) and CUDA sees a GPU.  It enables the
activity kinds for kernels (concurrent mode), memcpy, memset and synchronisation, and receives
CUPTI's buffers on CUPTI's thread, where each record is reduced to ``(phase, start, end)``:

- ``gpu_compute``: kernels and memsets, except NCCL's (``ncclKernel_*``/``ncclDevKernel_*``,
  mangled or not);
- ``gpu_comm``: NCCL kernels;
- ``gpu_h2d``/``gpu_d2h``/``gpu_d2d``: copies (pinned or pageable host memory is counted);
- ``gpu_sync``: host time blocked in a CUDA synchronisation.

At each step end the hook probe's recorder asks for the window of the *previous* step (so the
GPU has finished its work and CUPTI has delivered it): the intervals are clipped to the window,
merged per phase (``merge_window``, pure), capped in number, and added to that step's
``step_spans`` message.  Nothing is sent per kernel.  Records wait in bounded memory; CUPTI's
own drops (``activity_get_num_dropped_records``) and ours are counted and reported.

CUPTI allows one subscriber per process on CUDA < 13.3 or drivers < r610.  When another
profiler (Nsight, the PyTorch profiler) already holds it, or the job starts the PyTorch
profiler later, this tier steps aside with one line on stderr; the hook tier keeps working.
"""
from __future__ import annotations

import os
import sys
import threading
import time

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


# --- the tier -------------------------------------------------------------------------------------

class CuptiTier:
    """Collects CUPTI activity records in a rank and turns them into per-step spans."""

    def __init__(self, cupti, emit=None, max_records: int = MAX_RECORDS,
                 device_uuid=None):
        self.cupti = cupti
        self.emit = emit
        self.max_records = max_records
        self.device_uuid = device_uuid or (lambda device: f"cuda:{device}")
        self.active = False
        self.stepped_aside: str | None = None
        self.raw: dict[str, list] = {phase: [] for phase in PHASES}
        self.counters: dict[str, int] = {}
        self.held = 0
        self.dropped_cupti = 0
        self.dropped_local = 0
        self.records = 0
        self.device = 0
        self.offset_ns = 0
        self.attach_cost_ns: list[int] = []
        self._lock = threading.Lock()
        self._enabled: list = []
        self._kinds: dict[int, str] = {}

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
        for attr, what in (("CONCURRENT_KERNEL", "kernel"), ("MEMCPY", "memcpy"),
                           ("MEMSET", "memset"), ("SYNCHRONIZATION", "sync")):
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

    # -- CUPTI's thread
    def _buffer_requested(self):
        return BUFFER_BYTES, 0

    def _buffer_completed(self, activities) -> None:
        offset = self.offset_ns
        kinds = self._kinds
        with self._lock:
            for record in activities:
                try:
                    got = classify(record, kinds)
                except Exception:  # noqa: BLE001 - a record we cannot read is skipped
                    continue
                if got is None:
                    continue
                self.records += 1
                if self.held >= self.max_records:
                    self.dropped_local += 1
                    continue
                phase, start, end, counts = got
                self.raw[phase].append((start + offset, end + offset))
                self.held += 1
                for key, value in counts.items():
                    self.counters[key] = self.counters.get(key, 0) + value
                if phase != "gpu_sync":
                    self.device = int(getattr(record, "device_id", self.device) or 0)

    # -- per step, on the training thread
    def collect(self, lo: int, hi: int) -> dict:
        """Flush CUPTI and take the window [lo, hi]: spans, busy time and counters.

        Records that end after ``hi`` stay for the next window; the rest are released.
        """
        started = time.perf_counter_ns()
        if self.active:
            try:
                self.cupti.activity_flush_all(0)
            except Exception:  # noqa: BLE001
                pass
            self.dropped_cupti += _dropped(self.cupti)
            self._calibrate()
        with self._lock:  # swap, so CUPTI's thread waits only for this
            raw, self.raw = self.raw, {phase: [] for phase in PHASES}
            self.held = 0
            counters, self.counters = self.counters, {}
            dropped = self.dropped_cupti + self.dropped_local
            self.dropped_cupti = self.dropped_local = 0
        keep = {phase: [iv for iv in items if iv[1] > hi] for phase, items in raw.items()}
        with self._lock:
            for phase, items in keep.items():
                if items:
                    self.raw[phase][:0] = items
                    self.held += len(items)
        spans, busy, added = merge_window(raw, lo, hi)
        self.attach_cost_ns.append(time.perf_counter_ns() - started)
        if len(self.attach_cost_ns) > 10_000:
            del self.attach_cost_ns[:5_000]
        return {"spans": spans, "busy_ns": busy, "coalesced_ns": added,
                "counters": counters, "dropped": dropped}

    def attach(self, payload: dict) -> dict:
        """Add the GPU spans of ``payload``'s window to it (a step_spans payload), and send the
        step's GPU busy summary as a gpu_sample."""
        if not self.active and not any(self.raw.values()):
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

    Quiet (one line only with RIDGESCOPE_DEBUG=1) when it does not apply: disabled, not the
    rank's main process, cupti-python missing, or no GPU.  Loud when it steps aside for a
    profiler.
    """
    import importlib.util
    import multiprocessing

    if os.environ.get(env.CUPTI) == "0":
        return None
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
    tier = CuptiTier(cupti, emit=emit, max_records=max_records, device_uuid=_torch_device_uuid)
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
