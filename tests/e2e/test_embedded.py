"""`ridgescope up` with no broker given: the embedded Tansu broker, brought up, down and up again,
the way a returning user runs `ridgescope demo` a second time."""
from __future__ import annotations

import json

import pytest
from support import cli

from ridgescope.pipeline import stack, tansu


def status(flags) -> dict:
    return json.loads(cli("status", *flags, "--format", "json").stdout)


def up_check_down(up: list[str], flags: list[str]) -> dict:
    """`up`, check that the broker and the worker run, `down` (also on failure); the status."""
    cli(*up)
    try:
        state = status(flags)
        assert state["broker_running"] and state["worker_running"]
        assert state["assigned_partitions"] > 0
    finally:
        cli("down", *flags)
    return state


@pytest.mark.tansu
def test_up_down_up_starts_a_new_embedded_broker(tmp_path):
    data_dir = tmp_path / "rs"
    flags = ["--data-dir", str(data_dir)]
    up = ["up", *flags, "--web-port", str(tansu.free_port())]
    first = up_check_down(up, flags)
    assert json.loads((data_dir / "config.json").read_text())["broker"] == ""
    assert not stack.reachable(first["broker"], timeout_s=1)
    # before the fix: the worker looked for the stopped broker and exited
    up_check_down(up, flags)


def test_up_names_a_configured_broker_that_does_not_answer(tmp_path):
    data_dir = tmp_path / "rs"
    data_dir.mkdir()
    gone = f"127.0.0.1:{tansu.free_port()}"
    (data_dir / "config.json").write_text(json.dumps({"broker": gone}))
    result = cli("up", "--data-dir", str(data_dir), check=False, timeout=60)
    assert result.returncode != 0
    assert f"nothing answers at the broker {gone}" in result.stderr
    assert not (data_dir / "stack.json").exists()


@pytest.mark.tansu
def test_a_second_stack_on_a_taken_port_says_whose_it_is(tmp_path):
    """Two stacks on one host, one query API port: the second's worker died on the port while
    the first's worker answered its readiness check, so `up` said it was up, and the demo
    waited for steps that no worker judged.  Now `up` names who holds the port and starts
    nothing."""
    port = str(tansu.free_port())
    first = ["--data-dir", str(tmp_path / "first")]
    cli("up", *first, "--web-port", port)
    try:
        pid = status(first)["worker_pid"]
        second = ["--data-dir", str(tmp_path / "second")]
        result = cli("up", *second, "--web-port", port, check=False, timeout=60)
        assert result.returncode != 0
        assert f"port {port}, the worker's query API, is taken by the worker of another stack (pid {pid}," in result.stderr
        assert not (tmp_path / "second" / "stack.json").exists()
    finally:
        cli("down", *first)
