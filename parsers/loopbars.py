"""A training loop's own tqdm bar, on a stream no framework claims: diffusers' and Accelerate's
example scripts (`Steps:  10%|█  | 100/1000 [00:10<01:30,  9.80it/s, lr=0.0001, step_loss=0.12]`),
nanoGPT-style loops that call `set_postfix(loss=...)`, torchtune's recipes, Ultralytics YOLO.

Most bars in a training log are no training steps (downloads, `Map`, `Loading checkpoint
shards`, evaluation), so a bar counts only where it says it is one: a training word for its
label, an epoch (`Epoch 3/10`), or a loss among its postfix items or in its label."""
from __future__ import annotations

from collections import deque

from .base import (EVAL_WORDS, OWN_BAR, ULTRALYTICS_MARKS, BarTracker, Pattern, drawn, num, parse_bar,
                   parse_ultralytics_bar, parse_unsized_bar, parsed, record)
from .kv import normalise, pairs

TORCHTUNE = Pattern(r"(\d{1,6}+)\|(\d{1,12}+)\|Loss: (-?[\d.]++(?:[eE][-+]?\d++)?|nan|inf)")
"""torchtune's recipes label their bar `epoch|global step|Loss: x` (`1|26|Loss: 1.2436`): the
bar's count is the epoch's, the label's the run's step; tqdm draws the count's move first, under
the label of the step before, then the step's own label."""

_TRAINING_LABELS = frozenset(("steps", "step", "training", "train", "training steps", "iteration",
                              "iterations", "iter", "batches"))

EPOCH_LABEL = Pattern(r"(?:[Tt]rain(?:ing)? {1,16}+[Ee]poch:? {0,4}+\[?(\d{1,6}+)(?: ?/ ?\d{1,6}+)?\]?"
                      r"|[Ee]poch:? ?\[?(\d{1,6}+) ?/ ?\d{1,6}+\]?)")
"""A loop's bar over one epoch's batches, labelled with its epoch (`Epoch 3/10`, `Epoch [3/10]`,
`Train epoch 3`): one training bar, whose label's epoch changes, whose count starts again each
epoch.  (`Epoch 3` alone is Lightning's bar.)"""


def is_training_bar(bar: dict) -> bool:
    desc = bar["desc"]
    if any(w in desc for w in EVAL_WORDS):
        return False
    return (desc.lower().rstrip(". ") in _TRAINING_LABELS or "epoch" in bar
            or any("loss" in k.lower() for k in bar["post"]))


def relabel_metrics(bar: dict) -> bool:
    """A bar whose label holds its loss, set each batch (`set_description(f"Epoch {e} loss
    {loss:.4f}")`), as one training bar, its label's numbers postfix items (in place); False
    where the label holds no loss."""
    if any(w in bar["desc"] for w in EVAL_WORDS):
        return False
    items = pairs(bar["desc"], 16)
    if not any("loss" in k.lower() for k, _, _ in items):
        return False
    post = {k: v for k, v, _ in items}
    epoch = post.pop("Epoch", None) or post.pop("epoch", None)
    if epoch is not None and epoch.isdigit():
        bar["epoch"] = int(epoch)
        bar["per_epoch"], bar["total"] = bar["total"], None
    bar["desc"], bar["post"] = "steps", {**bar["post"], **post}
    return True


def relabel_epochs(bar: dict) -> None:
    """An `Epoch 3/10` bar's redraw as one bar of the run (in place), its epoch a field."""
    m = EPOCH_LABEL.fullmatch(bar["desc"])
    if m is not None:
        bar["desc"], bar["epoch"] = "epochs", int(m.group(1) or m.group(2))
        bar["per_epoch"], bar["total"] = bar["total"], None


def relabel_own_loop(bar: dict) -> None:
    """A loop's bar whose label holds its loss or its epoch, as one bar of the run (in place)."""
    desc = bar["desc"]
    if "oss" in desc and relabel_metrics(bar):
        return
    if "poch" in desc:
        relabel_epochs(bar)


def relabel_torchtune(bar: dict) -> bool:
    """A torchtune bar's redraw as one bar of the run's steps, its loss a postfix item (in
    place); False for another bar."""
    m = TORCHTUNE.fullmatch(bar["desc"])
    if m is None:
        return False
    bar["desc"] = "steps"
    bar["n"] = int(m.group(2))
    # the count's total is the epoch's steps; the run's is nowhere in the bar
    bar["post"] = {**bar["post"], "loss": m.group(3), "epoch": m.group(1)}
    bar["per_epoch"], bar["total"] = bar["total"], None
    return True


