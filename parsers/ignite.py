"""PyTorch-Ignite's own output: its `ProgressBar` (tqdm, with its own bar format) and its
engines' logger, plus the lines its MNIST examples print (`printers.ignite_example`).

The bar of a trainer of more than one epoch, redrawn with `\\r`:

    Epoch [2/3]: [10/469]   2%|▏         , loss=0.31 [00:01<01:02]

its count an epoch's iteration (a run of one epoch, or the bar of another engine, says
`Iteration: [10/469]`), its postfix what `output_transform` or the metrics give.  Each epoch's
bar first draws `[1/469]   2%|...` before its description is set: skipped.

The count lags the iterations by one.  As iteration k ends, the bar redraws with the count
still at k-1: once for its description, once for its postfix (iteration k's loss); only then
does the count move to k, drawn at once only where 0.1 s have passed since tqdm last drew (a
slow iteration), else with the next redraws, as iteration k+1 ends.  So a count's last redraw
is the end of the iteration after it, with that iteration's loss: the record of a count m is
step m+1 (the epoch's last, m = the epoch's length, step m), at the time of that redraw.  The
first iteration of each epoch (drawn under the count 1 that the bar starts at) has none.
Where a rank draws a bar, its prints of steps give none: the bar shows more, and the prints
come on another pipe, early or late.

An engine given a logger (`ignite.utils.setup_logger`) logs `Engine run starting with
max_epochs=3.` (or `resuming from iteration 940, epoch 2 until 5 epochs`), `Epoch[1] Complete.
Time taken: 00:00:05.123` and `Engine run finished. Time taken: 00:00:15.456`.  An engine whose
run starts and finishes inside another's is an evaluator run by the trainer's handlers (it
starts, then finishes before the trainer's epoch does): an evaluation, with its time.  A run's
restart is the event parser's (`resuming from iteration`).
"""
from __future__ import annotations

from . import printers
from .base import (CLOCK, EVAL_WORDS, OWN_BAR, Parser, Pattern, drawn, hms_to_s, parsed, postfix_items,
                   record, same_step, seconds_to_ms)
from .lightning import postfix_fields

BAR = Pattern(r"(?:([^\[\]]{0,80}?) \[(\d{1,9}+)/(\d{1,9}+)\]: |([^\[\]]{1,80}?): )?\[(\d{1,15}+)/(\d{1,15}+|\?)\]"
              r" {1,4}+\d{1,3}+%\|[^,\[]{0,400}+(?:, ([^\[]{0,2000}+))?+\[([\d:]{1,12}+)<[\d:?]{1,12}+\]")
_OWN_BAR = OWN_BAR | {"epoch", "iter_in_epoch", "iters_per_epoch"}
"""What the bar's label and counts give: a metric logged as `epoch` gives way."""
_TOOK = Pattern(r"Time taken: (\d{1,6}+):(\d\d):(\d\d(?:\.\d{1,6}+)?+)")
STARTED = ("Engine run starting with max_", "Engine run resuming from iteration ")
_ENDED = ("Engine run finished. Time taken: ", "Engine run is terminating due to exception")


