"""Step times from a running mean that a framework prints instead of the step's own time.

ms-swift prints the mean step since training began (`train_speed(s/it)`), Detectron2 up to
0.6 the mean iteration time since its timer's warm-up (`time: 0.4361`).  Two such means, of
`count_m` and `count_n` steps, give the mean of the steps between them:

    (count_n * mean_n - count_m * mean_m) / (count_n - count_m)

which is the step's own time where every step is printed.  The printed digits bound what the
difference can say: a result less sure than 5% is not given."""
from __future__ import annotations

DOUBT = 0.05
"""The largest uncertainty, from the printed digits, of a result given, relative to it."""


def decimals(v: float) -> int:
    """The decimals `v` was printed with (0.1119: 4): a printed mean is only that precise."""
    for k in range(12):
        if round(v, k) == v:
            return k
    return 12


def printed_mean(count: int, mean) -> tuple[int, float, int] | None:
    """(count, mean, its decimals) of a mean over `count` steps; None for no usable mean."""
    if count < 1 or isinstance(mean, bool) or not isinstance(mean, (int, float)) or mean <= 0:
        return None
    return count, float(mean), decimals(mean)


def interval_mean(before: tuple[int, float, int], now: tuple[int, float, int]) -> float | None:
    """The mean step between two printed means (see `printed_mean`), in their unit; None where
    there is no step between them or the printed digits leave it too unsure."""
    (m, mean_m, dm), (n, mean_n, dn) = before, now
    if n <= m:
        return None
    mean = (n * mean_n - m * mean_m) / (n - m)
    doubt = (n * 0.5 * 10.0 ** -dn + m * 0.5 * 10.0 ** -dm) / (n - m)
    if mean <= 0 or doubt > DOUBT * mean:
        return None
    return mean
