"""A loop that prints its step with several arguments, `print("step", f"{n}/16", "loss", ...)`,
as many training scripts do.  Under PYTHONUNBUFFERED=1 `print` writes each argument and each
separator in a system call of its own, so a launcher that passes each read on as it comes
(`srun -u`) can cut the line between two of them.  Step 10 of task SLOW_RANK (default 1) sleeps
0.5 s.

Run: PYTHONUNBUFFERED=1 srun -u --label -n 2 python print_args_steps.py
"""
import os
import time

rank = int(os.environ.get("SLURM_PROCID", os.environ.get("RANK", "0")))
slow_rank = int(os.environ.get("SLOW_RANK", "1"))
for step in range(1, 17):
    t0 = time.perf_counter()
    time.sleep(0.5 if (rank, step) == (slow_rank, 10) else 0.05)
    print("step", f"{step}/16", "loss", round(1.0 / step, 3), "step_time_ms",
          round((time.perf_counter() - t0) * 1000, 1))