def relabel_ultralytics(bar: dict, columns: list[str], before: dict | None) -> bool:
    """An Ultralytics YOLO bar's redraw (`  70/1000   6.73G   1.081  0.4706  1.084  10  640: 100%|..|
    16/16 [..]`, or since 8.4 its own bar's, `..  640: 50% ━━━━━━────── 1/2 2.7it/s 0.3s<0.4s`;
    its values under the columns of the header line before it) as one bar of the run's steps
    (in place): the count is the epoch's batch, the epoch counts from 1, the loss is the sum of
    the printed components (as Ultralytics sums them), `GPU_mem` is GB.  False for another bar.

    Ultralytics sets the values after each batch, before the bar counts that batch: a redraw
    whose values differ from `before` (the bar's redraw before it) shows the batch after its
    count (`0/2` with the first batch's losses); one with the same values, the batches counted."""
    values = bar["desc"].split()
    if len(values) != len(columns) or columns[0] != "Epoch":
        return False
    epoch, _, epochs = values[0].partition("/")
    if not (epoch.isdigit() and epochs.isdigit() and epoch.isascii() and epochs.isascii()):
        return False
    post: dict = {}
    for name, value in zip(columns[1:], values[1:]):
        if name == "GPU_mem":
            post["mem_gb"] = value.rstrip("G")
        else:
            post[name] = value
    losses = [num(v) for k, v in post.items() if k.endswith("_loss")]
    if losses and None not in losses:
        post["loss"] = str(round(sum(v for v in losses if v is not None), 6))
    post["epoch"] = epoch
    per_epoch, done = bar["total"], bar["n"]
    if before is None or before.get("values") != bar["desc"]:
        done = min(done + 1, per_epoch) if per_epoch else done + 1
    bar["values"] = bar["desc"]
    bar["desc"] = "steps"
    bar["n"] = (int(epoch) - 1) * (per_epoch or 0) + done
    if before is not None and before.get("values") == bar["values"] and before["n"] > bar["n"]:
        bar["n"] = before["n"]
    bar["total"] = per_epoch * int(epochs) if per_epoch else None
    bar["post"] = {**bar["post"], **post}
    return True


ULTRALYTICS_GROUP = ("P", "R", "mAP50", "mAP50-95")
"""The results of each group (`Box(`, `Mask(`, `Pose(`) of Ultralytics' validation, in order."""


def validation_names(desc: str) -> tuple[list[str], bool] | None:
    """The names of Ultralytics' validation results, from its validation bar's label (`Class
    Images Instances Box(P R mAP50 mAP50-95)`, or a classifier's `classes top1_acc top5_acc`):
    `images`, `instances`, `box/P`, ..., `mask/mAP50-95`; and whether the label was whole.  A
    label cut to fit a terminal (`... Box(P R mAP50 mA\u2026`) names the results before the cut,
    and the rest of its last group, which always holds the same four.  None for another label."""
    words = desc.split()
    if len(words) < 3 or words[0] not in ("Class", "classes"):
        return None
    whole = "\u2026" not in desc
    if not whole:
        words = words[:next(i for i, w in enumerate(words) if "\u2026" in w)]
    names, group = [], ""
    for word in words[1:]:
        if "(" in word:
            group, _, word = word.partition("(")
            group = group.lower() + "/"
        names.append(group + word.rstrip(")") if group else word.lower())
        if word.endswith(")"):
            group = ""
    last = names[-1][len(group):] if group and names else None
    if not whole and last in ULTRALYTICS_GROUP:
        names += [group + name for name in ULTRALYTICS_GROUP[ULTRALYTICS_GROUP.index(last) + 1:]]
    return (names, whole) if names else None


UNLABELLED_STEPS = 4096
"""Finished steps held per unlabelled bar until a framework claims the stream: HF's Trainer
names itself with its first log dict, `logging_steps` (500 by default) steps into the run."""
UNLABELLED_BARS = 8
"""Unlabelled bars held at once (a rank's training bar, evaluation bars, preprocessing loops)."""


