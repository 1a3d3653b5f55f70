"""What the bootstrap runs in every Python process of a job started by `ridgescope run`.

It does nothing until ``torch`` is imported: then it arms the hook probe.  Every step sits in
one guard; ``loaded`` tells whether it armed.  It never raises into the job.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import os
import socket
import sys

from ridgescope.probes import env
from ridgescope.probes.base import debug

loaded = False
_channel = None
_torch_probe = None
_cuda_trace = None


def _channel_for_this_process():
    global _channel
    if _channel is None:
        from ridgescope.probes.channel import Channel
        from ridgescope.probes.ranks import placement
        rank = max(placement(os.environ, lambda: sys.orig_argv)[0], 0)   # no launcher: rank 0
        _channel = Channel(os.environ[env.SOCKET], os.environ.get(env.JOB, "job"), rank,
                           socket.gethostname())
        import atexit
        atexit.register(_channel.flush)
    return _channel


def _emit(kind: str, payload: dict, ts_ns: int | None = None) -> None:
    _channel_for_this_process().emit(kind, payload, ts_ns)


def _on_torch_imported() -> None:
    global loaded, _torch_probe
    try:
        from ridgescope.probes.torch_hooks import TorchHookProbe
        _torch_probe = TorchHookProbe()
        loaded = _torch_probe.instrument(emit=_emit)
    except Exception as exc:  # noqa: BLE001
        debug(f"hook probe not armed: {exc}")
    if loaded:
        from ridgescope.probes.torch_hooks import DCP_MODULE
        if DCP_MODULE not in sys.modules:
            sys.meta_path.insert(0, _ImportWatcher(DCP_MODULE, _on_dcp_imported))
        _arm_cuda_trace()


def _arm_cuda_trace() -> None:
    """The CUPTI tier, next to the hook probe; the hook tier works whether it arms or not."""
    global _cuda_trace
    try:
        from ridgescope.probes.cuda_trace import arm_in_rank
        _cuda_trace = arm_in_rank(_emit, _torch_probe.recorder)
    except Exception as exc:  # noqa: BLE001
        debug(f"CUDA trace tier not armed: {type(exc).__name__}: {exc}")
        _cuda_trace = None
    if _cuda_trace is not None:
        import atexit
        atexit.register(_flush_cuda_trace)


def _flush_cuda_trace() -> None:
    """At exit: the last step's summary, held back for its GPU spans, then the channel."""
    try:
        _torch_probe.recorder.flush_held()
        _cuda_trace.close()
        if _channel is not None:
            _channel.flush()
    except Exception:  # noqa: BLE001
        pass


class _ImportWatcher(importlib.abc.MetaPathFinder):
    """Wraps a module's loader so a callback runs right after the module is imported."""

    def __init__(self, name: str, callback):
        self.name, self.callback = name, callback

    def find_spec(self, name, path, target=None):
        if name != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_arm(module):
            exec_module(module)
            self.callback()
        spec.loader.exec_module = exec_and_arm
        return spec


def _on_dcp_imported() -> None:
    try:
        _torch_probe.patch_dcp()
    except Exception as exc:  # noqa: BLE001
        debug(f"checkpoint hooks not armed: {exc}")


def start() -> None:
    """Arm the probes that apply to this process."""
    if not os.environ.get(env.SOCKET) or os.environ.get(env.HOOKS) == "0":
        return
    if "torch" in sys.modules:
        _on_torch_imported()
    else:
        sys.meta_path.insert(0, _ImportWatcher("torch", _on_torch_imported))
