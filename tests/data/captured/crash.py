"""Ranks of a gloo job; one (rank 1, or $CRASH_RANK) fails at step 3, as a user's bug would."""
import os, time
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(4)
for step in range(1, 6):
    t0 = time.perf_counter()
    dist.all_reduce(t)
    if rank == int(os.environ.get("CRASH_RANK", "1")) and step == 3:
        raise RuntimeError("shape mismatch in batch 3 (user bug)")
    print(f"step {step}/5 loss {2.0 / step:.4f} step_time_ms {1000 * (time.perf_counter() - t0):.1f}", flush=True)
dist.destroy_process_group()
