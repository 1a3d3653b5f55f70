"""Step times from printed running means (`means.py`): pure arithmetic, no parser."""
from __future__ import annotations

from pytest import approx

from ridgescope.parsers.hf import RunMeans
from ridgescope.parsers.means import decimals, interval_mean, printed_mean


def test_decimals_are_those_printed():
    assert [decimals(v) for v in (0.1119, 0.5, 3.0, 1.59e-06, 436.1)] == [4, 1, 0, 8, 1]


def test_two_means_give_the_steps_between():
    """10 steps of mean 0.5 s, then 20 of mean 0.6 s: the 10 between took 0.7 s each."""
    assert interval_mean(printed_mean(10, 0.512345), printed_mean(20, 0.612345)) == approx(0.712345)
    assert interval_mean((0, 0.0, 0), printed_mean(1, 0.3798)) == approx(0.3798)   # the first mean
    assert interval_mean(printed_mean(20, 0.6), printed_mean(20, 0.6)) is None       # no step between
    assert printed_mean(0, 0.5) is None and printed_mean(5, -1.0) is None and printed_mean(5, True) is None


def test_too_few_digits_give_no_time():
    """At step 5000, four decimals leave +-0.25 s on a 0.51 s step: no time."""
    assert interval_mean(printed_mean(2, 0.5102), printed_mean(5000, 0.5101)) == approx(0.5101, abs=1e-4)
    assert interval_mean(printed_mean(5000, 0.5101), printed_mean(5001, 0.5101)) is None


def test_ms_swift_step_times_need_a_fresh_run():
    """A resumed run's mean counts from the step it resumed at, which its dicts do not say:
    where the second dict is not the first one's step past it, no time is given."""
    fresh = RunMeans()         # every 10 steps: the mean of the 10 since the last dict
    assert [fresh.step_time_ms(0, n, a) for n, a in ((10, 0.512345), (20, 0.612345), (30, 0.545678))] == [
        None, 712.345, 412.344]
    resumed = RunMeans()       # first logged at 30, then 40: resumed somewhere past step 10
    assert [resumed.step_time_ms(0, n, a) for n, a in ((30, 0.512345), (40, 0.612345))] == [None, None]
