"""Two ranks print `step N/10 ...`; on torchrun's first attempt rank 1 raises at step 5, and
torchrun (--max-restarts 1) starts both again from step 1 (no checkpoint); rank 1's step 7 then
sleeps 0.5 s."""
import os
import time

import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
last = time.perf_counter()
for step in range(1, 11):
    time.sleep(0.05 + (0.5 if attempt == 1 and step == 7 and rank == 1 else 0))
    dist.barrier()
    if attempt == 0 and step == 5 and rank == 1:
        raise RuntimeError("injected failure at step 5")
    now = time.perf_counter()
    print(f"step {step}/10 loss {2.0 / step:.4f} step_time_ms {(now - last) * 1000:.1f}", flush=True)
    last = now
dist.destroy_process_group()
