"""`ridgescope run` makes a job's stdout line-buffered (probes/preload.py), and never fails the job
where stdout was replaced by something else."""
from __future__ import annotations

import io
import os
import subprocess
import sys

from ridgescope.probes import env, preload
from ridgescope.probes.runner import child_env


def test_a_block_buffered_stdout_passes_each_line_on_as_it_is_printed(monkeypatch):
    raw = io.BytesIO()
    stdout = io.TextIOWrapper(raw, encoding="utf-8")     # as Python opens a pipe: block-buffered
    monkeypatch.setattr(sys, "stdout", stdout)
    preload.line_buffered_stdout()
    print("step 1/3 loss 2.5")
    assert raw.getvalue() == b"step 1/3 loss 2.5\n"


def test_a_replaced_stdout_is_left_as_it_is(monkeypatch):
    class Tee:
        def write(self, text):
            return len(text)
    tee = Tee()
    monkeypatch.setattr(sys, "stdout", tee)
    preload.line_buffered_stdout()
    monkeypatch.setattr(sys, "stdout", None)
    preload.line_buffered_stdout()


def test_the_jobs_python_gets_it_with_hooks_off(tmp_path):
    """The bootstrap on PYTHONPATH, stdout a pipe, PYTHONUNBUFFERED off."""
    child = child_env("job", tmp_path / "probe.sock", hooks=False)
    child["PYTHONUNBUFFERED"] = ""
    assert child[env.HOOKS] == "0"
    out = subprocess.run([sys.executable, "-c", "import sys; print(sys.stdout.line_buffering)"],
                         env=child, capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout == "True\n"
    without = {k: v for k, v in child.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", "import sys; print(sys.stdout.line_buffering)"],
                         env={**without, "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout == "False\n"
