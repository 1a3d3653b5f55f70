"""CPU platform plugin for verl 0.9.1 (no edits to the installed package).

verl 0.9.1 registers only nvidia/npu/rocm platforms and falls back to 'nvidia'
(device 'cuda', backend 'nccl') when no accelerator is found. This module uses
verl's documented extension hooks:
  * VERL_USE_EXTERNAL_MODULES=verl_cpu_platform  -> verl/__init__.py imports this module
  * @PlatformRegistry.register(platform="cpu")    -> adds a 'cpu' platform
  * VERL_PLATFORM=cpu                              -> selects it in get_platform()
Device name 'cpu', collective backend 'gloo'; memory queries return 0.
"""

import types
from contextlib import contextmanager

import torch

from verl.plugin.platform import PlatformBase, PlatformRegistry


class _CpuDeviceModule(types.ModuleType):
    """torch.cpu plus no-op stand-ins for the torch.cuda API verl calls."""

    def __init__(self):
        super().__init__("verl_cpu_device")

    def __getattr__(self, name):
        if hasattr(torch.cpu, name):
            return getattr(torch.cpu, name)
        if name in ("manual_seed", "manual_seed_all"):
            return lambda seed: torch.manual_seed(seed)
        if name in ("get_rng_state",):
            return lambda *a, **k: torch.get_rng_state()
        if name in ("set_rng_state",):
            return lambda state, *a, **k: torch.set_rng_state(state)
        if name == "get_device_name":
            # verl.utils.flops_counter.get_device_flops matches this against its table ("CPU" entry)
            return lambda *a, **k: "CPU"
        if name == "mem_get_info":
            return lambda *a, **k: (0, 0)
        if name in ("memory_allocated", "memory_reserved", "max_memory_allocated", "max_memory_reserved"):
            return lambda *a, **k: 0
        # everything else (empty_cache, reset_peak_memory_stats, ipc_collect, ...) is a no-op
        return lambda *a, **k: None


_CPU_MOD = _CpuDeviceModule()


@PlatformRegistry.register(platform="cpu")
class PlatformCPU(PlatformBase):
    @property
    def device_name(self):
        return "cpu"

    @property
    def vendor_name(self):
        return "cpu"

    @property
    def device_module(self):
        return _CPU_MOD

    def is_available(self):
        return True

    def is_platform_available(self, use_smi_check=False):
        return True

    def current_device(self):
        # verl uses get_device_id() directly as a torch device (tensor.to(get_device_id())),
        # so return the device string, not an index (an int would mean cuda:N).
        return "cpu"

    def device_count(self):
        return 1

    def set_device(self, device_index):
        pass

    def synchronize(self, device_index=None):
        pass

    def manual_seed(self, seed):
        torch.manual_seed(seed)

    def manual_seed_all(self, seed):
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings):
        pass

    def empty_cache(self):
        pass

    def get_device_capability(self, device_index=0):
        return None, None

    def communication_backend_name(self):
        return "gloo"

    def visible_devices_envvar(self):
        return "CUDA_VISIBLE_DEVICES"

    @contextmanager
    def nvtx_range(self, msg):
        yield

    def profiler_start(self):
        pass

    def profiler_stop(self):
        pass

    def ray_resource_name(self):
        return "CPU"

    def ray_noset_envvars(self):
        return []

    def is_ipc_supported(self):
        return False

    def cudart(self):
        return None


# verl.utils.distributed.initialize_global_process_group builds the backend string
# f"cpu:gloo,{device}:{backend}", which becomes "cpu:gloo,cpu:gloo" with device 'cpu'
# and torch rejects duplicate device types. Collapse duplicates before torch sees it.
import torch.distributed as _dist  # noqa: E402

_orig_init_pg = _dist.init_process_group


def _init_process_group_dedup(*args, **kwargs):
    backend = kwargs.get("backend")
    if isinstance(backend, str) and "," in backend:
        parts = list(dict.fromkeys(p.strip() for p in backend.split(",")))
        kwargs["backend"] = ",".join(parts)
    return _orig_init_pg(*args, **kwargs)


_dist.init_process_group = _init_process_group_dedup
