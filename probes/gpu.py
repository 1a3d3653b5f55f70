"""GPU probe: NVML readings of the node's GPUs, summarised per step window and tied to ranks.

`ridgescope run` starts one ``GpuProbe`` next to the host probe.  Every ``interval_s`` (100 ms
by default) it reads, per GPU: utilisation, memory, power and energy, SM and memory clocks,
temperature, clock-event (throttle) reasons as named flags, PCIe and NVLink throughput (NVLink
from the cumulative field values 138/139, differenced), ECC counters and XID events; on Hopper
and newer also the GPM counters (two GPM samples at least ``GPM_MIN_GAP_S`` apart).

Ticks are held per GPU and summarised (mean/min/max, time below the idle threshold) once per
step window of the GPU's rank, when the rank's hook probe reports step boundaries through the
relay, or once per second otherwise.  Each summary is one ``gpu_sample``.

The probe never raises into `ridgescope run`: without NVML or a GPU it says so in one line and
stays off; a reading that is not supported is skipped from then on; a GPU that is lost is
reported once (``gpu_lost``) and no longer read.
"""
from __future__ import annotations

import collections
import os
import sys
import threading
import time
from dataclasses import dataclass, field

from ridgescope.probes import env
from ridgescope.probes.ranks import placement

NS = 1_000_000_000
GPM_MIN_GAP_S = 0.15
"""GPM samples must be more than 100 ms apart; 150 ms leaves room for timer jitter."""
LEGACY_PCIE_EVERY_S = 1.0
"""nvmlDeviceGetPcieThroughput samples for 20 ms inside the call: read it at most once a second
(and only where GPM does not give PCIe throughput)."""
STEP_HOLD_S = 10.0
"""While a GPU's rank reports steps, ticks wait this long for the step window that claims them."""
STEP_MODE_S = 30.0
"""A GPU counts as "in steps" for this long after its rank's last step boundary."""
MAX_TICKS = 4096
"""Bound on ticks held per GPU (minutes at 100 ms); the oldest are summarised per second."""
REMAP_EVERY_S = 2.0

CLOCK_EVENT_FLAGS = {
    0x001: "gpu_idle",
    0x002: "applications_clocks_setting",
    0x004: "sw_power_cap",
    0x008: "hw_slowdown",
    0x010: "sync_boost",
    0x020: "sw_thermal",
    0x040: "hw_thermal",
    0x080: "hw_power_brake",
    0x100: "display_clock_setting",
}
"""NVML clock-event reason bits, by the names used in the metrics (``clock_event.<name>``)."""

GPM_METRICS = {
    2: "gpm.sm_active",          # % of SMs busy
    3: "gpm.sm_occupancy",       # % of warps resident vs the maximum
    5: "gpm.tensor_active",      # % of time any tensor pipe was active
    10: "gpm.dram_bw_util",      # % of peak DRAM bandwidth
    11: "gpm.fp64_active",
    12: "gpm.fp32_active",
    13: "gpm.fp16_active",
    20: "gpm.pcie_tx_bps",       # MiB/s in NVML; converted to bytes/s
    21: "gpm.pcie_rx_bps",
    60: "gpm.nvlink_rx_bps",
    61: "gpm.nvlink_tx_bps",
}
_MIB = 1024 * 1024
_GPM_PER_SEC = {20, 21, 60, 61}
NVLINK_TX_FIELD, NVLINK_RX_FIELD = 138, 139  # cumulative KiB over all links


def say(message: str) -> None:
    """One line on stderr (the default; `ridgescope run` collects them for its report)."""
    print(f"[ridgescope] {message}", file=sys.stderr, flush=True)


# --- pure parts: summaries and GPU-to-rank mapping ------------------------------------------

@dataclass
class Tick:
    """One reading of one GPU: gauges (averaged), sums (counts over the tick) and flags."""
    ts_ns: int
    dt_ns: int
    gauges: dict = field(default_factory=dict)
    sums: dict = field(default_factory=dict)


