"""A rank's steps printed on both of a job's pipes are timed from one (probes/step_streams.py)."""
from __future__ import annotations

from ridgescope.pipeline import windows
from ridgescope.probes.step_streams import StepStreams

MS = 1_000_000


def payload(stream: str, step: int, drawn_ms: int | None = None, step_time_ms: float | None = None,
            kind: str = "progress") -> dict:
    record = {"kind": kind, "framework": "ignite", "rank": 0, "step": step}
    if drawn_ms is not None:
        record["drawn_ns"] = drawn_ms * MS
    if step_time_ms is not None:
        record["step_time_ms"] = step_time_ms
    return {"record": record, "stream": stream}


def test_the_first_pipe_to_give_a_rank_a_step_times_it():
    streams = StepStreams()
    assert "timed_elsewhere" not in streams.mark(0, payload("stderr", 2, 10))
    assert streams.mark(0, payload("stdout", 10, 30))["timed_elsewhere"] is True
    assert "timed_elsewhere" not in streams.mark(1, payload("stdout", 10, 30)), "each rank apart"
    assert "timed_elsewhere" not in streams.mark(0, payload("stdout", 10, kind="eval")), "steps only"
    assert "timed_elsewhere" not in streams.mark(0, payload("stderr", 3, 12))


def test_a_record_timed_by_the_other_pipes_bar_never_times_the_rank():
    """HF's dicts on stdout, numbered from their epochs while its bar draws on stderr, may be read
    before the bar's first step: they still make no window."""
    streams = StepStreams()
    by_bar = payload("stdout", 2, 10)
    by_bar["record"]["timed_by_bar"] = True
    assert streams.mark(0, by_bar)["timed_elsewhere"] is True
    assert "timed_elsewhere" not in streams.mark(0, payload("stderr", 2, 11))
    assert streams.mark(0, by_bar)["timed_elsewhere"] is True


def test_a_pipe_that_prints_its_step_times_takes_the_rank_over_from_read_times():
    streams = StepStreams()
    streams.mark(0, payload("stderr", 2, 10))
    assert "timed_elsewhere" not in streams.mark(0, payload("stdout", 2, step_time_ms=120.0))
    assert streams.mark(0, payload("stderr", 3, 12))["timed_elsewhere"] is True
    assert streams.mark(0, payload("stderr", 4, step_time_ms=118.0))["timed_elsewhere"] is True


def envelope(p: dict, ts_ms: int) -> dict:
    return {"v": 1, "kind": "progress", "job": "j", "rank": 0, "host": "h", "ts_ns": ts_ms * MS, "seq": 0,
            "p": dict(p, world_size=1)}


def test_a_print_read_before_the_bars_earlier_steps_leaves_their_windows_whole():
    """As a live Ignite job's reached the pipeline: its bar (stderr) gives steps 66 and 67,
    iteration 68 loads a slow sample (500 ms), and the example's print of 70 (stdout) is read
    just before the bar's 68-70.  Marked, the print makes no window: 68 is its own slow step.
    Unmarked, the print opens 70 first, and the bar's 68 then makes no window: the stall is lost."""
    arrivals = [("stderr", 66, 1000), ("stderr", 67, 1002), ("stdout", 70, 1508),
                ("stderr", 68, 1504), ("stderr", 69, 1506), ("stderr", 70, 1508), ("stderr", 71, 1510)]

    def windows_of(streams: StepStreams | None) -> list[tuple]:
        state, rows = windows.new_rank_state(), []
        for stream, step, drawn_ms in arrivals:
            p = payload(stream, step, drawn_ms)
            p = streams.mark(0, p) if streams is not None else p
            state, out = windows.correlate(state, envelope(p, drawn_ms + 1))
            rows += out
        state, out = windows.correlate(state, {**envelope({}, 2000), "kind": "job_end", "p": {"exit_code": 0}})
        return [(r["step"], r["duration_ms"]) for r in rows + out]

    assert windows_of(StepStreams()) == [(67, 2.0), (68, 502.0), (69, 2.0), (70, 2.0), (71, 2.0)]
    assert windows_of(None) == [(67, 2.0), (69, 2.0), (70, 2.0), (71, 2.0)]
