"""Progress lines longer than 1024 bytes, as a trainer that logs many metrics prints them: the
step and its time first, 40 metrics, and the throughput last.

Run: srun --label -n 2 python long_lines.py
"""
import os

rank = int(os.environ.get("RANK") or os.environ.get("SLURM_PROCID") or 0)
for step in range(1, 5):
    metrics = " ".join(f"layer{i:02d}/grad_norm={0.01 * (i + step):.6f}" for i in range(40))
    print(f"step {step}/4 loss 2.30{rank} step_time_ms 300.{rank} {metrics} tokens_per_s={1000 * step + rank}",
          flush=True)
