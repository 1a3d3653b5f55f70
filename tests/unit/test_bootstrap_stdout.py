"""`ridgescope run` makes a job's stdout line-buffered (probes/bootstrap/sitecustomize.py): in
every Python process of the job, hooks on or off, with or without ridgescope installed in the
job's environment, and without failing a process whose stdout is gone."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ridgescope.probes.runner import child_env

ASK = "import sys; print(sys.stdout.line_buffering)"
BASE_PYTHON = Path(sys.base_prefix) / "bin" / "python3"    # this venv's interpreter, no ridgescope


def job_env(tmp_path, hooks: bool = False) -> dict:
    env = child_env("job", tmp_path / "probe.sock", hooks=hooks)
    env["PYTHONUNBUFFERED"] = ""       # off, as in most shells
    return env


def ask(python, env) -> str:
    return subprocess.run([str(python), "-c", ASK], env=env, capture_output=True, text=True,
                          timeout=60, check=True).stdout


def test_the_jobs_python_writes_each_line_as_it_is_printed(tmp_path):
    assert ask(sys.executable, job_env(tmp_path)) == "True\n"
    assert ask(sys.executable, job_env(tmp_path, hooks=True)) == "True\n"
    outside = {**job_env(tmp_path), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    assert ask(sys.executable, outside) == "False\n"     # a pipe, outside `ridgescope run`
    assert ask(sys.executable, {**job_env(tmp_path), "RIDGESCOPE_LINE_BUFFER": "0"}) == "False\n"


@pytest.mark.skipif(not BASE_PYTHON.exists(), reason="no base interpreter beside the venv")
def test_an_environment_without_ridgescope_gets_it_too(tmp_path):
    env = job_env(tmp_path)
    probe = subprocess.run([str(BASE_PYTHON), "-c", "import ridgescope"], env=env,
                           capture_output=True, timeout=60)
    assert probe.returncode != 0      # the job's own environment: no hook probe there
    assert ask(BASE_PYTHON, env) == "True\n"


def test_a_process_whose_stdout_is_closed_runs_on(tmp_path):
    done = subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write(repr(sys.stdout))"],
                          env=job_env(tmp_path), stderr=subprocess.PIPE, text=True, timeout=60,
                          preexec_fn=lambda: os.close(1))
    assert done.returncode == 0 and done.stderr == "None", done.stderr
