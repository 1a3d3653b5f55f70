"""RidgeScope bootstrap: `ridgescope run` puts this folder first on PYTHONPATH.

It stays tiny: make stdout line-buffered, arm the probes, then run the user's own
sitecustomize, if any.
"""
import os
import sys


def _line_buffered_stdout():
    """Python block-buffers stdout into a pipe or a file (torchrun's `--tee`): a loop's plain
    `print`s reached the log probe 8 KiB at a time, a short job's all at its exit, and steps
    timed by when their line was read were timed by the buffer.  As on a terminal, each line
    is passed on as it is printed, in one write.  Here, not in the probes: an environment
    without ridgescope installed (no hook probe) still has its stdout read."""
    if os.environ.get("RIDGESCOPE_LINE_BUFFER") == "0":
        return      # the user's choice (probes/env.py)
    try:
        if sys.stdout is not None and not sys.stdout.line_buffering:
            sys.stdout.reconfigure(line_buffering=True)
    except Exception:  # noqa: BLE001 - a replaced stdout: leave it as it is
        pass


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


_line_buffered_stdout()
_ridgescope_bootstrap()
del _line_buffered_stdout, _ridgescope_bootstrap