class UnlabelledBars:
    """The steps of bars with no label, drawn on a stream that no framework has claimed yet.

    By its looks such a bar is nobody's training (downloads, preprocessing loops and evaluation
    loops draw the same), so it gives no record.  But HF's Trainer draws its training bar so, on
    stderr, and names itself only with its first log dict hundreds of steps on: the framework
    that then claims the stream takes the bar's steps so far (`Parser.inherit_bars`)."""

    def __init__(self) -> None:
        self.tracker = BarTracker()
        self.finished: dict = {}    # (rank, total) -> deque of the bar's finished redraws

    def note(self, rank, bar: dict) -> None:
        key = (rank, bar["total"])
        old = self.tracker.peek(key)
        if old is not None and bar["n"] < old["n"]:
            self.tracker.held.pop(key)      # the bar runs again (the next evaluation)
            self.finished.pop(key, None)
        elif old is None and len(self.tracker.held) >= UNLABELLED_BARS:
            oldest = next(iter(self.tracker.held))
            del self.tracker.held[oldest]
            self.finished.pop(oldest, None)
        done = self.tracker.update(key, bar)
        if done is not None:
            self.finished.setdefault(key, deque(maxlen=UNLABELLED_STEPS)).append(done)

    def most_drawn(self) -> int:
        """The furthest count of the bars held (0: none), shown with the hint that `--log-format
        tqdm` reads such a bar as the loop's steps."""
        return max((bar["n"] for bar in self.tracker.held.values()), default=0)

    def claim(self) -> dict:
        """rank -> (its finished redraws, its latest redraw) of each rank's likeliest training
        bar; held no longer."""
        best: dict = {}
        for (rank, _), bar in self.tracker.held.items():    # in the order they were first drawn
            if rank not in best or _more_like_training(bar, best[rank]):
                best[rank] = bar
        out = {rank: (list(self.finished.get((rank, bar["total"]), ())), bar)
               for rank, bar in best.items()}
        self.tracker.held.clear()
        self.finished.clear()
        return out


def _more_like_training(bar: dict, than: dict) -> bool:
    """A bar part way, rather than one that ended (a preprocessing loop, an evaluation) or has
    only been drawn (an evaluation's, as it starts); of two part way, the one drawn first (the
    loop's bar comes before its evaluations' bars); else the longer."""
    running, than_running = 0 < bar["n"] < bar["total"], 0 < than["n"] < than["total"]
    if running != than_running:
        return running
    return not running and bar["n"] > than["n"]


