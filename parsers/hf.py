"""Hugging Face Trainer and Accelerate: tqdm bars plus the printed log dicts."""
from __future__ import annotations

from .base import (CLOCK, EVAL_WORDS, OWN_TOTAL, BarTracker, Parser, Pattern, num, parse_bar, parsed, record, to_gb,
                   to_ms)
from .hf_epochs import TrainingBanner, unsloth_banner_end
from .kv import pairs
from .means import interval_mean, printed_mean
from .pydict import parse_flat_dict

_TRAIN_MAP = {"loss": "loss", "learning_rate": "lr", "grad_norm": "grad_norm", "epoch": "epoch",
              "train_tokens_per_second": "tokens_per_s", "num_input_tokens_seen": "tokens_seen",
              "memory(GiB)": "mem_gb", "train_speed(iter/s)": "it_per_s",
              "memory/max_mem_allocated(gib)": "mem_gb", "memory/max_allocated (GiB)": "mem_gb",
              "step_tokens_per_second": "tokens_per_s"}
"""HF's keys, and those ms-swift adds to its log dicts (its speed is the run's mean so far),
Axolotl's peak allocated memory (its name before and since late 2025), and the step's tokens a
second of Liger-Kernel's `EfficiencyCallback`."""
_TRAIN_MB = {"step_peak_memory_allocated_MB": "mem_gb"}
"""Keys of MB that a record holds in GB: Liger-Kernel's `EfficiencyCallback` peak of the step."""


def printed_step(d: dict) -> tuple[int | None, int | None]:
    """(step, total) a log dict names: `'step': 5`, PaddleNLP's `'global_step': 150`, or
    ms-swift's `'global_step/max_steps': '78/176'` (`'iteration': '78/176'` under Megatron)."""
    for key in ("step", "global_step"):
        if isinstance(d.get(key), int) and not isinstance(d.get(key), bool):
            return d[key], None
    for key in ("global_step/max_steps", "iteration"):
        both = d.get(key)
        if isinstance(both, str):
            step, _, total = both.partition("/")
            if step.isdigit() and total.isdigit() and step.isascii() and total.isascii():
                return int(step), int(total)
    return None, None


RUN_MEAN_KEY = "train_speed(s/it)"


class RunMeans:
    """Step times from ms-swift's `train_speed(s/it)`, the seconds a step since training began
    (the run's mean, not the step's; `means.py`).

    A run resumed at step s counts its mean over the steps since s.  Where a line said so
    (`resumed`) the means count from there; where none did, a fresh run logs first at its
    logging interval, so the second dict is the first one's step past it; where it is not, the
    run was resumed, and no time is given."""

    def __init__(self) -> None:
        self.last: dict = {}        # rank -> (steps counted, mean, decimals) of its last dict
        self.fresh: dict = {}       # rank -> whether the means count from step 0 or a known resume
        self.resumed_at: dict = {}  # rank -> the step its run resumed at, where a line said so

    def resumed(self, rank, step: int) -> None:
        self.resumed_at[rank], self.fresh[rank] = step, True
        self.last.pop(rank, None)

    def step_time_ms(self, rank, step: int | None, mean) -> float | None:
        base = self.resumed_at.get(rank, 0)
        now = printed_mean(step - base, mean) if step is not None else None
        if now is None:
            return None
        before = self.last.get(rank)
        self.last[rank] = now
        if before is None or before[0] >= now[0]:
            return None
        if rank not in self.fresh:
            self.fresh[rank] = before[0] == now[0] - before[0]
        seconds = interval_mean(before, now) if self.fresh[rank] else None
        return None if seconds is None else round(seconds * 1000, 3)


_RECORD_SLOTS = frozenset(("kind", "framework", "rank", "step", "phase"))
"""Names of a record's own slots: a printed dict's key of that name is no field (`{'loss': 2.1,
'step': 5}` once made `record` fail on two steps)."""


