"""`ridgescope up` with no broker given: the embedded Tansu broker, brought up, down and up again,
the way a returning user runs `ridgescope demo` a second time."""
from __future__ import annotations

import json

import pytest
from support import cli

from ridgescope.pipeline import stack, tansu


def status(flags) -> dict:
    return json.loads(cli("status", *flags, "--format", "json").stdout)


@pytest.mark.tansu
def test_up_down_up_starts_a_new_embedded_broker(tmp_path):
    data_dir = tmp_path / "rs"
    flags = ["--data-dir", str(data_dir)]
    up = ["up", *flags, "--web-port", str(tansu.free_port())]
    cli(*up)
    try:
        first = status(flags)
        assert first["broker_running"] and first["worker_running"]
        assert first["assigned_partitions"] > 0
    finally:
        cli("down", *flags)
    assert json.loads((data_dir / "config.json").read_text())["broker"] == ""
    assert not stack.reachable(first["broker"], timeout_s=1)

    cli(*up)        # before the fix: the worker looked for the stopped broker and exited
    try:
        second = status(flags)
        assert second["broker_running"] and second["worker_running"]
        assert second["assigned_partitions"] > 0
    finally:
        cli("down", *flags)


def test_up_names_a_configured_broker_that_does_not_answer(tmp_path):
    data_dir = tmp_path / "rs"
    data_dir.mkdir()
    gone = f"127.0.0.1:{tansu.free_port()}"
    (data_dir / "config.json").write_text(json.dumps({"broker": gone}))
    result = cli("up", "--data-dir", str(data_dir), check=False, timeout=60)
    assert result.returncode != 0
    assert f"nothing answers at the broker {gone}" in result.stderr
    assert not (data_dir / "stack.json").exists()