class IgniteParser(Parser):
    name = "ignite"

    def __init__(self) -> None:
        self.held: dict = {}
        """rank -> the trainer's bar as last redrawn (its record is given when the count moves on)"""
        self.given: dict = {}
        """rank -> the last step given: a bar's step may come after a print gave a later one"""
        self.last_step: dict = {}
        self.epoch_length: dict = {}
        self.epochs_seen: set = set()
        """the ranks whose trainer's bar counts epochs: a bar without one is another engine's"""
        self.single: dict = {}
        """rank -> the length of the first single-epoch bar, the trainer's where none counts epochs"""
        self.bar_ranks: set = set()
        """the ranks whose trainer draws a bar: it shows more steps than the prints, which, on
        another pipe (stdout; the bar's is stderr), may come before or after its redraws"""
        self.depth: dict = {}
        """rank -> how many engine runs are open (a logged one inside another is an evaluation)"""

    def detect(self, line: str) -> bool:
        if "%|" in line:
            return ("]: [" in line or line.startswith("Iteration: [")) and BAR.search(line) is not None
        return "Engine run " in line and (STARTED[0] in line or STARTED[1] in line)

    def owns(self, line: str) -> bool:
        """Every redraw of its bar (most give no record), and the examples' lines and the
        engines' it reads: a print of a step the bar gave already (prints to a pipe come late,
        in blocks) is given by no other parser."""
        if "%|" in line:
            return ": [" in line or line.lstrip().startswith("[")
        return "] Iteration[" in line or " Results - Epoch: " in line or "Engine run " in line

    def parse(self, line: str, rank: int | None) -> list[dict]:
        out: list = []
        rest = line
        if "%|" in line:
            m = BAR.search(line)
            if m is not None:
                self._bar(m, rank, out)
                rest = line[m.end():]
                if not rest.strip():
                    return out
        if "Engine run " in rest:
            self._engine(rest, rank, out)
            return out
        recs = printers.ignite_example(rest, rank, self.last_step, self.epoch_length)
        for rec in recs or ():
            if rec["step"] is not None:
                self._ahead_of(rank, rec["step"], out)
            if rec["kind"] == "progress":
                if rank not in self.bar_ranks:
                    self._give(rec, out)
            else:
                out.append(rec)
        return out

    def flush(self) -> list[dict]:
        out: list = []
        for rank in list(self.held):
            self._give_held(rank, out)
        return out

    def place_events(self, recs: list[dict], rank) -> list[dict]:
        """A restart comes after the step its bar last drew before it (the run it ends)."""
        if not any(r["kind"] == "restart" for r in recs):
            return recs
        out: list = []
        self._give_held(rank, out)
        return out + recs

    def note_restart(self, rank, step: int) -> None:
        """The resumed run's steps are given again from `step` on."""
        self.given[rank] = step

    def _bar(self, m, rank, out: list) -> None:
        desc = (m.group(1) or m.group(4) or "").strip()
        if not desc or any(w in desc for w in EVAL_WORDS):
            return      # an epoch's first draw, before its description; an evaluator's bar
        n, total = int(m.group(5)), m.group(6)
        bar = {"n": n, "total": int(total) if total != "?" else None, "elapsed_s": hms_to_s(m.group(8)),
               "post": postfix_items(m.group(7) or "")}
        if m.group(2) is not None:
            self.epochs_seen.add(rank)
            bar["epoch"] = int(m.group(2))
            if bar["total"]:
                self.epoch_length[rank] = bar["total"]      # where an epoch's results are
        elif rank in self.epochs_seen or self.single.setdefault(rank, bar["total"]) != bar["total"]:
            return      # another engine's bar (an evaluator's run is one epoch)
        self.bar_ranks.add(rank)
        if CLOCK.now_ns is not None:
            bar["drawn_ns"] = CLOCK.now_ns
        done = self.held.get(rank)
        self.held[rank] = bar
        if done is not None and not same_step(done, bar):
            self._give(self._bar_record(rank, done), out)

    def _bar_record(self, rank, bar: dict) -> dict:
        epoch, total, n = bar.get("epoch"), bar["total"], bar["n"]
        in_epoch = n if n == total else n + 1
        step = (epoch - 1) * total + in_epoch if epoch and total else in_epoch
        fields = postfix_fields(bar["post"])
        return record("progress", self.name, rank, step, epoch=epoch, iter_in_epoch=in_epoch,
                      iters_per_epoch=total, elapsed_s=bar["elapsed_s"], **parsed(fields, _OWN_BAR), **drawn(bar))

    def _ahead_of(self, rank, step: int, out: list) -> None:
        """A print at `step`: the bar's held step, if not later, is given first, so that steps
        (and an epoch's results after its steps) stay in order."""
        held = self.held.get(rank)
        if held is not None:
            rec = self._bar_record(rank, held)
            if rec["step"] <= step:
                self._give(rec, out)

    def _give_held(self, rank, out: list) -> None:
        """Give the record of the rank's held bar now: no redraw of its count comes after."""
        held = self.held.pop(rank, None)
        if held is not None:
            self._give(self._bar_record(rank, held), out)

    def _give(self, rec: dict, out: list) -> None:
        rank, step = rec["rank"], rec["step"]
        if step <= self.given.get(rank, 0):
            return      # given already, by the bar or by a print
        self.given[rank] = self.last_step[rank] = step
        out.append(rec)

    def _engine(self, line: str, rank, out: list) -> None:
        depth = self.depth.get(rank, 0)
        if any(s in line for s in STARTED):
            self.depth[rank] = depth + 1
            if depth >= 1:      # run by a handler of the trainer's, after the bar's redraws of the step
                self._give_held(rank, out)
                out.append(record("eval", self.name, rank, self.last_step.get(rank), phase="start"))
            return
        if not any(e in line for e in _ENDED):
            return
        self.depth[rank] = max(depth - 1, 0)
        if depth >= 2 and "finished" in line:
            m = _TOOK.search(line)
            took = None
            if m is not None:
                took = seconds_to_ms(int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3)))
            out.append(record("eval", self.name, rank, self.last_step.get(rank), phase="end", duration_ms=took))
