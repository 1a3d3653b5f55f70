"""A tiny Ray Train job on the CPU, to capture what Ray prints around its workers' output:
TorchTrainer, 2 CPU workers (ScalingConfig(num_workers=2, use_gpu=False); under V1 also trainer_resources={"CPU": 0}), an nn.Linear
wrapped in DDP by ray.train.torch.prepare_model (gloo), 12 steps. Every worker prints
`worker world_rank=R local_rank=L` once, then `step S/12 loss X step_time_ms T` each step
(print, flush=True) and calls ray.train.report each step, with a checkpoint (rank 0 only)
at steps 6 and 12. Rank 1 sleeps 0.5 s inside step 8 (a deliberate straggler).
Ray's own logging is left as it is; Ray's temp dir and results go under /tmp/cap-ray.

Usage (combined output through a pipe/file, as in a batch job):
  python ray_train_fit.py > OUT.log 2>&1
  RAY_DEDUP_LOGS=0 python ray_train_fit.py > OUT.log 2>&1      # no [repeated Nx] folding
  RAY_TRAIN_V2_ENABLED=0 python ray_train_fit.py > OUT.log 2>&1  # old (V1) Ray Train
(the captures ran it with HOME and Ray's temp dir in fresh folders and RAY_USAGE_STATS_ENABLED=0)
"""
import os
import tempfile
import time

import ray
import ray.train
import ray.train.torch
import torch
import torch.nn as nn
from ray.train import Checkpoint, RunConfig, ScalingConfig
from ray.train.torch import TorchTrainer

BASE = os.environ.get("CAP_BASE", "/tmp/cap-ray")
STEPS = 12
SLOW_RANK, SLOW_STEP, SLOW_S = 1, 8, 0.5


def train_loop_per_worker(config):
    ctx = ray.train.get_context()
    rank = ctx.get_world_rank()
    print(f"worker world_rank={rank} local_rank={ctx.get_local_rank()}", flush=True)

    torch.manual_seed(0)
    model = ray.train.torch.prepare_model(nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(100 + rank)
    w_true = torch.arange(16, dtype=torch.float32).unsqueeze(1) / 16

    for step in range(1, STEPS + 1):
        t0 = time.perf_counter()
        x = torch.randn(64, 16, generator=g)
        y = x @ w_true
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == SLOW_RANK and step == SLOW_STEP:
            time.sleep(SLOW_S)  # deliberate straggler
        dt_ms = (time.perf_counter() - t0) * 1000
        print(f"step {step}/{STEPS} loss {loss.item():.4f} step_time_ms {dt_ms:.1f}", flush=True)

        metrics = {"loss": loss.item(), "step": step}
        if step in (6, 12) and rank == 0:
            d = tempfile.mkdtemp(dir=config["ckpt_tmp"])
            torch.save(model.module.state_dict(), os.path.join(d, "model.pt"))
            ray.train.report(metrics, checkpoint=Checkpoint.from_directory(d))
        else:
            ray.train.report(metrics)


if __name__ == "__main__":
    ckpt_tmp = os.path.join(BASE, "ckpt_tmp")
    os.makedirs(ckpt_tmp, exist_ok=True)
    ray.init(_temp_dir=os.path.join(BASE, "raytmp"))
    # Old (V1) Ray Train gives its trainer actor 1 CPU by default, so on a 2-core machine
    # 2 workers + trainer (3 CPUs) never get scheduled; V2's controller takes 0 CPU.
    v1 = os.environ.get("RAY_TRAIN_V2_ENABLED", "1").lower() in ("0", "false")
    extra = {"trainer_resources": {"CPU": 0}} if v1 else {}
    trainer = TorchTrainer(
        train_loop_per_worker,
        train_loop_config={"ckpt_tmp": ckpt_tmp},
        scaling_config=ScalingConfig(num_workers=2, use_gpu=False, **extra),
        run_config=RunConfig(name="cap", storage_path=os.path.join(BASE, "results")),
    )
    result = trainer.fit()
    print(f"result.metrics: {result.metrics}", flush=True)
    print(f"result.checkpoint: {result.checkpoint}", flush=True)