class LoopBars:
    """The final redraw of each step of each training bar, as one progress record.  An inner
    bar that starts again (`for epoch ...: for batch in tqdm(loader)`) runs its steps on after
    the epoch before, as `step_inferred`."""

    def __init__(self, framework: str, unlabelled_loop: bool = False) -> None:
        self.framework = framework
        self.unlabelled_loop: dict | None = {} if unlabelled_loop else None
        """Where told that the loop's bar has no label (`--log-format tqdm`): rank -> the total
        of the first bar with no label it drew, its training bar; None where not told."""
        self.tracker = BarTracker()
        self.offsets: dict = {}     # (rank, label) -> the steps of the bar's earlier runs
        self.columns: dict = {}     # rank -> the names of Ultralytics' columns, from its header
        self.results: dict = {}     # rank -> its validation's result names, from the bar, and if whole
        self.unlabelled = UnlabelledBars()
        self.leading: dict = {}
        """(rank, label) -> {step: its values}, of bars whose values lead their count
        (`_place_values`)"""

    def header(self, line: str, rank) -> bool:
        """Is `line` Ultralytics' column header (`Epoch GPU_mem box_loss ... Instances Size`)?
        Its names are then those of the rank's bars' values."""
        names = line.split()
        if len(names) < 3 or names[0] != "Epoch" or names[1] != "GPU_mem" or len(names) > 16:
            return False
        self.columns[rank] = names
        return True

    def parse(self, line: str, rank) -> list[dict] | None:
        """The records a training bar's redraw completes (often none); None for any other line."""
        bar = parse_bar(line)
        if bar is None and (ULTRALYTICS_MARKS[0] in line or ULTRALYTICS_MARKS[1] in line):
            bar = parse_ultralytics_bar(line)
        if bar is None:
            bar = parse_unsized_bar(line)
            if bar is None:
                return None
        torchtune = "|Loss: " in bar["desc"] and relabel_torchtune(bar)
        if not torchtune:
            relabel_own_loop(bar)
        ultralytics = not torchtune and rank in self.columns and relabel_ultralytics(
            bar, self.columns[rank], self.tracker.peek((rank, "steps")))
        if not bar["desc"] and self.unlabelled_loop is not None and bar["total"]:
            if self.unlabelled_loop.setdefault(rank, bar["total"]) == bar["total"]:
                bar["desc"] = "steps"
        if not is_training_bar(bar):
            if not bar["desc"] and bar["total"]:
                self.unlabelled.note(rank, bar)
            elif rank in self.columns and bar["desc"][:1] in "Cc":
                named = validation_names(bar["desc"])
                if named:
                    self.results[rank] = named
            return None
        key = (rank, bar["desc"])
        old = self.tracker.peek(key)
        if old is not None and "absorbed" in old and old["n"] == bar["n"]:
            bar["absorbed"] = old["absorbed"]
        if torchtune and old is not None and old["n"] == bar["n"]:
            # the step's later redraw is the next step's count under this step's label: the
            # step's own times are those it was first drawn with
            bar["elapsed_s"] = old["elapsed_s"]
            if "it_per_s" in old:
                bar["it_per_s"] = old["it_per_s"]
        if not (torchtune or ultralytics):   # each places its values itself
            self._place_values(key, old, bar)
        done = self.tracker.update(key, bar)
        if done is not None and key in self.leading:
            done["post"] = self.leading[key].pop(done["n"], done["post"])
        out = [] if done is None else [self._record(key, done)]
        if old is not None and bar["n"] < old["n"]:
            self.offsets[key] = self.offsets.get(key, 0) + (old.get("per_epoch") or old["total"] or old["n"])
        return out

    def _place_values(self, key, old: dict | None, bar: dict) -> None:
        """The step whose values (postfix, or label) a redraw shows.  A loop that sets them
        after each batch of `for batch in tqdm(loader)` sets them before tqdm counts that batch:
        its bar shows values from its first redraw, at count 0, and a redraw whose values
        changed shows the step after its count (or a later one, where tqdm draws every few
        counts); one whose values did not (the count moving on) shows its count's.  (A loop
        that counts with `update()` and then sets them shows its count's step in its last
        redraw of that count: its bar is read as drawn.)"""
        shown = self.leading.get(key)
        if shown is None:
            if bar["n"] != 0 or not bar["post"]:
                return
            shown = self.leading[key] = {}
        if old is not None:
            # the steps before the count drawn last have their records; a bar that starts
            # again (the next epoch's) counts from 0 again
            given = old["n"]
            for step in [s for s in shown if s < given or (bar["n"] < given and s != given)]:
                del shown[step]
        if old is None or bar["post"] != old["post"]:
            shown[bar["n"] + 1] = bar["post"]
        elif bar["n"] != old["n"]:
            shown[bar["n"]] = bar["post"]       # the count moved on: the values set before it
        else:
            shown.setdefault(bar["n"], bar["post"])

    def drawn_step(self, rank) -> int | None:
        """The step the rank's training bar last drew, if it has not given its record yet."""
        held = self.tracker.peek((rank, "steps"))
        return held["n"] if held is not None and held["n"] > 0 else None

    def furthest_step(self, rank) -> int | None:
        """The furthest step that the rank's training bars have drawn, given or not."""
        return max((self.offsets.get(key, 0) + bar["n"] for key, bar in self.tracker.held.items()
                    if key[0] == rank and bar["n"] > 0), default=None)

    def absorb(self, rank, step: int, fields: dict) -> bool:
        """Does the bar of the rank's steps hold `step`, drawn and not yet given?  It then takes
        the fields of another line of that step (torchtune's `Step 5 | loss:... lr:...
        tokens_per_second_per_gpu:...`, printed after the bar's redraw), so that the step
        has one record.  A step already given (stdout held in a buffer, its lines printed
        after the next steps' redraws) has its line's record of its own."""
        held = self.tracker.peek((rank, "steps"))
        if held is None or held["n"] != step:
            return False
        held["absorbed"] = fields
        return True

    def validation_result(self, line: str, rank) -> list[dict] | None:
        """Ultralytics' `all  722  1444  0.989  0.992  0.994  0.849` after its validation bar:
        an eval result at the training step the bar was at, holding the results the bar's label
        names; None for another line."""
        names, whole = self.results.get(rank) or ((), True)
        values = line.split()
        if not names or values[:1] != ["all"] or not (len(values) == len(names) + 1 if whole
                                                   else len(values) > len(names)):
            return None
        metrics = {name: num(v) for name, v in zip(names, values[1:])}
        if None in metrics.values():
            return None
        del self.results[rank]
        return [record("eval", self.framework, rank, self.drawn_step(rank), phase="result", metrics=metrics)]

    def flush(self) -> list[dict]:
        out = [self._record(key, bar) for key, bar in self.tracker.held.items() if bar["n"] > 0]
        self.tracker.held.clear()
        return out

    def _record(self, key, bar: dict) -> dict:
        fields, extra = normalise([(k, v, None) for k, v in bar["post"].items()])
        fields.pop("step", None)
        offset = self.offsets.get(key, 0)
        if offset:
            fields["step_inferred"] = True
            fields["iter_in_epoch"] = bar["n"]
        if "it_per_s" in bar:
            fields["it_per_s"] = bar["it_per_s"]
        if bar.get("per_epoch"):
            fields["iters_per_epoch"] = bar["per_epoch"]
        if "epoch" in bar:
            fields.setdefault("epoch", bar["epoch"])
        if extra:
            fields["metrics"] = dict(list(extra.items())[:24])
        for name, value in bar.get("absorbed", {}).items():
            if name == "metrics" and "metrics" in fields:
                fields["metrics"] = {**value, **fields["metrics"]}
            else:
                fields.setdefault(name, value)
        return record("progress", self.framework, key[0], offset + bar["n"], total_steps=bar["total"],
                      elapsed_s=bar["elapsed_s"], **parsed(fields, OWN_BAR), **drawn(bar))
