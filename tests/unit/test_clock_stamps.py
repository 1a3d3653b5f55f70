"""Clock-only stamps (`cli/clock_stamps.py`): a log that prints the time of day and no date is
timed by it, its days counted back from when the file was last written."""
from __future__ import annotations

import calendar
import os

from ridgescope.cli.clock_stamps import DAY_NS, ClockDays, time_of_day
from ridgescope.cli.cmd_ingest import read_file

SECOND = 10**9


def test_time_of_day_at_a_lines_start_or_in_xlas_update():
    assert time_of_day("02:40:52 SUCCESS Step 0 | Time: 5.13s") == ((2 * 3600 + 40 * 60 + 52) * SECOND, False)
    assert time_of_day("[23:59:59.250] step 3 loss 2.5") == ((86_399 * SECOND) + 250_000_000, True)
    assert time_of_day("12:00:01 | INFO | step 7")[0] == (12 * 3600 + 1) * SECOND
    xla = "| Training Device=xla:0/3 Epoch=1 Step=280 Loss=0.01022 Rate=1769.73 GlobalRate=241.08 Time=20:52:27\n"
    assert time_of_day(xla) == ((20 * 3600 + 52 * 60 + 27) * SECOND, False)
    for line in ("eta 00:12:34 step 5", "24:00:00 step 1", "12:61:00 x", "12:00:00x", "1:02:03 step",
                 "step 5 [00:28<00:37, 150MB/s]", "Time=20:52:27 then more"):
        assert time_of_day(line) is None, line


def test_days_run_on_past_midnight_and_end_on_or_before_the_files_time():
    written = calendar.timegm((2026, 12, 6, 7, 0, 0)) * SECOND
    days = ClockDays(written)
    stamps = [days.place(t * SECOND) for t in (23 * 3600, 23 * 3600 + 1800, 600, 601, 5 * 3600)]
    assert [b - a for a, b in zip(stamps, stamps[1:])] == [1800 * SECOND, 2400 * SECOND, SECOND, (5 * 3600 - 601) * SECOND]
    shift = days.shift_ns()     # 05:00 of the 7th after the log's first day: a day back
    assert shift == -DAY_NS and stamps[0] + shift == calendar.timegm((2026, 12, 5, 23, 0, 0)) * SECOND
    # a clock that goes back by less than an hour (ranks' lines out of order) is the same day
    same = ClockDays(written)
    later = same.place(3601 * SECOND)
    assert same.place(3600 * SECOND) - later == -SECOND and same.days == 0
    assert ClockDays(written).shift_ns() == 0


def test_ingest_times_a_log_whose_lines_print_the_time_of_day_alone(tmp_path):
    """Steps that print no step time, every 30 s by a `%H:%M:%S` logger, over midnight: each
    step is the time since the last (whole seconds, 20 s or more apart), and the log ends on the
    day the file was written."""
    log = tmp_path / "train.log"
    clock = [(23, 59, 10), (23, 59, 40), (0, 0, 10), (0, 0, 55), (0, 1, 25)]
    log.write_text("".join(f"{h:02d}:{m:02d}:{s:02d} INFO step {i + 1} loss {3 - i / 10:.1f}\n"
                           for i, (h, m, s) in enumerate(clock)))
    written = calendar.timegm((2026, 12, 6, 7, 0, 0))
    os.utime(log, (written, written))
    result = read_file(str(log), None)
    steps = {it.record["step"]: it for it in result.items if it.record["kind"] == "progress"}
    assert sorted(steps) == [1, 2, 3, 4, 5] and {it.source for it in steps.values()} == {"log"}
    assert steps[1].ts == calendar.timegm((2026, 12, 5, 23, 59, 10)) * SECOND
    assert steps[5].ts == calendar.timegm((2026, 12, 6, 0, 1, 25)) * SECOND
    assert [steps[s].record.get("step_time_ms") for s in (2, 3, 4, 5)] == [30000, 30000, 45000, 30000]
    assert all(steps[s].record.get("step_time_from_ts") for s in (2, 3, 4, 5))


def test_xlas_updates_a_second_apart_stay_untimed_and_ingest_says_why():
    """PyTorch/XLA's `Time=` is to the second, its updates a second or two apart: dated, and
    still no step time; `ingest` says so rather than that the log prints no time."""
    from pathlib import Path

    from ridgescope.cli.cmd_ingest import untimed_steps
    xla = Path(__file__).resolve().parents[1] / "data" / "excerpts" / "pytorch-xla_test-train-mp-mnist_4-processes.log"
    result = read_file(str(xla), None)
    assert result.timestamps == "partly printed, the rest estimated"
    assert untimed_steps(result) == (
        "its 12 step records print no step time, and the log's timestamps are too coarse or too few to time them "
        "by (whole seconds time steps 20 s apart): they are stored (the progress table), but `steps` and "
        "`explain` will show none of its steps")


def test_clock_only_lines_before_the_first_date_printed_are_dated_by_it(tmp_path, capsys):
    """A launcher's `%H:%M:%S` lines, then the trainer's dated ones: the first lines fall on the
    day of the first date printed (the file was written a week later), not the file's day."""
    log = tmp_path / "train.log"
    log.write_text("23:59:30 INFO step 1 loss 3.0\n"
                   "00:00:00 INFO step 2 loss 2.9\n"
                   "2026-11-30 00:00:30,000 INFO step 3 loss 2.8\n"
                   "2026-11-30 00:01:00,000 INFO step 4 loss 2.7\n")
    written = calendar.timegm((2026, 12, 7, 12, 0, 0))
    os.utime(log, (written, written))
    result = read_file(str(log), None)
    steps = {it.record["step"]: it.ts for it in result.items if it.record["kind"] == "progress"}
    assert steps == {1: calendar.timegm((2026, 11, 29, 23, 59, 30)) * SECOND,
                     2: calendar.timegm((2026, 11, 30, 0, 0, 0)) * SECOND,
                     3: calendar.timegm((2026, 11, 30, 0, 0, 30)) * SECOND,
                     4: calendar.timegm((2026, 11, 30, 0, 1, 0)) * SECOND}
    assert "dated back from the first date it prints" in capsys.readouterr().err


def test_shift_moves_on_as_well_as_back_to_fall_within_the_day_before():
    written = calendar.timegm((2026, 12, 6, 7, 0, 0)) * SECOND
    days = ClockDays(written)
    placed = days.place(6 * 3600 * SECOND)
    for until in (written, written - 3 * DAY_NS, written + 2 * DAY_NS, placed):
        assert 0 <= until - (placed + days.shift_ns(until)) < DAY_NS
