from __future__ import annotations

import argparse
import json

from ridgescope.cli import cmd_parse

from .conftest import CORPUS


def _args(argv):
    p = argparse.ArgumentParser()
    cmd_parse.register(p)
    return p.parse_args(argv)


def test_help_text_first_line():
    assert cmd_parse.__doc__.strip().splitlines()[0].startswith("Parse training logs")


def test_json_output(capsys):
    f = str(CORPUS / "torchtitan_nemo_nanogpt_etc/torchtitan_qwen3-14b_8xgpu_rank0_slow-step10_ansi.log")
    assert cmd_parse.run(_args([f, "--format", "json"])) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    prog = [r for r in rows if r["kind"] == "progress"]
    assert [r["step"] for r in prog] == list(range(1, 11))
    assert prog[9]["tokens_per_s"] == 560 and prog[9]["rank"] == 0


def test_table_output_and_forced_format(capsys, tmp_path):
    log = tmp_path / "spine.log"
    log.write_text("step 12/60 loss 2.3451 step_time_ms 153.2\nnoise\n")
    assert cmd_parse.run(_args([str(log), "--log-format", "generic"])) == 0
    out = capsys.readouterr().out
    assert "kind=progress" in out and "step=12" in out and "step_time_ms=153.2" in out
    assert "2 lines, 1 records, 0 garbage" in out


def test_table_names_the_exception(capsys, tmp_path):
    """torchrun's own traceback ends in `ChildFailedError: ` with no message: the table still
    says what was raised."""
    log = tmp_path / "crash.log"
    log.write_text("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
                   "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n====\n")
    assert cmd_parse.run(_args([str(log)])) == 0
    out = capsys.readouterr().out
    assert "error=traceback  exception=torch.distributed.elastic.multiprocessing.errors.ChildFailedError" in out


def test_missing_file(capsys, tmp_path):
    assert cmd_parse.run(_args([str(tmp_path / "nope.log"), "--format", "json"])) == 1
    assert "nope.log" in capsys.readouterr().err


def test_blocks_give_what_lines_give(capsys, monkeypatch):
    """`parse` feeds blocks; on a log larger than a block, every record is the one `feed` finds
    a line at a time, in order (checked with a small block, so that lines straddle reads)."""
    from .conftest import feed_all
    rel = "deepspeed/dschat_step1_sft_opt-1.3b_16proc.log"
    monkeypatch.setattr(cmd_parse, "BLOCK", 4099)
    assert cmd_parse.run(_args([str(CORPUS / rel), "--format", "json"])) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    want, _ = feed_all((CORPUS / rel).read_bytes().split(b"\n")[:-1])
    assert rows == json.loads(json.dumps(want, default=str))
    assert len(rows) > 1000 and {r["kind"] for r in rows} >= {"progress", "eval"}


def test_a_log_without_records_still_gets_its_summary(capsys, tmp_path):
    log = tmp_path / "quiet.log"
    log.write_bytes(b"hello\n\xff\xfe garbage\nbye")
    assert cmd_parse.run(_args([str(log)])) == 0
    assert capsys.readouterr().out == f"-- {log}: 3 lines, 0 records, 1 garbage, 0 timeouts\n"
