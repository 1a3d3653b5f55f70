"""CPU shim for capturing real console output of CUDA/NCCL training code on a CPU-only box
(the Swin Transformer capture's, and the base of the YOLOX capture's `yolox_cpu_shim.py`).

Loaded automatically, copied as `sitecustomize.py` into a folder put first on PYTHONPATH. The training code is NOT edited.
What it patches and why:
  * torch._six            -> tiny shim module providing `inf` (removed in torch 2.x; Swin utils.py imports it).
  * Tensor.cuda / Module.cuda -> return self (tensors/modules stay on CPU).
  * torch.cuda.set_device, torch.cuda.synchronize -> no-ops (no CUDA device).
  * torch.cuda.max_memory_allocated -> peak RSS of this process in bytes (so "mem ...MB" shows host memory).
  * torch.distributed.init_process_group -> backend forced to "gloo" (NCCL needs GPUs).
  * DistributedDataParallel.__init__ -> device_ids/output_device dropped (DDP rejects device_ids for CPU modules).
  * torch.cuda.amp.GradScaler -> torch.amp.GradScaler("cpu") (the CUDA one disables itself and returns an
    empty state_dict without CUDA; the code reads state_dict()["scale"]).
  * timm.data.mixup.mixup_target (if timm is importable) -> device forced to "cpu" (timm 0.4.x Mixup
    builds its one-hot targets with a hard-coded default device='cuda').
  * SLOW_NTH_OPEN=<N> (env): the N-th call (1-based) of PIL.Image.open in this process sleeps 0.5 s first,
    to make exactly one data-loading step slow (use with DataLoader num_workers=0).
"""
import os, sys, time, types, resource

import torch
import torch.distributed
import torch.nn.parallel

_six = types.ModuleType("torch._six")
_six.inf = float("inf")
_six.string_classes = (str, bytes)
sys.modules.setdefault("torch._six", _six)
torch._six = sys.modules["torch._six"]

torch.Tensor.cuda = lambda self, *a, **k: self
torch.nn.Module.cuda = lambda self, *a, **k: self
torch.cuda.set_device = lambda *a, **k: None
torch.cuda.synchronize = lambda *a, **k: None
torch.cuda.max_memory_allocated = lambda *a, **k: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

_orig_init_pg = torch.distributed.init_process_group
def _init_pg(*args, **kwargs):
    if args:
        args = ("gloo",) + tuple(args[1:])
    else:
        kwargs["backend"] = "gloo"
    return _orig_init_pg(*args, **kwargs)
torch.distributed.init_process_group = _init_pg

_orig_ddp_init = torch.nn.parallel.DistributedDataParallel.__init__
def _ddp_init(self, module, *args, **kwargs):
    kwargs.pop("device_ids", None)
    kwargs.pop("output_device", None)
    return _orig_ddp_init(self, module, *args, **kwargs)
torch.nn.parallel.DistributedDataParallel.__init__ = _ddp_init

import torch.cuda.amp
def _cpu_grad_scaler(*args, **kwargs):
    return torch.amp.GradScaler("cpu", *args, **kwargs)
torch.cuda.amp.GradScaler = _cpu_grad_scaler

try:
    import timm.data.mixup as _tm
    _orig_mixup_target = _tm.mixup_target
    def _mixup_target(*args, **kwargs):
        kwargs["device"] = "cpu"
        return _orig_mixup_target(*args, **kwargs)
    _tm.mixup_target = _mixup_target
except ImportError:
    pass

_slow_n = int(os.environ.get("SLOW_NTH_OPEN", "0") or 0)
if _slow_n > 0:
    import PIL.Image
    _orig_open = PIL.Image.open
    _count = [0]
    def _open(*args, **kwargs):
        _count[0] += 1
        if _count[0] == _slow_n:
            time.sleep(0.5)
        return _orig_open(*args, **kwargs)
    PIL.Image.open = _open