def summarise(ticks: list[Tick], idle_util: float, static: dict | None = None) -> dict:
    """The ``metrics`` of one gpu_sample over ``ticks`` (all of one GPU, in time order).

    Gauges give ``<name>.mean/.min/.max`` over the ticks that have them; sums are added up;
    ``util_gpu.idle_s`` is the time (each tick stands for the ``dt`` before it) during which
    the GPU's utilisation was below ``idle_util``; clock-event flags give the fraction of
    ticks with the reason active.
    """
    out: dict[str, float] = dict(static or {})
    if not ticks:
        return out
    window_ns = sum(t.dt_ns for t in ticks)
    out["window_s"] = window_ns / NS
    out["samples"] = float(len(ticks))
    values: dict[str, list[float]] = collections.defaultdict(list)
    sums: dict[str, float] = collections.defaultdict(float)
    idle_ns = 0
    util_seen = False
    for tick in ticks:
        for name, value in tick.gauges.items():
            values[name].append(float(value))
        for name, value in tick.sums.items():
            sums[name] += float(value)
        util = tick.gauges.get("util_gpu")
        if util is not None:
            util_seen = True
            if util < idle_util:
                idle_ns += tick.dt_ns
    for name, series in values.items():
        if name.startswith("clock_event."):
            out[name] = sum(series) / len(series)
            continue
        out[f"{name}.mean"] = sum(series) / len(series)
        out[f"{name}.min"] = min(series)
        out[f"{name}.max"] = max(series)
    out.update(sums)
    if util_seen:
        out["util_gpu.idle_s"] = idle_ns / NS
    return out


def _visible_entries(cvd: str | None) -> list[str] | None:
    if cvd is None:
        return None
    return [e.strip() for e in cvd.split(",") if e.strip()]


def resolve_visible(entry: str, gpus: list[tuple[int, str]]) -> str | None:
    """The UUID of the GPU a CUDA_VISIBLE_DEVICES entry names (index or UUID prefix)."""
    if entry.isdigit():
        for index, uuid in gpus:
            if index == int(entry):
                return uuid
        return None
    if entry.startswith("GPU-"):
        matches = [uuid for _, uuid in gpus if uuid.startswith(entry)]
        return matches[0] if len(matches) == 1 else None
    return None  # MIG instances and other forms: not mapped


def map_gpus(gpus: list[tuple[int, str]], procs: list[dict],
             compute_pids: dict[str, set[int]]) -> dict[str, int]:
    """GPU UUID → rank, from the job's processes and what NVML says runs on each GPU.

    ``procs`` are the job's processes: ``{"pid", "rank", "local_rank", "cvd"}`` (rank -1 and
    local_rank None when unknown, cvd the process's CUDA_VISIBLE_DEVICES or None).  A GPU whose
    compute processes include a rank's process belongs to that rank (the lowest rank when
    several share it).  Otherwise a rank's device is entry ``LOCAL_RANK`` of its visible
    devices (entry 0 when it sees only one).  GPUs no rank claims map to -1.  A job none of
    whose processes shows a RANK (one process started without a launcher) is rank 0, as the hook
    probe in it says.
    """
    if procs and all(p.get("rank", -1) < 0 for p in procs):
        procs = [dict(p, rank=0) for p in procs]
    rank_of_pid = {p["pid"]: p["rank"] for p in procs if p.get("rank", -1) >= 0}
    out = {uuid: -1 for _, uuid in gpus}
    for uuid in out:
        ranks = {rank_of_pid[pid] for pid in compute_pids.get(uuid, ()) if pid in rank_of_pid}
        if ranks:
            out[uuid] = min(ranks)
    claimed = {rank for rank in out.values() if rank >= 0}
    for proc in sorted(procs, key=lambda p: p.get("rank", -1)):
        rank = proc.get("rank", -1)
        if rank < 0 or rank in claimed:
            continue
        entries = _visible_entries(proc.get("cvd"))
        local = proc.get("local_rank")
        if entries is None:
            entries = [str(index) for index, _ in gpus]
        if len(entries) == 1:
            entry = entries[0]
        elif local is not None and 0 <= local < len(entries):
            entry = entries[local]
        else:
            continue
        uuid = resolve_visible(entry, gpus)
        if uuid is not None and out.get(uuid, -1) < 0:
            out[uuid] = rank
            claimed.add(rank)
    return out


