"""Writes nvml_h200_l4.json: faked NVML answers for a two-GPU node, one tick per entry.

GPU 0 is shaped like an H200 SXM (Hopper: GPM, NVLink, 141 GB HBM3e, 700 W), GPU 1 like an
L4 PCIe card (Ada: no GPM, no NVLink).  The training pattern: 20 ticks of a busy step phase,
then an input stall of 5 ticks at low utilisation, repeated; a power-cap clock event at ticks
30-39; one corrected ECC error at tick 50.  Values are in NVML's own units.
"""
import json
import math
from pathlib import Path


def h200(t):
    busy = (t % 25) < 20
    return {
        "util_gpu": 97 if busy else 2, "util_mem": 61 if busy else 1,
        "mem_used": 96_000_000_000 + 1_000_000 * (t % 7), "power_mw": 640_000 if busy else 180_000,
        "energy_mj": 1_000_000_000 + t * 55_000, "sm_clock": 1980 if not 30 <= t < 40 else 1755,
        "mem_clock": 2619, "temp": 48 + (t % 5),
        "reasons": (0x004 if 30 <= t < 40 else 0) | (0 if busy else 0x001),
        "nvlink_tx_kib": 5_000_000 + t * 12_000, "nvlink_rx_kib": 7_000_000 + t * 11_500,
        "ecc_corr": 0 if t < 50 else 1, "ecc_uncorr": 0,
        "pcie_tx_kbs": 1200, "pcie_rx_kbs": 450_000 if not busy else 20_000,
        "gpm": {"2": 91.5 if busy else 1.0, "3": 43.0 if busy else 0.5,
                "5": 72.0 if busy else 0.0, "10": 38.0 if busy else 0.2,
                "11": 0.0, "12": 6.5 if busy else 0.0, "13": 0.3 if busy else 0.0,
                "20": 5.0, "21": 430.0 if not busy else 18.0,
                "60": 11230.0, "61": 11720.0},
    }


def l4(t):
    return {
        "util_gpu": 35 + int(10 * math.sin(t / 3)), "util_mem": 12, "mem_used": 8_000_000_000,
        "power_mw": 41_000, "energy_mj": 50_000_000 + t * 4_100, "sm_clock": 2040,
        "mem_clock": 6251, "temp": 41, "reasons": 0, "ecc_corr": 0, "ecc_uncorr": 0,
        "pcie_tx_kbs": 3000, "pcie_rx_kbs": 9000,
    }


fixture = {
    "driver": "570.133.20",
    "devices": [
        {"uuid": "GPU-5a3c1d2e-7f10-4b7e-9a2c-1e0f5d6c7b8a", "name": "NVIDIA H200",
         "gpm": True, "nvlink": True, "memory_total": 150_754_820_096,
         "xid": {"60": 79}, "timeline": [h200(t) for t in range(80)]},
        {"uuid": "GPU-0b1e2f3a-4c5d-6e7f-8091-a2b3c4d5e6f7", "name": "NVIDIA L4",
         "gpm": False, "nvlink": False, "memory_total": 24_152_899_584,
         "xid": {}, "timeline": [l4(t) for t in range(80)]},
    ],
}
Path(__file__).with_name("nvml_h200_l4.json").write_text(json.dumps(fixture, separators=(",", ":")))
