"""A loop that prints its own step times, run as `torchrun --nproc-per-node 2 --log-dir logs
--redirects 3 log_dir_steps.py`: torchrun writes each worker's stdout to
`logs/RUN_ID/attempt_0/LOCAL_RANK/stdout.log`, and no line says its rank.  Step 10 of rank
SLOW_RANK (default 1) sleeps 0.5 s.  PRINTING_RANK=N: only rank N prints (default: every rank).
Under srun or mpirun, with no torchrun, the launcher's task is the rank."""
import os
import time

rank = int(next(os.environ[name] for name in ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK")
                if name in os.environ))
slow_rank = int(os.environ.get("SLOW_RANK", "1"))
for step in range(1, 17):
    t0 = time.perf_counter()
    time.sleep(0.5 if (rank, step) == (slow_rank, 10) else 0.05)
    if os.environ.get("PRINTING_RANK", str(rank)) == str(rank):
        print(f"step {step}/16 loss {1.0 / step:.3f} step_time_ms {(time.perf_counter() - t0) * 1000:.1f}", flush=True)
