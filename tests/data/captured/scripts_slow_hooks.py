"""Test-harness hooks (copied as `sitecustomize.py` into a folder put first on PYTHONPATH).

Python imports a module named `sitecustomize` at start-up, so putting this
folder first on PYTHONPATH applies the hooks below without touching the
training scripts.  Every hook is off unless its environment variable is set.

1. SLOW_MEMMAP_CALL=N [SLOW_SECONDS=0.5]  (nanoGPT)
   Replaces numpy.memmap with a subclass that sleeps SLOW_SECONDS inside the
   N-th (1-based) construction.  nanoGPT's train.py re-creates np.memmap in
   every get_batch() call, so this makes exactly one batch fetch slow.

2. SLOW_SGD_STEP=N [SLOW_SECONDS=0.5]  (DLRM)
   Wraps torch.optim.SGD.step to sleep SLOW_SECONDS inside its N-th (1-based)
   call.  dlrm_s_pytorch.py calls optimizer.step() once per training
   iteration, inside the span it times for "ms/it".

3. TORCH_PROFILE_LEGACY_ARGS=1  (DLRM, compatibility only)
   Old dlrm_s_pytorch.py calls torch.autograd.profiler.profile(enabled,
   use_gpu) with use_cuda as a 2nd positional argument; current torch only
   accepts `enabled` positionally and has no `use_cuda`.  This wraps
   profile so a legacy 2nd positional / use_cuda argument is accepted and
   ignored when false (it must be false: we run on the CPU).

4. SLOW_CLIP_CALL=N [SLOW_SECONDS=0.5]  (PyTorch examples' word_language_model)
   Wraps torch.nn.utils.clip_grad_norm_ to sleep SLOW_SECONDS inside its N-th
   (1-based) call.  The example's loop clips once per batch, inside the span
   its `ms/batch` times.
"""
import os
import time

_SLOW_SECONDS = float(os.environ.get("SLOW_SECONDS", "0.5"))


if os.environ.get("SLOW_MEMMAP_CALL"):
    import numpy as _np

    _target_call = int(os.environ["SLOW_MEMMAP_CALL"])
    _orig_memmap = _np.memmap
    _calls = [0]

    class _SlowMemmap(_orig_memmap):
        def __new__(cls, *args, **kwargs):
            _calls[0] += 1
            if _calls[0] == _target_call:
                time.sleep(_SLOW_SECONDS)
            return _orig_memmap.__new__(cls, *args, **kwargs)

    _SlowMemmap.__name__ = "memmap"
    _SlowMemmap.__qualname__ = "memmap"
    _np.memmap = _SlowMemmap

if os.environ.get("SLOW_SGD_STEP") or os.environ.get("TORCH_PROFILE_LEGACY_ARGS"):
    import functools as _functools

    import torch as _torch

    if os.environ.get("SLOW_SGD_STEP"):
        _target_step = int(os.environ["SLOW_SGD_STEP"])
        _orig_step = _torch.optim.SGD.step
        _steps = [0]

        @_functools.wraps(_orig_step)
        def _slow_step(self, *args, **kwargs):
            _steps[0] += 1
            if _steps[0] == _target_step:
                time.sleep(_SLOW_SECONDS)
            return _orig_step(self, *args, **kwargs)

        _torch.optim.SGD.step = _slow_step

    if os.environ.get("TORCH_PROFILE_LEGACY_ARGS"):
        _orig_profile = _torch.autograd.profiler.profile

        class _LegacyArgsProfile(_orig_profile):
            def __init__(self, enabled=True, use_cuda=False, *args, **kwargs):
                if use_cuda:
                    raise RuntimeError("use_cuda=True is not supported by this shim")
                super().__init__(enabled, *args, **kwargs)

        _torch.autograd.profiler.profile = _LegacyArgsProfile

if os.environ.get("SLOW_CLIP_CALL"):
    import functools as _functools

    import torch as _torch

    _target_clip = int(os.environ["SLOW_CLIP_CALL"])
    _orig_clip = _torch.nn.utils.clip_grad_norm_
    _clips = [0]

    @_functools.wraps(_orig_clip)
    def _slow_clip(*args, **kwargs):
        _clips[0] += 1
        if _clips[0] == _target_clip:
            time.sleep(_SLOW_SECONDS)
        return _orig_clip(*args, **kwargs)

    _torch.nn.utils.clip_grad_norm_ = _slow_clip