def dict_fields(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if k in _TRAIN_MB:
            out[_TRAIN_MB[k]] = to_gb(v, "mb")
            continue
        name = _TRAIN_MAP.get(k, k.replace("/", "_"))
        if name not in _RECORD_SLOTS:
            out[name] = v
    return out


EPOCH_RESULT = Pattern(r"(?:^|[\s-])epoch (\d{1,6}+): ")
_TRAINING_WORDS = ("step", "iter", "train", "grad", "lr", "learning_rate")


def epoch_result(line: str) -> dict | None:
    """The evaluation that Accelerate's examples and Transformers' `*_no_trainer.py` scripts
    print after each epoch, with no step: `epoch 0: {'accuracy': 0.68, 'f1': 0.81}`
    (`accelerator.print(f"epoch {epoch}:", eval_metric)`), or behind their logger's prefix,
    `epoch 0: perplexity: 25.31 eval_loss: 3.2311` (`run_clm_no_trainer.py`).  Its fields: the
    epoch and the metrics (`eval_loss` as `loss`, as the Trainer's evaluations give it); None
    for any other line, and for an epoch's training numbers (a step, a training loss, a rate)."""
    m = EPOCH_RESULT.search(line)
    if m is None:
        return None
    body = line[m.end():].strip()
    if body.startswith("{"):
        printed = parse_flat_dict(body) or {}
    else:
        printed = {key: value for key, value in ((k, num(v)) for k, v, _ in pairs(body)) if value is not None}
    keys = [k.lower() for k in printed]
    if not printed or "loss" in keys or any(w in k for k in keys for w in _TRAINING_WORDS):
        return None
    fields = dict_fields({k[5:] if k.startswith("eval_") else k: v for k, v in printed.items()})
    return {**fields, "epoch": int(m.group(1))} if fields else None


RESULT_DICTS = ("{'bleu': ", "{'rouge1': ")
"""The dicts that Transformers' `run_translation_no_trainer.py` (`logger.info({"bleu": ...})`) and
`run_summarization_no_trainer.py` (`logger.info(result)`, the ROUGE scores) log after each
epoch's evaluation."""
_METRICS_HEAD = "Evaluation metrics: "
"""`run_qa_no_trainer.py`'s, after training: `Evaluation metrics: {'exact_match': 80.1, 'f1': 88.2}`."""


def printed_metrics(line: str) -> dict | None:
    """The evaluation result that those example scripts log, behind their logger's prefix, with
    neither a step nor an epoch: its scores as fields; None for any other line, and for a dict
    that holds a training number."""
    at = line.find("{'")
    if at < 0:
        return None
    body = line[at:].rstrip()
    if not (body.startswith(RESULT_DICTS) or line[:at].endswith(_METRICS_HEAD)):
        return None
    printed = parse_flat_dict(body)
    if not printed:
        return None
    keys = [k.lower() for k in printed]
    if "loss" in keys or "epoch" in keys or any(w in k for k in keys for w in _TRAINING_WORDS):
        return None
    return dict_fields(printed) or None


def _logged_dict(line: str, head: str) -> bool:
    """The Trainer's log dict, printed as it is; not another's argument (Ray Train's `Reporting
    training result 1: TrainingReport(checkpoint=None, metrics={'loss': 5.49, 'step': 1}, ...)`)."""
    at = line.find(head)
    return at >= 0 and line[at - 1:at] != "="


class HFTrainerParser(Parser):
    """One record per optimizer step: the bar's final redraw of that step, merged with the
    log dict printed while the bar showed that step (HF prints the dict via tqdm.write, so the
    redraw that follows the dict carries the step it belongs to)."""

    name = "hf_trainer"
    detect_reads = True     # the banner's lines (see `detect`)

    def __init__(self) -> None:
        self.bars = BarTracker()
        self.held: dict = {}       # rank -> record being built for the main bar's current step
        self.pending: dict = {}    # rank -> dict printed, step not known yet
        self.next_redraw: dict = {}
        """rank -> records whose step is that of the bar's next redraw (an evaluation's banner
        and result: the bar's last redraw may lag the step, tqdm redraws at most every 0.1 s)."""
        self.main_total: dict = {}
        self.given: dict = {}
        """rank -> the last step a dict gave a record of its own, before any bar of the stream
        was read (ms-swift prints its first dict before the bar's first step)"""
        self.means = RunMeans()
        self.banner = TrainingBanner()
        """Where no bar is drawn, a log dict's epoch names its step (`hf_epochs`)."""
        self.adopted = False
        """Taken from the other pipe (`adopt`): this stream's bars are read from mid-run."""
        self.inherited: dict = {}
        """rank -> the step the bar showed when this parser took its steps so far
        (`inherit_bars`): its redraws of earlier steps, read again with the line that named
        the framework, are stale."""

    def adopt(self) -> bool:
        self.adopted = True
        return True

    def detect(self, line: str) -> bool:
        if " = " in line:
            self.banner.read(line)      # the banner comes before the lines that name the Trainer
        return (_logged_dict(line, "{'loss':") or "{'train_runtime'" in line or "|trainer.py:" in line
                or _logged_dict(line, "{'eval_loss'") or "Total optimization steps = " in line
                or unsloth_banner_end(line))

    def _emit_held(self, rank, out: list) -> None:
        rec = self.held.pop(rank, None)
        if rec is not None:
            out.append(rec)

    def _bar(self, bar: dict, rank, out: list) -> None:
        desc = bar["desc"]
        if any(w in desc for w in EVAL_WORDS) or (desc[:6] == "Epoch " and desc[6:].isdigit()):
            return      # an evaluation bar, or Lightning's (`Epoch 0:`), which Lightning claims
        total, n = bar["total"], bar["n"]
        main = self.main_total.get(rank)
        if main is None:
            if self.adopted and (n == 0 or (total is not None and n >= total) or bar["desc"]):
                # read from mid-run, the training bar shows up part way; an evaluation's,
                # drawn as it starts (`0/2`) or as it ends, is not it, nor a labelled one (a
                # dataset's `Map`: the Trainer's has no label)
                return
            if not self.banner.may_be_training(total):
                return      # the banner or the run's end told the training's steps: another loop's bar
            main = self.main_total[rank] = total
            self.banner.drawn(total)
        if total != main:
            return   # an evaluation/prediction loop's own bar
        shown = self.inherited.get(rank)
        if shown is not None:
            if n < shown:
                return
            del self.inherited[rank]
        held = self.held.get(rank)
        if held is not None and held["step"] != n:
            self._emit_held(rank, out)
            held = None
        for waiting in self.next_redraw.pop(rank, ()):
            waiting["step"] = n
            out.append(waiting)
        if n <= self.given.get(rank, 0):
            return      # no step, or one a dict already gave before the bar was read
        if held is None:
            # when its step was first drawn: its end
            held = self.held[rank] = self._step_record(rank, bar, CLOCK.now_ns)
        else:
            self._redrawn(held, bar)
        pend = self.pending.pop(rank, None)
        if pend is not None:
            for k, v in pend.items():
                held.setdefault(k, v)

    def _step_record(self, rank, bar: dict, drawn_ns: int | None) -> dict:
        rec = record("progress", self.name, rank, bar["n"], total_steps=bar["total"])
        if drawn_ns is not None:
            rec["drawn_ns"] = drawn_ns
        self._redrawn(rec, bar)
        return rec

    @staticmethod
    def _redrawn(rec: dict, bar: dict) -> None:
        if "it_per_s" in bar:
            rec["it_per_s"] = bar["it_per_s"]
        if bar["elapsed_s"] is not None:
            rec["elapsed_s"] = bar["elapsed_s"]

    def inherit_bars(self, bars: dict) -> list[dict]:
        """The Trainer's bar has no label: read before its first log dict named the stream's
        framework, its steps so far are the Trainer's.  The step the bar shows is held, as if
        this parser had drawn it."""
        out: list = []
        for rank, (finished, latest) in bars.items():
            if rank in self.main_total or rank in self.held:
                continue
            self.main_total[rank] = latest["total"]
            self.banner.drawn(latest["total"])
            out += [self._step_record(rank, bar, bar.get("drawn_ns")) for bar in finished]
            if finished:
                self.given[rank] = finished[-1]["n"]
            if latest["n"] > self.given.get(rank, 0):
                self.held[rank] = self._step_record(rank, latest, latest.get("drawn_ns"))
                self.inherited[rank] = latest["n"]
        return out

    def _dict(self, d: dict, line: str, rank, out: list) -> None:
        step = self.held[rank]["step"] if rank in self.held else None
        printed, total = printed_step(d)
        beside_bar = False
        if printed is None and rank not in self.main_total and "epoch" in d:
            printed = self.banner.step(line)      # no bar on this stream: the epoch names the step
            beside_bar = printed is not None and self.banner.bar_drawn
        if any(k.startswith("eval_") for k in d):
            fields = {}
            for k, v in dict_fields(d).items():
                name = k[5:] if k.startswith("eval_") else k
                if name not in _RECORD_SLOTS:
                    fields[name] = v
            if "runtime" in fields:
                fields["duration_ms"] = to_ms(fields.pop("runtime"), "s")
            result = record("eval", self.name, rank, step if printed is None else printed, phase="result", **fields)
            if rank in self.main_total and printed is None:
                self.next_redraw.setdefault(rank, []).append(result)
            else:
                out.append(result)
        elif "train_runtime" in d and "loss" not in d:
            f = dict_fields(d)
            out.append(record("progress", self.name, rank, None, summary=True,
                              duration_ms=to_ms(f.pop("train_runtime", None), "s"),
                              samples_per_s=f.pop("train_samples_per_second", None),
                              it_per_s=f.pop("train_steps_per_second", None),
                              loss=f.pop("train_loss", None), epoch=f.pop("epoch", None)))
        elif "loss" in d or "learning_rate" in d or "grad_norm" in d:
            fields = dict_fields(d)
            step_ms = self.means.step_time_ms(rank, printed, d.get(RUN_MEAN_KEY))
            if step_ms is not None:
                # from a wall-clock mean: it holds what ran between the two dicts (a save)
                fields["step_time_ms"], fields["step_time_wall"] = step_ms, True
            if rank not in self.main_total:
                # no progress bar on this stream (disable_tqdm, file logging): nothing to wait for
                if printed is not None:
                    self.given[rank] = printed
                rec = record("progress", self.name, rank, printed, total_steps=total, **parsed(fields, OWN_TOTAL))
                if beside_bar:
                    rec["timed_by_bar"] = True   # the bar on the process's other pipe times it
                out.append(rec)
                return
            old = self.pending.pop(rank, None)
            if old is not None:
                out.append(record("progress", self.name, rank, step, **old))
            self.pending[rank] = fields

    def parse(self, line: str, rank: int | None) -> list[dict]:
        out: list = []
        if "%|" in line:
            bar = parse_bar(line)
            if bar is not None:
                self._bar(bar, rank, out)
                rest = line[bar["end"]:].strip()
                if rest.startswith("{"):
                    line = rest
                else:
                    return out
        s = line.strip()
        if s.startswith("{") and s.endswith("}"):
            d = parse_flat_dict(s)
            if d:
                self._dict(d, s, rank, out)
        elif " = " in s:
            self.banner.read(s)
        return out

    def note_restart(self, rank, step: int) -> None:
        self.means.resumed(rank, step)

    def place_events(self, recs: list[dict], rank) -> list[dict]:
        """`***** Running Evaluation *****` comes before the evaluation, while the bar may still
        show an earlier step: like the evaluation's dict, it takes the step of the next redraw.
        An evaluation's result that a script logs itself (`epoch 0: perplexity: ...`, see
        `epoch_result`) comes after it: its step is the one the bar shows, which it holds."""
        if rank not in self.main_total:
            return recs
        if rank in self.held:
            for r in recs:
                if r["kind"] == "eval" and r.get("phase") == "result":
                    r["step"] = self.held[rank]["step"]
        banners = [r for r in recs if r["kind"] == "eval" and r.get("phase") == "start"]
        if not banners:
            return recs
        self.next_redraw.setdefault(rank, []).extend(banners)
        return [r for r in recs if r not in banners]

    def flush(self) -> list[dict]:
        out: list = []
        for rank, records in self.next_redraw.items():
            step = self.held[rank]["step"] if rank in self.held else None
            for waiting in records:
                waiting["step"] = step
                out.append(waiting)
        self.next_redraw.clear()
        for rank in list(self.held):
            held = self.held[rank]
            pend = self.pending.pop(rank, None)
            if pend is not None and "loss" not in held:
                for k, v in pend.items():
                    held.setdefault(k, v)
            elif pend is not None:
                out.append(record("progress", self.name, rank, held["step"], **pend))
            self._emit_held(rank, out)
        for rank, pend in list(self.pending.items()):
            out.append(record("progress", self.name, rank, None, **pend))
        self.pending.clear()
        return out


class AccelerateParser(HFTrainerParser):
    """Accelerate scripts: tqdm bars, `epoch N: {...}` metric prints, accelerate logger lines."""

    name = "accelerate"
    detect_reads = False    # its `detect` only answers (the banner is the HF Trainer's)

    def adopt(self) -> bool:
        return False    # a script's own bars: labelled, or read by the loop-bar rules

    def detect(self, line: str) -> bool:
        return ("launch" in line or "Accelerator" in line or "accelerate." in line) \
            and "accelerate" in line.lower()

    def parse(self, line: str, rank: int | None) -> list[dict]:
        if "epoch " in line:
            fields = epoch_result(line)
            if fields is not None:      # (on a stream of no framework's, the event parser's)
                step = self.held[rank]["step"] if rank in self.held else None
                return [record("eval", self.name, rank, step, phase="result", **fields)]
        return super().parse(line, rank)
