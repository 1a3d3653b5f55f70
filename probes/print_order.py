"""Every rank's steps in one unlabelled stream: the log probe's and `ridgescope ingest`'s.

A job whose ranks all print their steps, passed on by a launcher that labels no line (torchrun
without `--tee`, `srun` without `--label`, one bar per node of a Slurm job), prints each step
once per rank, and no line says whose it is.  Taken as one rank's lines, the second print of a
step replaced the first, and a step slow on one rank alone could be lost (rank 1's 500 ms step
10 stored as rank 0's 50 ms).

Here the Kth print of a step goes to the Kth anonymous rank, so that every print is kept and
the step is judged by its longest print.  The Kth print is not the Kth rank's: which rank
prints first changes from step to step, or from one buffered block to the next.  So such
records say `rank_from_print_order`, and the verdict names no culprit for their steps.

A step printed again in a record of another shape (a bar's last state and the framework's own
line of the same step) is no repeat, and a restart begins the count again.  Steps more than
WINDOW behind the latest are forgotten: a run printed again into the same file long after
(a job started afresh, with no resume message) is not taken for another rank.
"""
from __future__ import annotations

WINDOW = 4096
"""Steps behind the latest whose prints are still counted: more than ranks buffer apart."""


class PrintOrder:
    def __init__(self) -> None:
        self._prints: dict[tuple, int] = {}
        self._latest = 0
        self.repeated = False
        """Has any step been printed twice: are the stream's ranks print orders?"""

    def place(self, record: dict) -> int:
        """The order of this record among the prints of its step (0: the first, or not a
        step's progress record)."""
        kind, step = record.get("kind"), record.get("step")
        if kind == "restart":
            self._prints.clear()
            return 0
        if kind != "progress" or not isinstance(step, int):
            return 0
        shape = (step, record.get("framework"), frozenset(record))
        order = self._prints.get(shape, 0)
        self._prints[shape] = order + 1
        self.repeated = self.repeated or order > 0
        if step > self._latest:
            self._latest = step
            if len(self._prints) > 2 * WINDOW:
                self._prints = {k: v for k, v in self._prints.items() if k[0] > step - WINDOW}
        return order
