"""Two ranks of a gloo job; rank 1 stalls in step 3 (a hung data loader, say) past the
collective timeout, so rank 0 times out waiting for it."""
import datetime, time
import torch
import torch.distributed as dist

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=5))
rank = dist.get_rank()
t = torch.ones(4)
for step in range(1, 5):
    if rank == 1 and step == 3:
        time.sleep(12)
    dist.all_reduce(t)
    print(f"step {step}/4 loss {2.0 / step:.4f}", flush=True)
dist.destroy_process_group()
