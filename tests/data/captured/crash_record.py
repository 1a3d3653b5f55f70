"""crash.py with torch's `@record` on its entry point: the failed rank writes its traceback to an
error file, and torchrun's report prints it under the root cause."""
import time

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record


@record
def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    t = torch.ones(4)
    for step in range(1, 6):
        t0 = time.perf_counter()
        dist.all_reduce(t)
        if rank == 1 and step == 3:
            raise RuntimeError("shape mismatch in batch 3 (user bug)")
        print(f"step {step}/5 loss {2.0 / step:.4f} step_time_ms {1000 * (time.perf_counter() - t0):.1f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
