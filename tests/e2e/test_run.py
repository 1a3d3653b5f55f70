"""`ridgescope run` wraps any command: same output, same exit code, even with no broker."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid

import pytest
from support import cli

UNREACHABLE = "127.0.0.1:1"
NOISY = textwrap.dedent("""
    import sys, os
    print("hello from the job")
    sys.stdout.flush()
    os.write(1, b"raw bytes \\xff\\xfe and no newline")
    print("to stderr", file=sys.stderr)
    sys.exit(3)
""")


def our_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("[ridgescope]")]


def test_output_and_exit_code_pass_through_unchanged_with_no_broker(tmp_path):
    direct = subprocess.run([sys.executable, "-c", NOISY], capture_output=True)
    wrapped = subprocess.run(
        [sys.executable, "-m", "ridgescope.cli.main", "run", "--data-dir", str(tmp_path),
         "--broker", UNREACHABLE, "--job", "noisy", "--", sys.executable, "-c", NOISY],
        capture_output=True)
    assert wrapped.returncode == direct.returncode == 3
    assert wrapped.stdout == direct.stdout
    stderr = wrapped.stderr.decode()
    report = our_lines(stderr)
    assert [line for line in stderr.splitlines() if line not in report] == \
        direct.stderr.decode().splitlines()
    assert len(report) == 1 and "NOT delivered" in report[0]
    assert f"cannot reach broker {UNREACHABLE}" in report[0]
    assert list((tmp_path / "spool").glob("*.spool")), "undelivered events were not spooled"


def test_a_missing_command_is_exit_127_and_a_signal_is_128_plus(tmp_path):
    missing = cli("run", "--data-dir", str(tmp_path), "--broker", UNREACHABLE, "--",
                  "/nonexistent/cmd", check=False)
    assert missing.returncode == 127 and "cannot start" in missing.stderr
    killed = cli("run", "--data-dir", str(tmp_path), "--broker", UNREACHABLE, "--",
                 sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
                 check=False)
    assert killed.returncode == 128 + 15


@pytest.mark.torch
def test_the_hook_probe_reports_every_step_of_a_torch_job_with_no_broker(tmp_path):
    loop = textwrap.dedent("""
        import torch
        model = torch.nn.Linear(8, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = torch.utils.data.DataLoader(torch.randn(40, 8), batch_size=4)
        for x in loader:
            loss = model(x).pow(2).mean()
            opt.zero_grad(); loss.backward(); opt.step()
        print("trained")
    """)
    result = cli("run", "--data-dir", str(tmp_path), "--broker", UNREACHABLE, "--job", "tiny",
                 "--", sys.executable, "-c", loop, check=False)
    assert result.returncode == 0 and result.stdout == "trained\n"
    report = our_lines(result.stderr)[0]
    assert "job tiny: 10 probe events" in report  # one step summary per optimizer step


@pytest.mark.tansu
def test_spooled_events_are_delivered_by_the_next_run(tansu_stack):
    lost_job = f"offline-{uuid.uuid4().hex[:6]}"
    offline = cli("run", *tansu_stack.flags, "--broker", UNREACHABLE, "--job", lost_job, "--",
                  sys.executable, "-c", "print('step 1/1 loss 1.0 step_time_ms 5.0')")
    assert "NOT delivered" in offline.stderr
    online = cli("run", *tansu_stack.flags, "--job", "online", "--", sys.executable, "-c",
                 "print('ok')")
    assert "NOT delivered" not in online.stderr
    import time
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        rows = tansu_stack.sql(f"SELECT job, exit_code FROM jobs FINAL WHERE job = '{lost_job}'")
        if rows:
            break
        time.sleep(1)
    assert rows == [{"job": lost_job, "exit_code": 0}]


@pytest.mark.torch
def test_checkpoint_saves_are_wrapped_when_the_job_imports_them(tmp_path):
    script = textwrap.dedent("""
        import sys, torch
        print("dcp imported by torch:", "torch.distributed.checkpoint" in sys.modules)
        import torch.distributed.checkpoint as dcp
        from torch.distributed.checkpoint import save
        print(hasattr(torch.save, "__ridgescope_original__"),
              hasattr(dcp.save, "__ridgescope_original__"),
              hasattr(save, "__ridgescope_original__"))
    """)
    result = cli("run", "--data-dir", str(tmp_path), "--broker", UNREACHABLE, "--",
                 sys.executable, "-c", script, check=False)
    assert result.stdout.splitlines() == ["dcp imported by torch: False", "True True True"]
