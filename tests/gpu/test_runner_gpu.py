"""`ridgescope run` on a machine with no GPU: the GPU probe goes quiet with one note."""
from __future__ import annotations

import sys

from ridgescope.probes import runner


def test_run_without_a_gpu_notes_it_once_and_passes_the_job_through(tmp_path, capfd,
                                                                  monkeypatch):
    monkeypatch.delenv("RIDGESCOPE_DEBUG", raising=False)
    result = runner.run([sys.executable, "-c", "print('job output')"], "nogpu", None,
                        tmp_path, hooks=False)
    assert result.exit_code == 0
    gpu_notes = [n for n in result.notes if "GPU" in n]
    assert len(gpu_notes) == 1 and "no NVIDIA GPU found" in gpu_notes[0]
    out, err = capfd.readouterr()
    assert out == "job output\n" and "GPU" not in err


def test_the_gpu_probe_can_be_switched_off(tmp_path, monkeypatch):
    monkeypatch.setenv("RIDGESCOPE_GPU", "0")
    result = runner.run([sys.executable, "-c", "pass"], "off", None, tmp_path,
                        hooks=False)
    assert result.exit_code == 0 and result.notes == []
