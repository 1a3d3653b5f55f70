"""A tiny DeepSpeed run on the CPU (gloo), to capture what the engine prints.

FLOPS_PROFILER=summary|detailed turns the Flops Profiler on at step 6 (`profile_step` 5);
GAS sets the micro-batches a step (2 where unset); COMMS_LOGGER=1 turns the comms logger on
(verbose: each op, at log level info) and prints its summary at the end.  BREAKDOWN=0 turns
`wall_clock_breakdown` off."""
import os, time
import torch
from torch import nn
import deepspeed

config = {
    "train_micro_batch_size_per_gpu": 4,
    "gradient_accumulation_steps": int(os.environ.get("GAS", "2")),
    "steps_per_print": 2,
    "wall_clock_breakdown": os.environ.get("BREAKDOWN", "1") == "1",
    "optimizer": {"type": "Adam", "params": {"lr": 1e-3, "torch_adam": True}},
}
if os.environ.get("FLOPS_PROFILER"):
    config["flops_profiler"] = {"enabled": True, "profile_step": 5, "module_depth": -1, "top_modules": 1,
                                "detailed": os.environ["FLOPS_PROFILER"] == "detailed"}
if os.environ.get("COMMS_LOGGER"):
    config["comms_logger"] = {"enabled": True, "verbose": True, "prof_all": True}
if os.environ.get("DS_LOG_INFO"):
    deepspeed.utils.logging.set_log_level_from_string("info")
deepspeed.init_distributed(dist_backend="gloo")
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
g = torch.Generator().manual_seed(engine.global_rank)
for i in range(12 * 2):
    x, y = torch.randn(4, 16, generator=g), torch.randn(4, 1, generator=g)
    loss = nn.functional.mse_loss(engine(x), y)
    engine.backward(loss)
    engine.step()
    time.sleep(0.02)
if os.environ.get("COMMS_LOGGER"):
    deepspeed.comm.log_summary()
engine.save_checkpoint(os.environ.get("CKPT_DIR", "/tmp/dsrun/ckpt"), tag="global_step12")
