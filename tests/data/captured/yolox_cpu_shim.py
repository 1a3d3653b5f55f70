"""CPU shim for capturing real console output of CUDA/NCCL training code on a CPU-only box.

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
  * (YOLOX) Module.to / Tensor.to -> any "cuda..." device is mapped to "cpu"; Tensor.type(torch.cuda.XTensor)
    -> CPU torch.XTensor; torch.cuda.Stream / torch.cuda.stream / torch.cuda.current_stream -> dummies and
    Tensor.record_stream -> no-op (YOLOX DataPrefetcher uses a side CUDA stream);
    torch.cuda.FloatTensor / torch.cuda.HalfTensor -> torch.FloatTensor / torch.HalfTensor (COCOEvaluator).
  * SLOW_NTH_IMREAD=<N> (env): the N-th call (1-based) of cv2.imread sleeps 0.5 s first (YOLOX loads with cv2).
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


def _dev(d):
    if isinstance(d, torch.device) and d.type == "cuda":
        return torch.device("cpu")
    if isinstance(d, str) and d.startswith("cuda"):
        return "cpu"
    return d

_orig_mod_to = torch.nn.Module.to
def _mod_to(self, *args, **kwargs):
    args = tuple(_dev(a) for a in args)
    if "device" in kwargs:
        kwargs["device"] = _dev(kwargs["device"])
    return _orig_mod_to(self, *args, **kwargs)
torch.nn.Module.to = _mod_to

_orig_t_to = torch.Tensor.to
def _t_to(self, *args, **kwargs):
    args = tuple(_dev(a) for a in args)
    if "device" in kwargs:
        kwargs["device"] = _dev(kwargs["device"])
    return _orig_t_to(self, *args, **kwargs)
torch.Tensor.to = _t_to

_orig_t_type = torch.Tensor.type
def _t_type(self, dtype=None, *args, **kwargs):
    if dtype is None:
        return _orig_t_type(self, *args, **kwargs)
    name = dtype if isinstance(dtype, str) else getattr(dtype, "__module__", "") + "." + getattr(dtype, "__name__", "")
    if isinstance(name, str) and name.startswith("torch.cuda."):
        dtype = "torch." + name.split(".")[-1]
    return _orig_t_type(self, dtype, *args, **kwargs)
torch.Tensor.type = _t_type

class _DummyStream:
    def wait_stream(self, *a, **k):
        pass
    def synchronize(self):
        pass
import contextlib
torch.cuda.Stream = lambda *a, **k: _DummyStream()
torch.cuda.current_stream = lambda *a, **k: _DummyStream()
torch.cuda.stream = lambda *a, **k: contextlib.nullcontext()
torch.Tensor.record_stream = lambda self, *a, **k: None

_slow_imread = int(os.environ.get("SLOW_NTH_IMREAD", "0") or 0)
if _slow_imread > 0:
    import cv2
    _orig_imread = cv2.imread
    _icount = [0]
    def _imread(*args, **kwargs):
        _icount[0] += 1
        if _icount[0] == _slow_imread:
            time.sleep(0.5)
        return _orig_imread(*args, **kwargs)
    cv2.imread = _imread

torch.cuda.FloatTensor = torch.FloatTensor
torch.cuda.HalfTensor = torch.HalfTensor
