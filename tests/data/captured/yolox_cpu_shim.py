"""The CPU shim of the YOLOX capture: `cuda_cpu_shim.py`'s patches, and YOLOX's own needs.

Loaded as `sitecustomize.py` (the run had this file and `cuda_cpu_shim.py`'s body in one file).
  * Module.to / Tensor.to -> any "cuda..." device is mapped to "cpu"; Tensor.type(torch.cuda.XTensor)
    -> CPU torch.XTensor; torch.cuda.Stream / torch.cuda.stream / torch.cuda.current_stream -> dummies and
    Tensor.record_stream -> no-op (YOLOX DataPrefetcher uses a side CUDA stream);
    torch.cuda.FloatTensor / torch.cuda.HalfTensor -> torch.FloatTensor / torch.HalfTensor (COCOEvaluator).
  * SLOW_NTH_IMREAD=<N> (env): the N-th call (1-based) of cv2.imread sleeps 0.5 s first (YOLOX loads with cv2).
"""
import os
import time

import torch

import cuda_cpu_shim  # noqa: F401 - the patches both captures share


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
