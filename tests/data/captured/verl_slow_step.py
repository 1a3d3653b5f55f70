"""Make exactly one verl SFT training step slow, without editing verl.

Loaded automatically by Python as `sitecustomize.py` in scripts/pyhooks, which is on PYTHONPATH.
Installs a meta-path finder that waits for `verl.workers.engine.base` to be
imported, then wraps `BaseEngine.train_batch` so that its N-th call
(N = SLOW_STEP, default 8, i.e. global step 8) sleeps SLOW_SECONDS (0.5 s)
before running. The sleep is inside verl's `Timer(name="train_batch")`
(verl/workers/engine_workers.py), so it lowers that step's `train/mfu`.
Validation uses `infer_batch`, which is not touched.
"""

import importlib.abc
import importlib.machinery
import os
import sys
import time

_TARGET = "verl.workers.engine.base"
_SLOW_STEP = int(os.environ.get("SLOW_STEP", "8"))
_SLOW_SECONDS = float(os.environ.get("SLOW_SECONDS", "0.5"))


def _patch(mod):
    cls = mod.BaseEngine
    orig = cls.train_batch
    state = {"calls": 0}

    def train_batch(self, *args, **kwargs):
        state["calls"] += 1
        if state["calls"] == _SLOW_STEP:
            time.sleep(_SLOW_SECONDS)
        return orig(self, *args, **kwargs)

    cls.train_batch = train_batch


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        orig_exec = loader.exec_module

        def exec_module(module):
            orig_exec(module)
            _patch(module)

        loader.exec_module = exec_module
        return spec


if _SLOW_STEP > 0:
    sys.meta_path.insert(0, _Finder())
