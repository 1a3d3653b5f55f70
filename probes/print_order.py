"""Every rank's steps in one unlabelled stream: the log probe's and `ridgescope ingest`'s.

A job whose ranks all print their steps, passed on by a launcher that labels no line (torchrun
without `--tee`, `srun` without `--label`, one bar per node of a Slurm job), prints each step
once per rank, and no line says whose it is.  Taken as one rank's lines, the second print of a
step replaced the first, and a step slow on one rank alone could be lost (rank 1's 500 ms step
10 stored as rank 0's 50 ms).

Here the Kth print of a step goes to the Kth anonymous rank, so that every print is kept and
the step is judged by its longest print; so does the Kth print of a step's timing record.  The
Kth print is not the Kth rank's: which rank prints first changes from step to step, or from one
buffered block to the next.  So such records say `rank_from_print_order`, and the verdict names
no culprit for their steps.

A step printed again in a record of another shape (a bar's last state and the framework's own
line of the same step) is no repeat, and a restart begins the count again.  Steps more than
WINDOW behind the latest are forgotten: a run printed again into the same file long after
(a job started afresh, with no resume message) is not taken for another rank.
"""
from __future__ import annotations

import time

PLACED_KINDS = ("progress", "timing")
"""A step's own records, printed once by each rank: its progress line, and the timings some
frameworks print beside it (MindSpore's TimeMonitor under `msrun --join`, each worker's)."""

WINDOW = 4096
"""Steps behind the latest whose prints are still counted: more than ranks buffer apart."""


class PrintOrder:
    def __init__(self) -> None:
        self._prints: dict[tuple, int] = {}
        self._latest = 0
        self.repeated = False
        """Has any step's progress been printed twice: are the stream's ranks print orders?"""
        self.printers = 0
        """The most times any step's progress was printed: the ranks that print."""

    def place(self, record: dict) -> int | None:
        """The order of this record among the prints of its step: None for a record that print
        order puts on no rank of its own (not a step's progress or timing record, or a timing
        record printed more times than any step's progress: Megatron's one printing rank
        prints its timers twice a step)."""
        kind, step = record.get("kind"), record.get("step")
        if kind == "restart":
            self._prints.clear()
            return None
        if kind not in PLACED_KINDS or not isinstance(step, int):
            return None
        shape = (step, record.get("framework"), frozenset(record))
        order = self._prints.get(shape, 0)
        self._prints[shape] = order + 1
        if kind == "progress":
            self.repeated = self.repeated or order > 0
            self.printers = max(self.printers, order + 1)
        elif order >= self.printers:
            return None
        if step > self._latest:
            self._latest = step
            if len(self._prints) > 2 * WINDOW:
                self._prints = {k: v for k, v in self._prints.items() if k[0] > step - WINDOW}
        return order

HOLD_STEPS = 16
HOLD_S = 2.0
"""How many steps, and how long, the log probe holds a stream's first records back while it
waits to see whether any step is printed twice (see FirstPrints)."""


class FirstPrints:
    """The first records of a live unlabelled stream of a job of several ranks, held back until
    the stream shows whose prints they are.  Sent as they came, step 1's first print went out
    as the job's unplaced rank's (nothing had been printed twice yet), its second as rank 1's,
    and no rank had both: step 1 was judged apart from the rank it waited for.

    Held until a step is printed twice: then each held progress record was the first print of
    its step, the order-0 rank's.  Or until HOLD_STEPS steps or HOLD_S went by with no step
    printed twice, or the stream ends: one rank prints, and they stay the unplaced rank's.
    Each keeps the time it was read, and the order of all of them is kept."""

    def __init__(self) -> None:
        self.held: list[tuple[int, dict, int, bool]] = []
        """(rank, payload, read at ns, whether a print order may place it)"""
        self._steps: set[int] = set()
        self.since: float | None = None

    def hold(self, rank: int, payload: dict, ts_ns: int, placeable: bool) -> bool:
        """Keep one record; True once so many steps went by that no step is printed twice."""
        if self.since is None:
            self.since = time.monotonic()
        self.held.append((rank, payload, ts_ns, placeable))
        if placeable:
            self._steps.add(payload["record"]["step"])
        return len(self._steps) > HOLD_STEPS

    def wait_s(self) -> float | None:
        """How much longer to hold what is held (None: nothing is)."""
        return None if self.since is None else max(0.0, self.since + HOLD_S - time.monotonic())
