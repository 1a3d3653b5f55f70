"""Run-time shim for torchtitan 0.3.0 on a CPU-only host (no package edits), copied as sitecustomize.py.

Put this directory on PYTHONPATH; Python imports sitecustomize at start-up in
every process (torchrun launcher and each rank). It installs a post-import hook
that only acts when the named torchtitan modules are imported:

1. CPU device (TT_CPU_SHIM=1). torchtitan.tools.utils computes
   `device_type = _get_available_device_type() or "cuda"`, i.e. it falls back
   to CUDA when no accelerator exists, and metrics.DeviceMemoryMonitor calls
   device_module.get_device_name / get_device_properties / memory_stats /
   reset_peak_memory_stats / empty_cache, which `torch.cpu` lacks. Right after
   torchtitan.tools.utils runs, we set its `device_type = "cpu"` and
   `device_module` = a proxy of `torch.cpu` that adds those five functions
   and returns 0 from current_device() (barrier(device_ids=[...]) needs an int):
   memory_stats reports the process peak RSS (getrusage ru_maxrss) as the
   "active/reserved bytes peak", capacity = physical RAM. With device_type
   "cpu", torch's default backend map gives the "gloo" process group.
   Also lifts torch's "FlexAttention does not support backward on CPU" guard
   (see _patch_tools_utils); use together with TORCHDYNAMO_DISABLE=1 so that
   flex_attention runs eagerly (dense math path, which has a backward).
   And, for 2+ ranks, makes FSDP reduce-scatter with SUM instead of
   PREMUL_SUM(1.0), which Gloo does not implement (see _patch_fsdp).

2. One slow step (TT_SLOW_STEP=N, TT_SLOW_SECONDS=s, default 0.5). Wraps
   Trainer.batch_generator's input iterable so that fetching the N-th
   *training* batch sleeps s seconds (inside the timed data-loading window).
   With no gradient accumulation, batch N == step N. Validation loaders are
   separate and unaffected.
"""

import importlib.abc
import importlib.machinery
import os
import sys
import time


def _patch_tools_utils(mod):
    import resource
    import types

    import torch

    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")

    class _CpuDeviceModule:
        """Stand-in for torch.cuda: delegates to torch.cpu, adds what it lacks."""

        def __getattr__(self, name):
            return getattr(torch.cpu, name)

        @staticmethod
        def current_device():  # torch.cpu's returns "cpu"; barrier wants an int
            return 0

        @staticmethod
        def get_device_name(device=None):
            return "CPU"

        @staticmethod
        def get_device_properties(device=None):
            return types.SimpleNamespace(name="CPU", total_memory=ram)

        @staticmethod
        def memory_stats(device=None):
            # process peak RSS (ru_maxrss is KiB on Linux), never reset
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            return {
                "active_bytes.all.peak": peak,
                "reserved_bytes.all.peak": peak,
                "num_alloc_retries": 0,
                "num_ooms": 0,
            }

        @staticmethod
        def reset_peak_memory_stats(device=None):
            pass

        @staticmethod
        def empty_cache():
            pass

    mod.device_type, mod.device_module = "cpu", _CpuDeviceModule()

    # FlexAttention (the only attention backend llama3 accepts besides CUDA-only
    # varlen) refuses backward on CPU in torch's _validate_device. Eager
    # flex_attention (dense "math" path, run with TORCHDYNAMO_DISABLE=1 because
    # the inductor CPU backward fails) does support autograd, so skip only
    # that one CPU/requires_grad guard and keep the rest of the validation.
    import torch.nn.attention.flex_attention as fa

    orig_validate = fa._validate_device

    def _validate_device(query, key, value):
        if query.device.type == "cpu":
            return
        return orig_validate(query, key, value)

    fa._validate_device = _validate_device


def _patch_fsdp(mod):
    """torchtitan sets FSDP gradient_divide_factor=1.0 (it scales by global token
    count itself); with dp_shard=2 torch then reduce-scatters with
    ReduceOp.PREMUL_SUM(1.0), which Gloo rejects ("Cannot use ReduceOp.PREMUL_SUM
    with Gloo"). Also setting force_sum_reduction_for_comms makes torch use
    ReduceOp.SUM followed by a division by 1.0 - numerically the same."""
    orig = mod.disable_fsdp_gradient_division

    def disable_fsdp_gradient_division(model):
        orig(model)
        for m in model.modules():
            if isinstance(m, mod.FSDPModule):
                m.set_force_sum_reduction_for_comms(True)

    mod.disable_fsdp_gradient_division = disable_fsdp_gradient_division


def _patch_trainer(mod):
    slow_step = int(os.environ["TT_SLOW_STEP"])
    secs = float(os.environ.get("TT_SLOW_SECONDS", "0.5"))
    orig = mod.Trainer.batch_generator

    class _SlowOnce:
        """Iterable yielding the wrapped loader's batches; sleeps before batch N."""

        def __init__(self, inner):
            self.inner = inner

        def __iter__(self):
            for i, batch in enumerate(self.inner, start=1):
                if i == slow_step:
                    time.sleep(secs)
                yield batch

    def batch_generator(self, data_iterable):
        return orig(self, _SlowOnce(data_iterable))

    mod.Trainer.batch_generator = batch_generator


_HOOKS = {}
if os.environ.get("TT_CPU_SHIM") == "1":
    _HOOKS["torchtitan.tools.utils"] = _patch_tools_utils
    _HOOKS["torchtitan.distributed.fsdp"] = _patch_fsdp
if os.environ.get("TT_SLOW_STEP"):
    _HOOKS["torchtitan.trainer"] = _patch_trainer


class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Finds the real spec, then runs our patch right after the module executes."""

    def find_spec(self, name, path, target=None):
        if name not in _HOOKS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        real_exec = spec.loader.exec_module

        def exec_module(module, _real=real_exec, _patch=_HOOKS[name]):
            _real(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


if _HOOKS:
    sys.meta_path.insert(0, _PostImportFinder())