# --- NVML reading -----------------------------------------------------------------------------

@dataclass
class Device:
    index: int
    uuid: str
    handle: object
    name: str = ""
    gpm: bool = False
    unsupported: set = field(default_factory=set)
    lost: bool = False
    last_ns: int = 0
    energy_mj: float | None = None
    nvlink_kib: tuple | None = None
    ecc: dict = field(default_factory=dict)
    gpm_samples: list = field(default_factory=list)
    gpm_prev: object = None
    gpm_t: float = 0.0
    pcie_t: float = -1e9
    events: object = None
    mem_total: float | None = None


class Nvml:
    """The NVML side: opens the GPUs and reads one Tick per GPU.  ``nvml`` is the pynvml module
    (or a fake with the same names, in tests)."""

    def __init__(self, nvml, visible: str | None = None):
        self.nv = nvml
        self.devices: list[Device] = []
        self.lost_reported: list[str] = []
        self._open(visible)

    def _open(self, visible: str | None) -> None:
        nv = self.nv
        nv.nvmlInit()
        count = nv.nvmlDeviceGetCount()
        all_gpus = []
        for index in range(count):
            handle = nv.nvmlDeviceGetHandleByIndex(index)
            all_gpus.append((index, _str(nv.nvmlDeviceGetUUID(handle)), handle))
        wanted = _visible_entries(visible)
        pairs = [(i, u) for i, u, _ in all_gpus]
        keep = ({resolve_visible(e, pairs) for e in wanted} if wanted is not None
                else {u for _, u in pairs})
        for index, uuid, handle in all_gpus:
            if uuid not in keep:
                continue
            dev = Device(index, uuid, handle)
            dev.name = self._try(dev, "name", lambda: _str(nv.nvmlDeviceGetName(handle))) or ""
            self._arm_gpm(dev)
            self._arm_events(dev)
            self.devices.append(dev)

    def _arm_gpm(self, dev: Device) -> None:
        nv = self.nv
        try:
            if not nv.nvmlGpmQueryDeviceSupport(dev.handle).isSupportedDevice:
                return
            dev.gpm_samples = [nv.nvmlGpmSampleAlloc(), nv.nvmlGpmSampleAlloc()]
            dev.gpm = True
        except Exception:  # noqa: BLE001 - older GPUs, drivers or bindings: no GPM
            dev.gpm = False

    def _arm_events(self, dev: Device) -> None:
        nv = self.nv
        try:
            dev.events = nv.nvmlEventSetCreate()
            nv.nvmlDeviceRegisterEvents(dev.handle, nv.nvmlEventTypeXidCriticalError, dev.events)
        except Exception:  # noqa: BLE001 - XID events need root on some systems
            dev.events = None

    def _try(self, dev: Device, what: str, fn):
        """Run one NVML reading; remember what is not supported; flag a lost GPU."""
        if what in dev.unsupported or dev.lost:
            return None
        nv = self.nv
        try:
            return fn()
        except nv.NVMLError_NotSupported:
            dev.unsupported.add(what)
        except nv.NVMLError_NoPermission:
            dev.unsupported.add(what)
        except nv.NVMLError_FunctionNotFound:
            dev.unsupported.add(what)
        except nv.NVMLError_GpuIsLost:
            dev.lost = True
        except nv.NVMLError:
            pass
        except Exception:  # noqa: BLE001 - a malformed answer never stops the sampler
            pass
        return None

    def read(self, dev: Device, now_ns: int, mono: float) -> Tick | None:
        """One Tick for ``dev``, or None when it is lost (``dev.lost`` says so)."""
        nv, h = self.nv, dev.handle
        dt = now_ns - dev.last_ns if dev.last_ns else 0
        tick = Tick(now_ns, dt)
        g = tick.gauges
        util = self._try(dev, "util", lambda: nv.nvmlDeviceGetUtilizationRates(h))
        if dev.lost:
            return None
        if util is not None:
            g["util_gpu"], g["util_mem"] = float(util.gpu), float(util.memory)
        mem = self._try(dev, "memory", lambda: nv.nvmlDeviceGetMemoryInfo(h))
        if mem is not None:
            g["mem_used_bytes"] = float(mem.used)
            dev.mem_total = float(mem.total)
        power = self._try(dev, "power", lambda: nv.nvmlDeviceGetPowerUsage(h))
        if power is not None:
            g["power_w"] = power / 1000.0
        energy = self._try(dev, "energy", lambda: nv.nvmlDeviceGetTotalEnergyConsumption(h))
        if energy is not None:
            if dev.energy_mj is not None and energy >= dev.energy_mj:
                tick.sums["energy_j"] = (energy - dev.energy_mj) / 1000.0
            dev.energy_mj = float(energy)
        sm = self._try(dev, "sm_clock", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM))
        if sm is not None:
            g["sm_clock_mhz"] = float(sm)
        mc = self._try(dev, "mem_clock",
                       lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM))
        if mc is not None:
            g["mem_clock_mhz"] = float(mc)
        temp = self._try(dev, "temp",
                         lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU))
        if temp is not None:
            g["temp_c"] = float(temp)
        reasons = self._clock_events(dev)
        if reasons is not None:
            for bit, name in CLOCK_EVENT_FLAGS.items():
                g[f"clock_event.{name}"] = 1.0 if reasons & bit else 0.0
        self._nvlink(dev, tick)
        self._ecc(dev, tick)
        self._xid(dev, tick)
        if dev.gpm:
            self._gpm(dev, tick, mono)
        if "gpm.pcie_tx_bps" not in g and mono - dev.pcie_t >= LEGACY_PCIE_EVERY_S:
            dev.pcie_t = mono
            tx = self._try(dev, "pcie", lambda: nv.nvmlDeviceGetPcieThroughput(
                h, nv.NVML_PCIE_UTIL_TX_BYTES))
            rx = self._try(dev, "pcie", lambda: nv.nvmlDeviceGetPcieThroughput(
                h, nv.NVML_PCIE_UTIL_RX_BYTES))
            if tx is not None and rx is not None:  # KB/s
                g["pcie_tx_bps"], g["pcie_rx_bps"] = tx * 1024.0, rx * 1024.0
        dev.last_ns = now_ns
        if dev.lost:
            return None
        return tick

    def _clock_events(self, dev: Device):
        nv, h = self.nv, dev.handle
        if hasattr(nv, "nvmlDeviceGetCurrentClocksEventReasons"):
            value = self._try(dev, "clock_events",
                              lambda: nv.nvmlDeviceGetCurrentClocksEventReasons(h))
            if value is not None or "clock_events" not in dev.unsupported:
                return value
        return self._try(dev, "throttle", lambda: nv.nvmlDeviceGetCurrentClocksThrottleReasons(h))

    def _nvlink(self, dev: Device, tick: Tick) -> None:
        nv = self.nv
        values = self._try(dev, "nvlink", lambda: nv.nvmlDeviceGetFieldValues(
            dev.handle, [NVLINK_TX_FIELD, NVLINK_RX_FIELD]))
        if values is None:
            return
        if any(v.nvmlReturn != 0 for v in values):
            dev.unsupported.add("nvlink")  # no NVLink on this GPU (PCIe cards)
            return
        now = (float(values[0].value.ullVal), float(values[1].value.ullVal))
        prev, dev.nvlink_kib = dev.nvlink_kib, now
        if prev is None or tick.dt_ns <= 0:
            return
        dt_s = tick.dt_ns / NS
        tx, rx = now[0] - prev[0], now[1] - prev[1]
        if tx >= 0 and rx >= 0:  # a counter reset gives one missing tick, not a spike
            tick.gauges["nvlink_tx_bps"] = tx * 1024.0 / dt_s
            tick.gauges["nvlink_rx_bps"] = rx * 1024.0 / dt_s
            tick.sums["nvlink_tx_bytes"] = tx * 1024.0
            tick.sums["nvlink_rx_bytes"] = rx * 1024.0

    def _ecc(self, dev: Device, tick: Tick) -> None:
        nv = self.nv
        for name, etype in (("ecc_corrected", nv.NVML_MEMORY_ERROR_TYPE_CORRECTED),
                            ("ecc_uncorrected", nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED)):
            total = self._try(dev, "ecc", lambda: nv.nvmlDeviceGetTotalEccErrors(
                dev.handle, etype, nv.NVML_VOLATILE_ECC))
            if total is None:
                return
            prev = dev.ecc.get(name)
            dev.ecc[name] = total
            if prev is not None and total > prev:
                tick.sums[name] = float(total - prev)

    def _xid(self, dev: Device, tick: Tick) -> None:
        if dev.events is None or dev.lost:
            return
        nv = self.nv
        for _ in range(8):  # a few per tick at most; the rest wait for the next tick
            try:
                data = nv.nvmlEventSetWait_v2(dev.events, 0)
            except nv.NVMLError_Timeout:
                return
            except nv.NVMLError_GpuIsLost:
                dev.lost = True
                return
            except Exception:  # noqa: BLE001
                return
            tick.sums["xid_count"] = tick.sums.get("xid_count", 0.0) + 1.0
            tick.gauges["xid"] = float(data.eventData)

    def _gpm(self, dev: Device, tick: Tick, mono: float) -> None:
        if mono - dev.gpm_t < GPM_MIN_GAP_S:
            return
        nv = self.nv
        cur = dev.gpm_samples[0] if dev.gpm_prev is not dev.gpm_samples[0] else dev.gpm_samples[1]
        if self._try(dev, "gpm", lambda: nv.nvmlGpmSampleGet(dev.handle, cur)) is None:
            if "gpm" in dev.unsupported:
                dev.gpm = False
            return
        prev, dev.gpm_prev, dev.gpm_t = dev.gpm_prev, cur, mono
        if prev is None:
            return
        ids = list(GPM_METRICS)
        request = nv.c_nvmlGpmMetricsGet_t()
        request.version = nv.NVML_GPM_METRICS_GET_VERSION
        request.numMetrics = len(ids)
        request.sample1, request.sample2 = prev, cur
        for i, metric in enumerate(ids):
            request.metrics[i].metricId = metric
        if self._try(dev, "gpm", lambda: nv.nvmlGpmMetricsGet(request)) is None:
            return
        for i, metric in enumerate(ids):
            result = request.metrics[i]
            if result.nvmlReturn != 0:
                continue
            value = float(result.value)
            tick.gauges[GPM_METRICS[metric]] = value * _MIB if metric in _GPM_PER_SEC else value

    def close(self) -> None:
        nv = self.nv
        for dev in self.devices:
            for sample in dev.gpm_samples:
                try:
                    nv.nvmlGpmSampleFree(sample)
                except Exception:  # noqa: BLE001
                    pass
            if dev.events is not None:
                try:
                    nv.nvmlEventSetFree(dev.events)
                except Exception:  # noqa: BLE001
                    pass
        try:
            nv.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass


