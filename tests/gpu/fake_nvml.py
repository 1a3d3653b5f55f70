"""A fake of the pynvml module at the library boundary, answering from tests/data/gpu.

Constants and error classes are the real ones from pynvml, so the probe's ``except`` clauses
are exercised exactly.  Each device walks its recorded timeline one entry per
``nvmlDeviceGetUtilizationRates`` call (the first reading of every tick).  ``fail()`` injects
errors from a given tick on.
"""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pynvml

FIXTURE = Path(__file__).parents[1] / "data" / "gpu" / "nvml_h200_l4.json"


class _Metric:
    def __init__(self):
        self.metricId = 0
        self.nvmlReturn = pynvml.NVML_SUCCESS
        self.value = 0.0


class GpmMetricsGet:
    """Stands in for pynvml.c_nvmlGpmMetricsGet_t (whose sample fields need real handles)."""

    def __init__(self):
        self.version = 0
        self.numMetrics = 0
        self.sample1 = self.sample2 = None
        self.metrics = [_Metric() for _ in range(pynvml.NVML_GPM_METRIC_MAX)]


class FakeNvml:
    def __init__(self, fixture: Path = FIXTURE, *, no_driver: bool = False, devices=None):
        data = json.loads(fixture.read_text())
        self.devices = data["devices"] if devices is None else devices
        self.no_driver = no_driver
        self.cursor = [-1] * len(self.devices)
        self.failures: list[tuple[int, str, type, int]] = []
        self.calls: dict[str, int] = {}
        self.gpm_times: dict[int, list[float]] = {}
        self.clock = None  # optional callable giving "now" for GPM spacing checks
        self.initialised = False
        self.c_nvmlGpmMetricsGet_t = GpmMetricsGet

    def __getattr__(self, name):  # constants, error classes, structures
        return getattr(pynvml, name)

    # -- control
    def fail(self, index: int, fn: str, error: type, from_tick: int = 0) -> None:
        self.failures.append((index, fn, error, from_tick))

    def _entry(self, handle: int, fn: str) -> dict:
        self.calls[fn] = self.calls.get(fn, 0) + 1
        for index, name, error, from_tick in self.failures:
            if index == handle and name in (fn, "*") and self.cursor[handle] >= from_tick:
                raise error()
        timeline = self.devices[handle]["timeline"]
        return timeline[min(max(self.cursor[handle], 0), len(timeline) - 1)]

    # -- library
    def nvmlInit(self):
        if self.no_driver:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)
        self.initialised = True

    def nvmlShutdown(self):
        self.initialised = False

    def nvmlDeviceGetCount(self):
        return len(self.devices)

    def nvmlDeviceGetHandleByIndex(self, index):
        return index

    def nvmlDeviceGetUUID(self, h):
        return self.devices[h]["uuid"]

    def nvmlDeviceGetName(self, h):
        return self.devices[h]["name"]

    def nvmlDeviceGetUtilizationRates(self, h):
        self.cursor[h] += 1
        e = self._entry(h, "nvmlDeviceGetUtilizationRates")
        return SimpleNamespace(gpu=e["util_gpu"], memory=e["util_mem"])

    def nvmlDeviceGetMemoryInfo(self, h):
        e = self._entry(h, "nvmlDeviceGetMemoryInfo")
        total = self.devices[h]["memory_total"]
        return SimpleNamespace(total=total, used=e["mem_used"], free=total - e["mem_used"])

    def nvmlDeviceGetPowerUsage(self, h):
        return self._entry(h, "nvmlDeviceGetPowerUsage")["power_mw"]

    def nvmlDeviceGetTotalEnergyConsumption(self, h):
        return self._entry(h, "nvmlDeviceGetTotalEnergyConsumption")["energy_mj"]

    def nvmlDeviceGetClockInfo(self, h, clock):
        e = self._entry(h, "nvmlDeviceGetClockInfo")
        return e["sm_clock"] if clock == pynvml.NVML_CLOCK_SM else e["mem_clock"]

    def nvmlDeviceGetTemperature(self, h, sensor):
        return self._entry(h, "nvmlDeviceGetTemperature")["temp"]

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):
        return self._entry(h, "nvmlDeviceGetCurrentClocksEventReasons")["reasons"]

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, h):
        return self._entry(h, "nvmlDeviceGetCurrentClocksThrottleReasons")["reasons"]

    def nvmlDeviceGetPcieThroughput(self, h, counter):
        e = self._entry(h, "nvmlDeviceGetPcieThroughput")
        return e["pcie_tx_kbs"] if counter == pynvml.NVML_PCIE_UTIL_TX_BYTES else e["pcie_rx_kbs"]

    def nvmlDeviceGetFieldValues(self, h, ids):
        e = self._entry(h, "nvmlDeviceGetFieldValues")
        out = []
        for fid in ids:
            ok = self.devices[h]["nvlink"]
            value = e.get("nvlink_tx_kib" if fid == 138 else "nvlink_rx_kib", 0)
            out.append(SimpleNamespace(
                fieldId=fid, nvmlReturn=0 if ok else pynvml.NVML_ERROR_NOT_SUPPORTED,
                value=SimpleNamespace(ullVal=value)))
        return out

    def nvmlDeviceGetTotalEccErrors(self, h, etype, counter):
        e = self._entry(h, "nvmlDeviceGetTotalEccErrors")
        return e["ecc_corr"] if etype == pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED else e["ecc_uncorr"]

    def nvmlDeviceGetComputeRunningProcesses(self, h):
        self._entry(h, "nvmlDeviceGetComputeRunningProcesses")
        return [SimpleNamespace(pid=pid, usedGpuMemory=1 << 30)
                for pid in self.devices[h].get("pids", [])]

    def nvmlEventSetCreate(self):
        return {"registered": []}

    def nvmlDeviceRegisterEvents(self, h, types, event_set):
        event_set["registered"].append(h)

    def nvmlEventSetWait_v2(self, event_set, timeout_ms):
        for h in event_set["registered"]:
            xid = self.devices[h].get("xid", {}).get(str(self.cursor[h]))
            if xid is not None and not self.devices[h].setdefault("_xid_sent", {}).get(
                    str(self.cursor[h])):
                self.devices[h]["_xid_sent"][str(self.cursor[h])] = True
                return SimpleNamespace(eventType=pynvml.nvmlEventTypeXidCriticalError,
                                       eventData=xid, device=h)
        raise pynvml.NVMLError(pynvml.NVML_ERROR_TIMEOUT)

    def nvmlEventSetFree(self, event_set):
        pass

    # -- GPM
    def nvmlGpmQueryDeviceSupport(self, h):
        if not self.devices[h]["gpm"]:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return SimpleNamespace(version=1, isSupportedDevice=1)

    def nvmlGpmSampleAlloc(self):
        return SimpleNamespace(h=None, cursor=None, t=None)

    def nvmlGpmSampleFree(self, sample):
        pass

    def nvmlGpmSampleGet(self, h, sample):
        self._entry(h, "nvmlGpmSampleGet")
        sample.h, sample.cursor = h, self.cursor[h]
        sample.t = self.clock() if self.clock else None
        self.gpm_times.setdefault(h, []).append(sample.t)
        return sample

    def nvmlGpmMetricsGet(self, request):
        h = request.sample2.h
        e = self._entry(h, "nvmlGpmMetricsGet")
        assert request.sample1 is not request.sample2
        for i in range(request.numMetrics):
            m = request.metrics[i]
            value = e["gpm"].get(str(m.metricId))
            if value is None:
                m.nvmlReturn = pynvml.NVML_ERROR_NOT_SUPPORTED
            else:
                m.nvmlReturn, m.value = 0, value
        return request
