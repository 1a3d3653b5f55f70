"""`ridgescope ingest` times each record from the log itself: here MLPerf BERT, whose lines carry
no timestamp prefix but whose printed dicts hold their own Unix time (`'timestamp': ...`)."""
from __future__ import annotations

from pathlib import Path

from pytest import approx

from ridgescope.cli.cmd_ingest import read_file, record_time

BERT = (Path(__file__).resolve().parents[1] / "data" / "corpus" / "multirank_prefixed"
        / "mlperf-v0.7_nvidia_bert_32node-512gpu_srun-labelled.log")


def test_record_time():
    assert record_time({"log_time_s": 1593108597.25}) == (1593108597250000000, True)
    assert record_time({"log_time_s": 1593108597.0}) == (1593108597000000000, False)
    assert record_time({"step": 3}) is None


def test_bert_steps_are_timed_by_their_printed_timestamps():
    result = read_file(str(BERT), None)
    assert result.timestamps == "printed" and result.records == 661
    by_step = {it.record["step"]: it for it in result.items}
    assert by_step[1].source == "log" and by_step[1].ts == approx(1593108596878098500, abs=1000)
    assert "step_time_ms" not in by_step[1].record           # nothing earlier to time it by
    # step 2's dict is printed 345.951 ms after step 1's
    assert by_step[2].record["step_time_ms"] == 345.951 and by_step[2].record["step_time_from_ts"]
    assert by_step[661].record["step_time_ms"] == 514.31      # the last step, slower
    assert all(it.record["ts_source"] == "log" for it in result.items)
