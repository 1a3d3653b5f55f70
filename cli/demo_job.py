"""The demo's training job: a plain DDP loop on CPU (gloo) with faults injected on purpose.

It knows nothing of RidgeScope: run it with `torchrun --nproc-per-node 4 -m
ridgescope.cli.demo_job`.  Faults are set by environment variables so tests can place them:
  RS_DEMO_STEPS          steps to run (default 60)
  RS_DEMO_SLOW_INPUT     RANK:FIRST-LAST  DataLoader batches that load slowly on one rank
  RS_DEMO_SLOW_INPUT_S   S                how long each of them takes to load (default 0.6);
                                          the loader's two workers fetch ahead, which hides
                                          up to two steps' time of a lone slow batch
  RS_DEMO_STRAGGLER      RANK:STEP        one step with extra compute on one rank
  RS_DEMO_CKPT_EVERY     N                a light checkpoint on rank 0 every N steps
  RS_DEMO_HEAVY_CKPT     STEP             one heavy checkpoint on rank 0 after this step
  RS_DEMO_DEVICE_MS      MS               accelerator time each forward stands for (default
                                          120), slept: on a CPU the ranks share a few cores,
                                          and a 30 ms step is at the mercy of the scheduler
Step numbers are 1-based, as the optimizer counts them.  Every rank prints one line per step.
"""
from __future__ import annotations

import os
import tempfile
import time


def _env_range(name: str, default: str) -> tuple[int, int, int]:
    rank, _, span = os.environ.get(name, default).partition(":")
    first, _, last = span.partition("-")
    return int(rank), int(first), int(last or first)


def main() -> None:
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.utils.data import DataLoader, Dataset

    torch.set_num_threads(1)
    if not dist.is_initialized():     # (a caller may have joined the group its own way)
        dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    steps = int(os.environ.get("RS_DEMO_STEPS", "60"))
    slow_rank, slow_first, slow_last = _env_range("RS_DEMO_SLOW_INPUT", "1:20-22")
    slow_load_s = float(os.environ.get("RS_DEMO_SLOW_INPUT_S", "0.6"))
    straggler_rank, straggler_step, _ = _env_range("RS_DEMO_STRAGGLER", "2:40")
    ckpt_every = int(os.environ.get("RS_DEMO_CKPT_EVERY", "15"))
    heavy_ckpt = int(os.environ.get("RS_DEMO_HEAVY_CKPT", "50"))
    device_s = float(os.environ.get("RS_DEMO_DEVICE_MS", "120")) / 1000

    class Batches(Dataset):
        """Batch i feeds step i+1; its loading is slow on one rank for a few steps."""

        def __len__(self):
            return steps

        def __getitem__(self, index):
            if rank == slow_rank and slow_first <= index + 1 <= slow_last:
                time.sleep(slow_load_s)
            gen = torch.Generator().manual_seed(index * world + rank)
            return torch.randn(64, 256, generator=gen), torch.randint(0, 10, (64,), generator=gen)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512),
                                      nn.ReLU(), nn.Linear(512, 10))
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            if rank == straggler_rank and self.calls == straggler_step:
                extra = torch.randn(512, 512)
                deadline = time.perf_counter() + 0.6
                while time.perf_counter() < deadline:
                    extra = torch.tanh(extra @ extra)
            time.sleep(device_s)
            return self.body(x)

    model = nn.parallel.DistributedDataParallel(Net(), bucket_cap_mb=1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Batches(), batch_size=None, shuffle=False, num_workers=2,
                        prefetch_factor=1, persistent_workers=False)
    ckpt_dir = tempfile.mkdtemp(prefix=f"rs-demo-ckpt-{rank}-")
    last = time.perf_counter()
    for step, (x, y) in enumerate(loader, start=1):
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        now = time.perf_counter()
        # Iteration time, end to end: it includes waiting for the batch and the last checkpoint.
        print(f"step {step}/{steps} loss {loss.item():.4f} "
              f"step_time_ms {(now - last) * 1000:.1f}", flush=True)
        last = now
        if rank == 0 and (step % ckpt_every == 0 or step == heavy_ckpt):
            path = os.path.join(ckpt_dir, f"step{step}.pt")
            state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
            if step == heavy_ckpt:
                state["ballast"] = torch.zeros(40_000_000)  # ~160 MB: a heavy checkpoint
            torch.save(state, path)
            os.remove(path)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
