"""Inject one slow dataset-image load, without touching the training scripts.

What: makes the SLOW_LOAD_NTH-th image load in this process (1-based count)
sleep SLOW_LOAD_SECS seconds (default 0.5) before loading.  With --workers 0
loading happens in the main process, so the delay lands in the data-loading
time of exactly one training iteration.  Two hook points (SLOW_LOAD_HOOK):
  * "tv"  (default): wraps torchvision.datasets.folder.pil_loader, which is what
    torchvision's ImageFolder default_loader calls (looked up as a module
    global at call time, so patching the module attribute is enough).  The
    patch is applied right after torchvision.datasets.folder is imported, via a
    one-shot meta-path finder.
  * "pil": wraps PIL.Image.open (timm's ImageDataset calls Image.open(...)
    through the module attribute, so patching it is enough).
How:  (copied as sitecustomize.py into /tmp/cap-refs/scripts/slowload)
      PYTHONPATH=/tmp/cap-refs/scripts/slowload SLOW_LOAD_NTH=81 \
      [SLOW_LOAD_SECS=2] [SLOW_LOAD_HOOK=tv|pil] python train.py ...
      Nothing happens if SLOW_LOAD_NTH is unset or 0.  Python imports
      sitecustomize automatically at start-up when it is on sys.path.
"""
import importlib.abc
import importlib.util
import os
import sys
import time

_NTH = int(os.environ.get("SLOW_LOAD_NTH", "0"))
_SECS = float(os.environ.get("SLOW_LOAD_SECS", "0.5"))
_HOOK = os.environ.get("SLOW_LOAD_HOOK", "tv")


def _wrap(orig):
    state = {"n": 0}

    def wrapper(*args, **kwargs):
        state["n"] += 1
        if state["n"] == _NTH:
            time.sleep(_SECS)  # the one slow load
        return orig(*args, **kwargs)

    wrapper.__wrapped__ = orig
    return wrapper


class _Finder(importlib.abc.MetaPathFinder):
    """Patch torchvision.datasets.folder.pil_loader right after that module loads."""

    def find_spec(self, name, path, target=None):
        if name != "torchvision.datasets.folder":
            return None
        sys.meta_path.remove(self)  # one shot; also avoids recursion below
        spec = importlib.util.find_spec(name)
        if spec is None:
            return None
        orig_exec = spec.loader.exec_module

        def exec_module(module):
            orig_exec(module)
            module.pil_loader = _wrap(module.pil_loader)

        spec.loader.exec_module = exec_module
        return spec


if _NTH > 0:
    if _HOOK == "pil":
        from PIL import Image
        Image.open = _wrap(Image.open)
    else:
        sys.meta_path.insert(0, _Finder())
