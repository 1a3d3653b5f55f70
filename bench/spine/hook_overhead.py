"""The hook probe's cost per step in microseconds: one process, a tiny model, many steps.

The job-level comparison in run_bench.py is dominated by scheduling noise on a 2-core
machine; here the step is so small (a few hundred µs) that the probe's own work shows.
Usage: python bench/spine/hook_overhead.py  → prints JSON, and writes hook_overhead.json.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

STEPS = 3000
LOOP = f"""
import time, torch
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loader = torch.utils.data.DataLoader(torch.randn({STEPS} * 8, 32), batch_size=8)
times = []
last = time.perf_counter()
for x in loader:
    loss = model(x).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    now = time.perf_counter(); times.append(now - last); last = now
times = sorted(times[100:])
print("MEDIAN_US", times[len(times) // 2] * 1e6)
"""


def median_us(cmd: list[str]) -> float:
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    return float(next(line.split()[1] for line in out.splitlines() if line.startswith("MEDIAN_US")))


def main() -> None:
    data_dir = tempfile.mkdtemp(prefix="rs-hook-bench-")
    plain, probed = [], []
    for _ in range(5):
        plain.append(median_us([sys.executable, "-c", LOOP]))
        probed.append(median_us([sys.executable, "-m", "ridgescope.cli.main", "run", "--data-dir",
                                 data_dir, "--broker", "127.0.0.1:1", "--", sys.executable, "-c",
                                 LOOP]))
    result = {"steps": STEPS, "plain_median_step_us": [round(x, 1) for x in plain],
              "probed_median_step_us": [round(x, 1) for x in probed],
              "overhead_us_per_step": round(statistics.median(probed) - statistics.median(plain),
                                            1)}
    (Path(__file__).parent / "hook_overhead.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
