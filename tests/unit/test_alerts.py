"""The alert of a slow step: a one-line message a human can act on (pipeline/sink_rows.py)."""
from __future__ import annotations

from ridgescope.pipeline.sink_rows import alert_payload


def test_an_alert_of_an_evaluation_step_says_an_evaluation_ran():
    verdict = {"step": 17, "duration_ms": 1812.0, "excess_ms": 1600.0, "baseline_ms": 210.0,
               "cause": "input", "culprit_rank": 0, "phase": "eval"}
    assert alert_payload(verdict)["message"] == (
        "step 17 took 1812 ms, 1600 ms over its 210 ms baseline: input on rank 0 "
        "(an evaluation ran in the step)")
    assert alert_payload(dict(verdict, phase="normal"))["message"].endswith("input on rank 0")
