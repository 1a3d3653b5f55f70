"""RidgeScope bootstrap: `ridgescope run` puts this folder first on PYTHONPATH.

It stays tiny: arm the probes, then run the user's own sitecustomize, if any.
"""
import os
import sys


def _ridgescope_bootstrap():
    try:
        from ridgescope.probes import preload
        preload.start()
    except Exception:  # noqa: BLE001 - never break the user's interpreter
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        import importlib.machinery
        import importlib.util
        others = [p for p in sys.path if os.path.abspath(p or ".") != here]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
        if spec is not None and spec.origin and os.path.dirname(spec.origin) != here:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
    except Exception:  # noqa: BLE001
        pass


_ridgescope_bootstrap()
del _ridgescope_bootstrap