def _str(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


# --- the sampler thread -------------------------------------------------------------------------

EXEC_SETTLE_S = 1.0
"""How long a process that still runs its parent's command line is taken for one between its fork
and its exec: the environment it shows then is its parent's, not the one its exec will give it."""


def job_processes(root_pid: int, cache: dict[int, dict]) -> list[dict]:
    """The job's processes with RANK, LOCAL_RANK, WORLD_SIZE and CUDA_VISIBLE_DEVICES from their
    environment.  A process that runs its parent's command line, first seen less than
    EXEC_SETTLE_S ago, may not have reached its exec yet (a worker torchrun just forked shows
    torchrun's environment): its entry is marked `settled: False` and read again at the next
    call; after that, it is a fork that runs on as its parent (a DataLoader worker), with its
    parent's environment."""
    import psutil
    try:
        root = psutil.Process(root_pid)
        procs = [root] + root.children(recursive=True)
    except psutil.Error:
        return []
    return [process_entry(proc, cache) for proc in procs]


def process_entry(proc, cache: dict[int, dict]) -> dict:
    """`job_processes`'s entry of one process, kept in ``cache`` once settled."""
    entry = cache.get(proc.pid)
    if entry is None or not entry["settled"]:
        entry = cache[proc.pid] = _entry(proc, entry["seen"] if entry else time.monotonic())
    return entry


def _entry(proc, seen: float) -> dict:
    import psutil
    # Whether it runs its parent's command line is read before its environment: a process that
    # execs between the two reads then shows its parent's command line with whichever
    # environment, and is read again; read the other way round, it showed its new command line
    # with its parent's environment, and was kept so (a torchrun worker's file read as rank -1's).
    cmdline = _cmdline(proc)
    forked = _runs_parents(proc, cmdline)
    try:
        environ = proc.environ()
    except psutil.Error:
        environ = {}
    rank, world_size, local_rank = placement(environ, lambda: cmdline)
    return {"pid": proc.pid, "rank": rank, "local_rank": local_rank,
            "world_size": world_size, "cvd": environ.get("CUDA_VISIBLE_DEVICES"),
            "seen": seen, "settled": not forked or time.monotonic() - seen >= EXEC_SETTLE_S}


def _cmdline(proc) -> list[str]:
    import psutil
    try:
        return proc.cmdline()
    except psutil.Error:
        return []


def _runs_parents(proc, cmdline: list[str]) -> bool:
    """Does the process run its parent's command line, `cmdline` (forked, and not exec'd, or not
    yet)?"""
    import psutil
    try:
        parent = proc.parent()
        return parent is not None and cmdline == parent.cmdline()
    except psutil.Error:
        return False


def _int(value, default):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


class GpuProbe:
    """Samples the node's GPUs every ``interval_s``; hands each summary to
    ``emit(rank, payload, ts_ns)``.  ``on_step`` (called from the relay thread) tells it the
    step boundaries of a rank."""

    def __init__(self, root_pid: int | None, emit, interval_s: float = 0.1,
                 idle_util: float = 5.0, nvml=None, visible: str | None = None,
                 processes=None, say=say):
        self.say = say
        self.root_pid = root_pid
        self.emit = emit
        self.interval_s = interval_s
        self.idle_util = idle_util
        self.nvml_module = nvml
        self.visible = visible
        self.processes = processes or (lambda: job_processes(self.root_pid, self._proc_cache)
                                       if self.root_pid else [])
        self.nvml: Nvml | None = None
        self.mapping: dict[str, int] = {}
        self.ticks: dict[str, collections.deque] = {}
        self.last_step_ns: dict[int, int] = {}
        self.emitted = 0
        self.tick_cost_ns: list[int] = []
        self._steps: collections.deque = collections.deque(maxlen=10_000)
        self._proc_cache: dict[int, dict] = {}
        self._remap_t = -1e9
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ridgescope-gpu", daemon=True)

    # -- life cycle
    def open(self) -> bool:
        """Open NVML; False (after one line saying why) when there is no GPU to watch."""
        try:
            nv = self.nvml_module
            if nv is None:
                import pynvml as nv
            self.nvml = Nvml(nv, self.visible)
        except ImportError:
            self.say("GPU probe off: nvidia-ml-py (pynvml) is not installed")
            return False
        except Exception as exc:  # noqa: BLE001 - NVMLError_LibraryNotFound, DriverNotLoaded...
            self.say(f"no NVIDIA GPU found ({type(exc).__name__}: {exc}); GPU probe off")
            return False
        if not self.nvml.devices:
            self.say("no NVIDIA GPU found (NVML sees none visible to the job); GPU probe off")
            self.nvml.close()
            self.nvml = None
            return False
        gpm = sum(d.gpm for d in self.nvml.devices)
        if os.environ.get(env.DEBUG) == "1":
            self.say(f"GPU probe on: {len(self.nvml.devices)} GPU(s), GPM on {gpm}, every "
                f"{self.interval_s * 1000:.0f} ms")
        for dev in self.nvml.devices:
            self.ticks[dev.uuid] = collections.deque()
        return True

    def start(self) -> "GpuProbe":
        if self.nvml is None and not self.open():
            return self
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(2.0)
        if self.nvml is not None:
            try:
                self.flush(time.time_ns(), final=True)
            finally:
                self.nvml.close()
                self.nvml = None

    def on_step(self, rank: int, step: int, t0_ns: int, t1_ns: int) -> None:
        """A step boundary of ``rank`` (thread-safe; O(1))."""
        self._steps.append((rank, step, t0_ns, t1_ns))

    # -- one tick
    def _run(self) -> None:
        next_t = time.monotonic()
        while not self._stop.is_set():
            try:
                self.tick(time.time_ns(), time.monotonic())
            except Exception:  # noqa: BLE001 - the sampler never dies on a bad tick
                pass
            next_t += self.interval_s
            delay = next_t - time.monotonic()
            if delay < 0:  # fell behind (a slow NVML call): skip, do not burst
                next_t = time.monotonic()
                delay = 0
            if self._stop.wait(delay):
                break
            if self.nvml is None or not any(not d.lost for d in self.nvml.devices):
                break

    def tick(self, now_ns: int, mono: float) -> None:
        start = time.perf_counter_ns()
        nvml = self.nvml
        if nvml is None:
            return
        if mono - self._remap_t >= REMAP_EVERY_S:
            self._remap_t = mono
            self._remap()
        for dev in nvml.devices:
            if dev.lost:
                continue
            tick = nvml.read(dev, now_ns, mono)
            if tick is None:
                self._lost(dev, now_ns)
                continue
            if tick.dt_ns <= 0:
                continue  # the first reading only primes the counters
            held = self.ticks[dev.uuid]
            held.append(tick)
            if len(held) > MAX_TICKS:
                self._emit_seconds(dev.uuid, [held.popleft() for _ in range(len(held) // 2)])
        self.flush(now_ns)
        if len(self.tick_cost_ns) < 100_000:
            self.tick_cost_ns.append(time.perf_counter_ns() - start)

    def _remap(self) -> None:
        nvml = self.nvml
        gpus = [(d.index, d.uuid) for d in nvml.devices]
        compute: dict[str, set[int]] = {}
        for dev in nvml.devices:
            if dev.lost:
                continue
            procs = nvml._try(dev, "processes",
                              lambda: nvml.nv.nvmlDeviceGetComputeRunningProcesses(dev.handle))
            compute[dev.uuid] = {p.pid for p in procs or ()}
        try:
            self.mapping = map_gpus(gpus, self.processes(), compute)
        except Exception:  # noqa: BLE001
            self.mapping = {uuid: -1 for _, uuid in gpus}

    def _lost(self, dev: Device, now_ns: int) -> None:
        if dev.uuid in self.nvml.lost_reported:
            return
        self.nvml.lost_reported.append(dev.uuid)
        held = list(self.ticks[dev.uuid])
        self.ticks[dev.uuid].clear()
        self._emit_seconds(dev.uuid, held)
        self._send(dev.uuid, {"gpu_lost": 1.0}, now_ns)
        self.say(f"GPU {dev.index} ({dev.uuid}) is lost: it is no longer sampled")

    # -- summaries
    def flush(self, now_ns: int, final: bool = False) -> None:
        """Emit the windows that are complete: step windows reported so far, then whole seconds
        no step window can still claim."""
        while self._steps:
            rank, step, t0, t1 = self._steps.popleft()
            self.last_step_ns[rank] = max(self.last_step_ns.get(rank, 0), t1)
            for uuid, owner in self.mapping.items():
                if owner != rank or uuid not in self.ticks:
                    continue
                held = self.ticks[uuid]
                before = [held.popleft() for _ in range(_count(held, lambda t: t.ts_ns <= t0))]
                self._emit_seconds(uuid, before)
                mine = [held.popleft() for _ in range(_count(held, lambda t: t.ts_ns <= t1))]
                if mine:
                    self._send(uuid, summarise(mine, self.idle_util, self._static(uuid))
                               | {"step": float(step), "step_window_s": (t1 - t0) / NS}, t1)
        for uuid, held in self.ticks.items():
            if not held:
                continue
            rank = self.mapping.get(uuid, -1)
            in_steps = now_ns - self.last_step_ns.get(rank, -10**19) < STEP_MODE_S * NS
            hold_ns = int((STEP_HOLD_S if in_steps else 1.0) * NS)
            if final:
                cut = now_ns + 1
            else:
                cut = (now_ns - hold_ns) // NS * NS  # whole seconds that ended before the hold
            ready = [held.popleft() for _ in range(_count(held, lambda t: t.ts_ns <= cut))]
            self._emit_seconds(uuid, ready)

    def _emit_seconds(self, uuid: str, ticks: list[Tick]) -> None:
        """Per-second summaries of ``ticks`` (no step window claimed them)."""
        groups: dict[int, list[Tick]] = {}
        for tick in ticks:
            groups.setdefault((tick.ts_ns - 1) // NS, []).append(tick)
        for second in sorted(groups):
            group = groups[second]
            self._send(uuid, summarise(group, self.idle_util, self._static(uuid)),
                       group[-1].ts_ns)

    def _static(self, uuid: str) -> dict:
        dev = next((d for d in self.nvml.devices if d.uuid == uuid), None) if self.nvml else None
        if dev is None:
            return {}
        out = {"gpu_index": float(dev.index)}
        if dev.mem_total is not None:
            out["mem_total_bytes"] = dev.mem_total
        return out

    def _send(self, uuid: str, metrics: dict, ts_ns: int) -> None:
        self.emitted += 1
        try:
            self.emit(self.mapping.get(uuid, -1), {"gpu_uuid": uuid, "metrics": metrics}, ts_ns)
        except Exception:  # noqa: BLE001 - publishing never stops the sampler
            pass


def _count(held: collections.deque, pred) -> int:
    n = 0
    for tick in held:
        if not pred(tick):
            break
        n += 1
    return n


def from_env(root_pid: int, emit, say=say) -> GpuProbe | None:
    """The probe `ridgescope run` starts, configured from the environment; None when off."""
    if os.environ.get(env.GPU) == "0":
        return None
    interval_ms = _int(os.environ.get(env.GPU_INTERVAL_MS), 100) or 100
    try:
        idle = float(os.environ.get(env.GPU_IDLE_UTIL, "5"))
    except ValueError:
        idle = 5.0
    return GpuProbe(root_pid, emit, interval_s=max(interval_ms, 10) / 1000.0, idle_util=idle,
                    visible=os.environ.get("CUDA_VISIBLE_DEVICES"), say=say)
