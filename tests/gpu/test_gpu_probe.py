"""The NVML GPU probe against a fake pynvml answering recorded-shape values (tests/data/gpu)."""
from __future__ import annotations

import pynvml
import pytest

from ridgescope.probes import gpu

from .fake_nvml import FakeNvml

NS = 1_000_000_000
T0 = 1_700_000_000 * NS
H200 = "GPU-5a3c1d2e-7f10-4b7e-9a2c-1e0f5d6c7b8a"
L4 = "GPU-0b1e2f3a-4c5d-6e7f-8091-a2b3c4d5e6f7"


def make(fake=None, procs=None, **kw):
    out = []
    probe = gpu.GpuProbe(None, lambda rank, payload, ts: out.append((rank, payload, ts)),
                         nvml=fake or FakeNvml(), processes=lambda: procs or [], **kw)
    assert probe.open()
    return probe, out


def drive(probe, ticks, start=0, step_ns=NS // 10):
    for i in range(start, start + ticks):
        probe.tick(T0 + i * step_ns, i * step_ns / NS)


def of(out, uuid):
    return [(rank, p["metrics"], ts) for rank, p, ts in out if p["gpu_uuid"] == uuid]


def test_per_second_summaries_carry_every_reading():
    probe, out = make()
    drive(probe, 41)
    probe.flush(T0 + 5 * NS, final=True)
    h200 = of(out, H200)
    assert [round(m["window_s"], 3) for _, m, _ in h200] == [1.0, 1.0, 1.0, 1.0]
    m = h200[0][1]
    # ticks 1-10, all busy (the stall is ticks 20-24 of every 25)
    assert m["util_gpu.mean"] == 97.0 and m["util_gpu.idle_s"] == 0.0
    assert m["power_w.max"] == 640.0 and m["mem_total_bytes"] == 150_754_820_096
    assert m["sm_clock_mhz.mean"] == 1980.0 and m["temp_c.min"] >= 48
    assert m["energy_j"] == pytest.approx(550.0)  # 10 ticks × 55 J, from the cumulative mJ
    # NVLink from field values 138/139 (cumulative KiB), differenced over 100 ms ticks
    assert m["nvlink_tx_bps.mean"] == pytest.approx(12_000 * 1024 / 0.1)
    assert m["nvlink_rx_bytes"] == pytest.approx(10 * 11_500 * 1024)
    # GPM on the Hopper GPU only, MiB/s turned into bytes/s
    assert m["gpm.sm_active.mean"] == 91.5 and m["gpm.tensor_active.max"] == 72.0
    assert m["gpm.nvlink_tx_bps.mean"] == pytest.approx(11720.0 * 1024 * 1024)
    assert "gpm.pcie_rx_bps.mean" in m and "pcie_rx_bps.mean" not in m
    l4 = of(out, L4)[0][1]
    assert not any(k.startswith("gpm.") for k in l4)
    assert not any(k.startswith("nvlink") for k in l4)
    assert "pcie_rx_bps.mean" in of(out, L4)[1][1]  # legacy PCIe counter, once a second


def test_idle_time_clock_events_ecc_and_xid():
    probe, out = make()
    drive(probe, 61)
    probe.flush(T0 + 7 * NS, final=True)
    h200 = {round((ts - T0) / NS): m for _, m, ts in of(out, H200)}
    # ticks 20-24 are an input stall (2% utilisation): 5 × 100 ms below the idle threshold,
    # tick 20 closing second 2 and ticks 21-24 in second 3
    assert h200[2]["util_gpu.idle_s"] + h200[3]["util_gpu.idle_s"] == pytest.approx(0.5)
    assert h200[3]["clock_event.gpu_idle"] == pytest.approx(0.4)
    # ticks 30-39 hit the software power cap (tick 30 closes second 3)
    assert h200[4]["clock_event.sw_power_cap"] == pytest.approx(0.9)
    assert h200[4]["sm_clock_mhz.min"] == 1755.0
    assert h200[5]["ecc_corrected"] == 1.0 and "ecc_corrected" not in h200[4]
    assert h200[6]["xid_count"] == 1.0 and h200[6]["xid.max"] == 79.0


def test_step_windows_when_the_rank_reports_steps():
    procs = [{"pid": 100, "rank": 0, "local_rank": 0, "cvd": None},
             {"pid": 101, "rank": 1, "local_rank": 1, "cvd": None}]
    probe, out = make(procs=procs)
    drive(probe, 12)
    probe.on_step(0, 1, T0 + 3 * NS // 10, T0 + 8 * NS // 10)
    probe.on_step(1, 1, T0 + 3 * NS // 10, T0 + 8 * NS // 10)
    probe.flush(T0 + 12 * NS // 10)
    steps = [(r, p["gpu_uuid"], p["metrics"]) for r, p, _ in out if "step" in p["metrics"]]
    assert {(r, u) for r, u, _ in steps} == {(0, H200), (1, L4)}
    for _, _, m in steps:
        assert m["samples"] == 5.0 and m["step"] == 1.0
        assert m["step_window_s"] == pytest.approx(0.5)
    # ticks before the first step went out per second, ticks after it wait for the next step
    before = [m for r, p, _ in out for m in [p["metrics"]] if "step" not in m]
    assert all(m["samples"] == 3.0 for m in before) and len(before) == 2  # ticks 1-3
    assert len(probe.ticks[H200]) == 3  # ticks 9-11


def test_gpm_samples_are_more_than_100ms_apart():
    fake = FakeNvml()
    clock = {"t": 0.0}
    fake.clock = lambda: clock["t"]
    probe, _ = make(fake)
    for i in range(60):
        clock["t"] = i * 0.1 + (0.004 if i % 3 else -0.004)  # timer jitter
        probe.tick(T0 + i * NS // 10, clock["t"])
    times = fake.gpm_times[0]
    assert len(times) >= 25
    assert min(b - a for a, b in zip(times, times[1:])) > 0.1
    assert 1 not in fake.gpm_times  # the L4 has no GPM


def test_a_gpu_that_disappears_mid_run(capsys):
    fake = FakeNvml()
    fake.fail(0, "*", pynvml.NVMLError_GpuIsLost, from_tick=15)
    probe, out = make(fake)
    drive(probe, 40)
    probe.flush(T0 + 5 * NS, final=True)
    h200 = of(out, H200)
    assert [m.get("gpu_lost") for _, m, _ in h200].count(1.0) == 1
    assert h200[-1][1] == {"gpu_lost": 1.0}
    assert sum(m.get("samples", 0) for _, m, _ in h200) == 14  # ticks 1-14 were kept
    assert len(of(out, L4)) == 4  # the other GPU goes on
    err = capsys.readouterr().err
    assert err.count("is lost") == 1 and H200 in err
    calls = fake.calls["nvmlDeviceGetUtilizationRates"]
    drive(probe, 5, start=40)
    assert fake.calls["nvmlDeviceGetUtilizationRates"] == calls + 5  # only the L4 is read


def test_readings_not_supported_are_skipped_from_then_on():
    fake = FakeNvml()
    fake.fail(1, "nvmlDeviceGetPowerUsage", pynvml.NVMLError_NotSupported)
    fake.fail(1, "nvmlDeviceGetTotalEnergyConsumption", pynvml.NVMLError_NotSupported)
    fake.fail(0, "nvmlDeviceGetTemperature", pynvml.NVMLError_Unknown, from_tick=5)
    probe, out = make(fake)
    drive(probe, 21)
    probe.flush(T0 + 3 * NS, final=True)
    l4 = of(out, L4)[0][1]
    assert "power_w.mean" not in l4 and "energy_j" not in l4 and l4["util_gpu.mean"] > 0
    assert fake.calls["nvmlDeviceGetPowerUsage"] == 21 + 1  # the H200's 21 + one try on the L4
    h200 = of(out, H200)
    assert "temp_c.mean" in h200[0][1] and "temp_c.mean" not in h200[1][1]  # transient errors
    assert h200[1][1]["util_gpu.mean"] > 0


def test_no_gpu_goes_quiet_with_one_line(capsys):
    probe = gpu.GpuProbe(None, lambda *a: None, nvml=FakeNvml(no_driver=True))
    assert probe.start() is probe and not probe._thread.is_alive()
    probe.stop()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no NVIDIA GPU found" in err[0] and "GPU probe off" in err[0]


def test_the_real_nvml_on_this_machine_finds_no_gpu(capsys):
    """This machine has no NVIDIA driver: the real pynvml path must say so and stay off."""
    probe = gpu.GpuProbe(None, lambda *a: None)
    opened = probe.open()
    if opened:  # pragma: no cover - only on a GPU machine
        probe.stop()
        pytest.skip("an NVIDIA GPU is present")
    assert "no NVIDIA GPU found" in capsys.readouterr().err


def test_from_env(monkeypatch):
    monkeypatch.setenv("RIDGESCOPE_GPU", "0")
    assert gpu.from_env(1, lambda *a: None) is None
    monkeypatch.setenv("RIDGESCOPE_GPU", "1")
    monkeypatch.setenv("RIDGESCOPE_GPU_INTERVAL_MS", "250")
    monkeypatch.setenv("RIDGESCOPE_GPU_IDLE_UTIL", "10")
    probe = gpu.from_env(1, lambda *a: None)
    assert probe.interval_s == 0.25 and probe.idle_util == 10.0


def test_sampler_thread_runs_and_stops():
    out = []
    probe = gpu.GpuProbe(None, lambda r, p, ts: out.append(p), nvml=FakeNvml(),
                         interval_s=0.01, processes=lambda: [])
    probe.start()
    import time
    time.sleep(0.3)
    probe.stop()
    assert not probe._thread.is_alive()
    assert sum(p["metrics"].get("samples", 0) for p in out) >= 10
    assert probe.nvml is None  # NVML shut down


# --- GPU → rank mapping (pure) -------------------------------------------------------------------

GPUS = [(0, "GPU-aaaa-0"), (1, "GPU-bbbb-1"), (2, "GPU-cccc-2"), (3, "GPU-dddd-3")]


def proc(pid, rank, local=None, cvd=None):
    return {"pid": pid, "rank": rank, "local_rank": local, "cvd": cvd}


def test_mapping_from_nvml_compute_processes_wins():
    procs = [proc(10, 0, 0), proc(11, 1, 1), proc(12, -1)]
    compute = {"GPU-cccc-2": {10}, "GPU-dddd-3": {11, 99}}
    assert gpu.map_gpus(GPUS, procs, compute) == {
        "GPU-aaaa-0": -1, "GPU-bbbb-1": -1, "GPU-cccc-2": 0, "GPU-dddd-3": 1}


def test_mapping_from_local_rank_and_visible_devices():
    procs = [proc(10, 4, 0, "2,3"), proc(11, 5, 1, "2,3"), proc(12, 6, 0, "GPU-aaaa"),
             proc(13, 7, 3, "1")]  # Slurm style: one visible GPU per task
    assert gpu.map_gpus(GPUS, procs, {}) == {
        "GPU-aaaa-0": 6, "GPU-bbbb-1": 7, "GPU-cccc-2": 4, "GPU-dddd-3": 5}


def test_mapping_without_visible_devices_uses_local_rank_over_all_gpus():
    procs = [proc(10, 0, 0), proc(11, 1, 1), proc(20, 0, None)]  # a DataLoader worker of rank 0
    assert gpu.map_gpus(GPUS, procs, {}) == {
        "GPU-aaaa-0": 0, "GPU-bbbb-1": 1, "GPU-cccc-2": -1, "GPU-dddd-3": -1}


def test_a_job_without_ranks_is_rank_0_as_its_hook_probe_says():
    # `ridgescope run -- python train.py`: no launcher, no RANK anywhere (seen on an H200)
    procs = [proc(10, -1), proc(11, -1), proc(12, -1)]  # the script and its DataLoader workers
    assert gpu.map_gpus(GPUS, procs, {"GPU-bbbb-1": {10}}) == {
        "GPU-aaaa-0": -1, "GPU-bbbb-1": 0, "GPU-cccc-2": -1, "GPU-dddd-3": -1}
    only_visible = [proc(10, -1, None, "2"), proc(11, -1, None, "2")]
    assert gpu.map_gpus(GPUS, only_visible, {})["GPU-cccc-2"] == 0
    # in a launched job, a process without RANK (the launcher) is nobody's
    assert gpu.map_gpus(GPUS, [proc(9, -1), proc(10, 3, 0, "1")], {"GPU-cccc-2": {9}}) == {
        "GPU-aaaa-0": -1, "GPU-bbbb-1": 3, "GPU-cccc-2": -1, "GPU-dddd-3": -1}


def test_mapping_ignores_what_it_cannot_resolve():
    procs = [proc(10, 0, 0, "MIG-1234"), proc(11, 1, 5, "0,1"), proc(12, 2, 0, "9")]
    assert set(gpu.map_gpus(GPUS, procs, {}).values()) == {-1}


def test_visible_devices_limit_the_gpus_sampled():
    probe, _ = make(visible="1")
    assert [d.uuid for d in probe.nvml.devices] == [L4]
