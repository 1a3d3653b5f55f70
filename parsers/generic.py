"""Fallback: `key: value` / `key=value` lines, printed dicts, ImageNet-example meters
(`Epoch: [0][ 10/391]\tTime 0.2 (0.3)\tLoss ...`), MXNet `Epoch[0] Batch [20-40]\tSpeed: ...`,
fairseq's and metaseq's stats lines (`fairseq.py`), MMEngine's `Epoch(train) [1][ 50/1000]  ...`,
timm's `Train: 0 [  50/1251 (  4%)]  Loss: ...`, open_clip's (`open_clip.py`), MiniMind's
`Epoch:[1/2](100/44160), loss: ...`, MindFormers' `{ Epoch:[  1/  2], step:[   10/  500], ...`
(`mindformers.py`) and OpenNMT-py's `Step 100/200000; acc: ..; xent: ..`."""
from __future__ import annotations

import re

from . import fairseq, mindformers, mindspore, printers, slowfast
from .base import (CLOCK, SOURCE_LOCATION, ULTRALYTICS_MARKS, Parser, Pattern, num, parsed,
                   printable_ascii, record, seconds_to_ms, to_gb, to_ms, unsized_bar_like)
from .kv import normalise, pairs
from .loopbars import LoopBars
from .means import interval_mean, printed_mean
from .open_clip import OpenClipLines
from .pydict import parse_flat_dict
from .scan import interesting
from .spread_dicts import SpreadDicts

# `Epoch: [0][ 10/391]`, and Swin Transformer's (and its many followers') `Train: [30/300][400/2859]`
METER = Pattern(r"(?:(TRAIN|VALIDATION|TEST|Epoch:|Test:|Train:|Eval:|Val:)\s*+)\[(\d++)(?:/\d++)?\]"
                r"\[\s*+(\d++)/(\d++)\](.{0,4000}+)")
_OWN_MXNET = frozenset({"step_inferred", "epoch", "iter_in_epoch", "samples_per_s"})
"""What MXNet's `Epoch[N] Batch [i]\tSpeed: S samples/sec` says itself: the values after it give way."""
_METER_ITEM = Pattern(r"([A-Za-z@][\w/@ ]{0,30}?)\s++(-?[\d.]++(?:[eE][-+]?\d++)?)(?:\s*+\(\s*+(-?[\d.]++(?:[eE][-+]?\d++)?)\))?")
MXNET = Pattern(r"(?:Node\[(\d++)\] )?Epoch\[(\d++)\] Batch \[(\d++)-(\d++)\]\s++Speed: ([\d.]++) samples/sec(.{0,1000}+)")
NODE = Pattern(r"Node\[(\d++)\]")
OPENNMT_RATE = Pattern(r"(\d{1,12}+(?:/\d{1,12}+){1,2}+) tok/s;\s++(\d{1,12}+) sec")
RANK_TAG = Pattern(r"\[[Rr]ank (\d{1,7}+)\] ")
XLA_DEVICE = Pattern(r"Device=xla:\d{1,4}+/(\d{1,7}+)")
_STEPISH = Pattern(r"(?:^|[\s|,\[:])(?:[Ss]tep|STEP|[Ii]ter(?:ation)?|ITER|global_step|num_updates|training_steps)(?:\s*+[:=]|\s)")
_STEP_TOTAL = Pattern(r"(?i)\b(?:step|iter|iteration)\s*+[:=]?\s*+\[?\s*+(\d++)\s*+/\s*+(\d++)")
_SLASH_NUMBER = re.compile(r"/\s*+[0-9]", re.ASCII)
"""Part of every `_STEP_TOTAL` match, found by a search for its literal: ~0.8 us on a line of 500
characters, where `_STEP_TOTAL` tries every position (~10 us).  Linear: no time-out needed."""


# What `_STEPISH` finds in ASCII text, by substring search: a step word at the start or after a
# boundary character, followed by whitespace, ':' or '='.  (`re` scans a 1 KB line in ~20 us,
# trying the pattern at every position; `str.find` in well under a microsecond per word.)
_STEP_WORDS = (("tep", ("step", "Step", "global_step", "training_steps")),
               ("ter", ("iter", "Iter", "iteration", "Iteration")),
               ("TEP", ("STEP",)), ("TER", ("ITER",)), ("num_updates", ("num_updates",)))
"""(stem, words): a line without the stem holds none of its words."""
_BEFORE_STEP = frozenset(" \t\n\r\x0b\x0c|,[:")
_AFTER_STEP = frozenset(" \t\n\r\x0b\x0c:=")


def step_total(s: str):
    """`_STEP_TOTAL.search(s)`: a step number and the `/ total` after it (`iter 10/1000`, the
    PyTorch tutorials' `Step [100/600]`)."""
    if s.isascii() and _SLASH_NUMBER.search(s) is None:
        return None
    return _STEP_TOTAL.search(s)


def stepish(s: str) -> bool:
    """Does the line name a step (`step 5`, `iter: 5`, `iteration=5`, `global_step 5`)?"""
    if not s.isascii():
        return _STEPISH.search(s) is not None
    for stem, words in _STEP_WORDS:
        if stem not in s:
            continue
        for word in words:
            i = s.find(word)
            while i >= 0:
                if i == 0 or s[i - 1] in _BEFORE_STEP:
                    j = i + len(word)
                    if s[j:j + 1] in _AFTER_STEP:
                        return True
                i = s.find(word, i + 1)
    return False


# MMEngine (MMDetection, MMSegmentation, MMPretrain, ...): `Epoch(train)  [2][ 50/1000]  lr: ..
# eta: 1:23:45  time: 0.4567  data_time: 0.0123  memory: 3456  loss: 1.2345` (the iteration
# within the epoch), `Iter(train) [  150/90000]  ...` (the run's), and `Epoch(val) [1][500/500]
# accuracy/top1: 76.5 ...` at an evaluation's end.  `time` and `data_time` are seconds, `memory`
# MB.
MMENGINE = Pattern(r"(?:Epoch\((\w{1,10}+)\)\s*+\[(\d++)\]|Iter\((\w{1,10}+)\)\s*+)\[\s*+(\d++)/(\d++)\](.{0,4000}+)")
# mmcv's TextLoggerHook, which MMDetection 2.x, MMSegmentation 0.x & co log through:
# `Epoch [3][50/2500]\tlr: 2.000e-02, eta: 1 day, 0:00:00, time: 1.090, data_time: 0.015, memory:
# 3901, loss_cls: 0.0230, loss: 0.0394` (`Iter [150/90000]\t...` by iterations), and at an
# evaluation's end `Epoch(val) [1][625]\tbbox_mAP: 0.3620, ...` (its batches, no total).
MMCV = Pattern(r"(?:Epoch(?:\((\w{1,10}+)\))? \[(\d{1,9}+)\]\[\s*+(\d{1,12}+)(?:/(\d{1,12}+))?\]"
               r"|Iter(?:\((\w{1,10}+)\))? \[\s*+(\d{1,12}+)(?:/(\d{1,12}+))?\])\s++(.{0,4000}+)")
# timm's train.py: `Train: 3 [  50/1251 (  4%)]  Loss: 6.912 (6.92)  Time: 0.412s, 1242.72/s  (0.450s,
# 1137.78/s)  LR: 1.000e-05  Data: 0.012 (0.051)` (epoch and update from 0, of 1251 updates an
# epoch), and `Test: [ 389/389]  Time: ..  Loss: 0.89 (0.91)  Acc@1: 78.1 (76.5)` at the
# evaluation's last batch (its batches counted from 0 to the last).
TIMM = Pattern(r"(Train|Test): (?:(\d++) )?\[\s*+(\d++)/(\d++)(?: \(\s*+\d++%\))?\](.{0,4000}+)")
_TIMM_ITEM = Pattern(r"([A-Za-z@][\w@]{0,30}+):\s*+(-?[\d.]++(?:[eE][-+]?\d++)?)(s?)(?:, +([\d.]++)/s)?"
                     r"(?:\s*+\(\s*+(-?[\d.]++(?:[eE][-+]?\d++)?)s?(?:, +[\d.]++/s)?\))?")
_MM_NOT_METRICS = ("eta", "time", "data_time", "memory", "lr", "base_lr", "grad_norm", "loss")

# Nanotron's logger head, `[INFO|DP=0|PP=1|TP=0|ip-26-0-160-225]:`: where in the parallel layout
# the line was logged, not what it says.
PARALLEL_PLACE = Pattern(r"\[[A-Z]{1,8}+\|DP=[^\]]{0,300}+\]")

# Rich's logging handler's source, right-aligned after the message: `...  loss 3.0      train.py:42`
TRAILING_SOURCE = Pattern(r" {2,}+[\w-]{1,200}+\.py:\d{1,7}+$")
# loguru's source, `| yolox.core.trainer:246 - ` (`name:function:line`, or a format's own part of it)
LOGURU_SOURCE = Pattern(r"\| [\w.]{1,200}+(?::[\w<>.]{1,100}+)?:\d{1,7}+ - ")
EPOCH_OF = Pattern(r"(?i)\bepoch\s*+[:=]?\s*+\[?\s*+(\d++)\s*+/\s*+(\d++)")
# A step's time as a number and its unit, with no key: RETURNN's `0.855 sec/step`, TF-Slim's and
# Tacotron's scripts' `(0.92 sec/step)`, `[0.512 sec/Step, Train_Loss=..]`
PER_STEP = Pattern(r"(?<![\w.])(\d{1,9}+(?:\.\d{1,9}+)?) ?(sec|s|ms)/[sS]tep\b")

# MiniMind's trainers (and the many scripts that copy them): `Epoch:[1/2](100/44160), loss: 8.8630,
# logits_loss: 8.8630, aux_loss: 0.0000, lr: 0.00049999, epoch_time: 372.0min`, the step counted in
# its epoch; before 2025 `Epoch:[0/19](100/24681) loss:5.251 lr:0.0002 epoch_Time:98.0min:`, with
# epochs from 0 at first.  `epoch_time` is the minutes left of the epoch, no time taken.
EPOCH_STEP_IN_PARENS = Pattern(r"Epoch:\[(\d{1,9}+)/(\d{1,9}+)\]\((\d{1,12}+)/(\d{1,12}+)\),?(.{0,4000}+)")
D2_START = Pattern(r"Starting training from iteration (\d{1,12}+)")
# CLU's LoggingWriter, behind absl's prefix: `I0919 14:15:27.775955 1401 logging_writer.py:35] [100] k=v, ...`
CLU = Pattern(r"logging_writer\.py:\d{1,6}+\] \[(\d{1,12}+)\] (.{1,4000}+)")
_EVAL_WORDS = Pattern(r"(?i)eval|valid|test|bleu|rouge")
_EVAL_KEY = Pattern(r"(?i)(?:^|[_/ .-])(?:val|valid|validation|eval|evaluation|test)(?:$|[_/ .-])")
"""A value's name that says an evaluation gave it, `val_loss`, `eval/acc`, `Validation bpb`..."""
_EVAL_WORD_ALONE = frozenset(("val", "valid", "validation", "eval", "evaluation", "test"))
"""... but not the word alone."""
_PROGRESS_FIELDS = ("loss", "step_time_ms", "lr", "it_per_s", "tokens_per_s", "samples_per_s", "tflops", "grad_norm")

_DATA_TIMERS = ("dtd", "data", "data_time", "reader_cost", "avg_reader_cost")
_TIMERS = frozenset(("dtf", "dtb", "dto", "iter") + _DATA_TIMERS)
"""Timers in seconds: ezpz's dtd (data), dtf (forward), dtb (backward), dto (optimizer); the
wait for a batch by its other names (the Paddle suites' `reader_cost`); Meta Lingua's `iter`, the
iteration from its batch in hand to its optimizer step (CUDA events), its `data` apart: the two
are the step's time."""

_DICT_STEP = ("global_step", "step", "training_steps", "iteration", "iter", "num_updates", "current_steps")
_DICT_STEP_KEYS = frozenset(_DICT_STEP)


# `_METER_ITEM` at the start of every tab-separated part of an ASCII tail, in one pass: with
# no other whitespace than spaces and tabs, ` ` stands for `\s` inside a part, and nothing
# in an item can cross a tab, so each match starts at a part's start and ends in that part.
_METER_ITEMS = re.compile(r"(?:\A|\t) *+([A-Za-z@][\w/@ ]{0,30}?) ++(-?[0-9.]++(?:[eE][-+]?[0-9]++)?)",
                          re.ASCII)
_METER_PARTS = 32
_METER_FIELDS = {"time": "step_time_ms", "batch time": "step_time_ms", "batch_time": "step_time_ms",
                 "data": "data", "data time": "data", "lr": "lr", "tok/s": "tokens_per_s",
                 "samples/s": "samples_per_s", "img/s": "samples_per_s", "grad_norm": "grad_norm",
                 "mem": "mem_mb", "max mem": "mem_mb"}
"""Which record field a meter item (its lowercased name) sets; `data` is a timer, `mem` MB."""
_SWIN_ETA = Pattern(r"\teta (?:\d{1,6}+ days?, )?\d{1,2}+:\d\d:\d\d ")
"""Swin's first item holds two: `\teta 0:20:52 lr 0.000872`."""


def _opennmt(s: str, fields: dict, extra: dict) -> None:
    """OpenNMT-py's statistics line (`Step 100/200000; acc: 10.5; ppl: 5000.1; xent: 8.5; lr:
    0.00001; ...; 12345/23456 tok/s;     60 sec`): `xent`, the cross-entropy, is its loss; of
    the source/target words a second, the target's; `sec`, the time since training began."""
    xent = extra.pop("xent", None)
    if xent is not None:
        fields.setdefault("loss", xent)
    m = OPENNMT_RATE.search(s)
    if m is not None:
        fields["tokens_per_s"] = float(m.group(1).rpartition("/")[2])
        fields["elapsed_s"] = float(m.group(2))


def meter_item(part: str) -> tuple[str, str] | None:
    """(name, number) of one meter item (`Time 0.041 (0.057)`)."""
    m = _METER_ITEM.match(part)
    return (m.group(1).strip(), m.group(2)) if m else None


def meter_items(tail: str) -> dict[str, str]:
    """{name: number} of the items of a meter line's tab-separated tail (the first 32 parts)."""
    if tail.isascii() and tail.count("\t") < _METER_PARTS and tail.replace("\t", " ").isprintable():
        return {name.strip(): value for name, value in _METER_ITEMS.findall(tail)}
    items = {}
    for part in tail.split("\t")[:_METER_PARTS]:
        item = meter_item(part.strip())
        if item is not None:
            items[item[0]] = item[1]
    return items


# What the block readers (see `Parser.readers`) match: a meter line and an MXNet line, each
# with the groups of METER or MXNET.  No framework's `detect` claims either shape, so a stream
# that no framework claims reads them without trying every `detect`: the words in them are
# short (meter names: words of at most 8 letters, digits, '/' or '@'; MXNet names: lower-case
# letters in hyphenated pieces of at most 8) or fixed, too short or too plain to hold any
# framework's marker ('iteration', 'DeepSpeed', 'reduced_train_loss', '%|', ...).
_WORD = r"[A-Za-z@][A-Za-z0-9/@]{0,7}+"
_NUM = r"-?[0-9.]++(?:[eE][-+]?[0-9]++)?"
_METER_TAGS = ("TRAIN", "VALIDATION", "TEST", "Epoch:", "Test:", "Train:", "Eval:", "Val:")
METER_LINE = re.compile(
    r"(TRAIN|VALIDATION|TEST|Epoch:|Test:|Train:|Eval:|Val:) *+\[([0-9]++)\]\[ *+([0-9]++)/([0-9]++)\]"
    rf"((?:\t *+{_WORD}(?: {_WORD}){{0,2}} ++{_NUM}(?: *+\( *+{_NUM}\))?)*+)")
MXNET_LINE = re.compile(
    r"[0-9 :,.-]{0,40}+(?:Node\[([0-9]{1,7}+)\] )?Epoch\[([0-9]++)\] Batch \[([0-9]++)-([0-9]++)\]"
    r"[\t ]++Speed: ([0-9.]++) samples/sec((?:\t[a-z]{1,8}+(?:-[a-z0-9]{1,8}+)*+=[0-9.]++)*+)")
_MXNET_TAIL = 1000
"""MXNET reads at most this many characters after `samples/sec`: the reader takes shorter lines."""


class GenericParser(Parser):
    name = "generic"
    readers: tuple = ("_meter_at", "_mxnet_at")
    fallback_readers: tuple = ("_dict_at",)

    def __init__(self, unlabelled_loop: bool = False) -> None:
        self.loop_bars = LoopBars(self.name, unlabelled_loop)
        self.spread = SpreadDicts()
        self.last_step: dict = {}
        """rank -> its last MMEngine, timm, meter or MetricLogger step: the step an evaluation's
        result comes after"""
        self.mindspore_steps: dict = {}
        """rank -> the step of MindSpore's last LossMonitor line (its TimeMonitor's epoch ends there)"""
        self.epochs: dict = {}
        """rank -> [first epoch (0 or 1), whether its steps count per "epoch" or over the "run"
        (None until an epoch ends), the last epoch and step]: see `_run_step`"""
        self.mxnet_epochs: dict = {}
        """rank -> [epoch, its first step - 1, the last batch it printed]: MXNet counts its
        batches from 0 in each epoch."""
        self.epoch_counts: dict = {}
        """rank -> [epoch, the steps of the epochs before, the epoch's highest step, whether the
        count starts at 0, whether it counts in its epoch]: see `_in_epoch_step`"""
        self.mnist_positions: dict = {}     # rank -> (epoch, sample) -> step: see `printers.mnist`
        self.open_clip = OpenClipLines()
        self.slowfast_epochs: dict = {}     # rank -> iterations an epoch: see `slowfast.read`
        self.epoch_length: dict = {}        # rank -> iterations an epoch: see `printers.ignite_example`
        self.dict_claims: dict = {}
        """the keys of a printed dict of numbers -> whether another parser claims it (`_dict_at`)"""
        self.clu_steps: dict = {}
        """rank -> the step of its last CLU progress record"""
        self.d2_start: dict = {}
        """rank -> the iteration Detectron2 said it started from"""
        self.d2_means: dict = {}
        """rank -> (iterations timed, their mean ms, its decimals) of its last Detectron2 line"""
        self.d2_printed: dict = {}
        """rank -> [its last Detectron2 iteration printed, the iteration its hooks run at next]"""
        self.d2_first: dict = {}
        """rank -> (iteration, mean ms) of its first Detectron2 line where no line said where the
        count began, until its second tells (None: it did not; see `_detectron2_fresh_start`)"""
        self.eval_starts: dict = {}
        """rank -> (step, framework) of the last evaluation start given: see `first_start`"""

    def detect(self, line: str) -> bool:
        return False

    def first_start(self, rec: dict) -> bool:
        """Is `rec`, an evaluation's start, the first of its evaluation?  Not where another
        framework's record began one at the same step for the same rank, or on a line no
        launcher placed: GNMT prints MLPerf's `eval_start`, then its meter's first TEST batch
        (one evaluation, not two).  A framework's own starts at one step are its own evaluations."""
        rank, step, framework = rec["rank"], rec["step"], rec["framework"]
        starts = self.eval_starts
        before = (starts.values() if rank is None else
                  [s for s in (starts.get(rank), starts.get(None)) if s is not None])
        if any(s[0] == step and s[1] != framework for s in before):
            return False
        starts[rank] = (step, framework)
        return True

    def flush(self) -> list[dict]:
        self.spread.open.clear()        # a dict the stream ended in the middle of
        return self.loop_bars.flush() + self.open_clip.flush()

    def place_events(self, recs: list[dict], rank) -> list[dict]:
        """Detectron2's writer prints an iteration after that iteration's hooks ran: an evaluation
        printed between two of its lines ran at the next iteration the writer prints, one
        writer period on (the gap between its last two lines)."""
        printed = self.d2_printed.get(rank)
        if printed is not None and printed[1] is not None:
            for r in recs:
                if r["kind"] == "eval":
                    r["step"] = printed[1]
        return recs

    def parse(self, line: str, rank: int | None, bars: bool = True) -> list[dict]:
        """`bars`: read a training loop's own tqdm bars (`loopbars.py`); not where a framework's
        parser reads the stream's bars, and gives the generic parser only what it does not take."""
        s = line.strip()
        if bars and "GPU_mem" in s and self.loop_bars.header(s, rank):
            return []
        # (a bar drawn with no cells, `75% 3/4 [00:03<00:01,  1.52s/it]`, is `unsized_bar_like` too)
        if bars and ("%|" in s or unsized_bar_like(s) or ULTRALYTICS_MARKS[0] in s or ULTRALYTICS_MARKS[1] in s):
            recs = self.loop_bars.parse(s, rank)
            if recs is not None:
                return recs
        if s.startswith("all ") and bars:
            recs = self.loop_bars.validation_result(s, rank)
            if recs is not None:
                return recs
        if "][" in s and "/" in s and any(tag in s for tag in _METER_TAGS):
            m = METER.search(s)
            if m:
                return self._meter(m, rank)
        if "Speed:" in s:
            m = MXNET.search(s)
            if m:
                return self._mxnet(m, rank)
        if "| train" in s or "| valid" in s or "][train" in s or "][valid" in s or s.startswith("| epoch "):
            recs = fairseq.read(s, rank)
            if recs is not None:
                return recs
        if s.startswith("{") and s.endswith("}"):
            recs = self._dict(s, rank)
            if recs is not None:
                return recs
        if bars and s.startswith("{'") and s.endswith(",") and self.spread.opens(s, rank):
            return []       # pprint's dict over lines: its first (see `spread_line`)
        if "] [" in s:
            m = CLU.search(s)
            if m:
                return self._clu(int(m.group(1)), m.group(2), rank)
        if ")" in s and ("Epoch(" in s or "Iter(" in s):
            m = MMENGINE.search(s)
            if m:
                return self._mmengine(m, rank)
        if ("Epoch" in s and "][" in s) or "Iter [" in s or "Iter(" in s:
            m = MMCV.search(s)
            if m:
                return self._mmcv(m, rank)
        if "Epoch:[" in s and "step:[" in s:
            recs = mindformers.read(s, rank)
            if recs is not None:
                return recs
        if "Epoch:[" in s and "](" in s:
            m = EPOCH_STEP_IN_PARENS.search(s)
            if m:
                return self._epoch_step_in_parens(m, rank)
        if "Train: " in s or "Test: " in s:
            m = TIMM.search(s)
            if m:
                return self._timm(m, rank)
        if "json_stats: {" in s:
            recs = slowfast.read(s, rank, self.slowfast_epochs)
            if recs is not None:
                return recs
        if "Epoch: " in s and ("Train Epoch: " in s or "Eval Epoch: " in s):
            recs = self.open_clip.read(s, rank)
            if recs is not None:
                return recs
        # MetricLogger's, DeiT's accuracy, DLRM's, PaddleDetection's, the word language model's and
        # the MNIST example's lines (`printers.py`)
        recs = None
        if "]  eta: " in s:
            recs = printers.metric_logger(s, rank, self.last_step)
        elif "Acc@1 " in s:
            recs = printers.accuracy(s, rank, self.last_step)
        elif "Finished training it " in s or "Testing at - " in s:
            recs = printers.dlrm(s, rank, self.last_step)
        elif "] [" in s and "Epoch: [" in s:
            recs = printers.paddle_detection(s, rank, self.last_step)
        elif " batches | " in s or "| end of epoch " in s or "| End of training |" in s:
            recs = printers.word_lm(s, rank, self.last_step)
        elif "Train Epoch: " in s or "Test set: " in s:
            recs = printers.mnist(s, rank, self.last_step, self.mnist_positions)
        elif "] Iteration[" in s or " Results - Epoch: " in s:
            recs = printers.ignite_example(s, rank, self.last_step, self.epoch_length)
        if recs is not None:
            return recs
        if self.d2_printed and "Total training time" in s:    # Detectron2's last evaluation comes after
            self.d2_printed.pop(rank, None)
        if "epoch time: " in s and "per step time: " in s:
            recs = mindspore.time_monitor(s, rank, self.mindspore_steps.get(rank))
            if recs is not None:
                return recs
        if not stepish(s):
            return []
        if "Starting training from iteration " in s:       # Detectron2's: where its counts begin
            m = D2_START.search(s)
            if m:
                self.d2_start[rank] = int(m.group(1))
                self.d2_means.pop(rank, None)
                self.d2_first.pop(rank, None)
                return []
        text = s
        if "]" in s and ":" in s:
            text = SOURCE_LOCATION.sub("", s)
            if "|DP=" in text:
                text = PARALLEL_PLACE.sub("", text)
        if " - " in text and "| " in text:
            text = LOGURU_SOURCE.sub("| ", text)
        if ".py:" in text and text[-1:].isdigit():
            text = TRAILING_SOURCE.sub("", text)
        loss_monitor = mindspore.LOSS_MONITOR in text
        if loss_monitor:        # MindSpore's LossMonitor: `epoch: 1 step: 100, loss is 2.302`
            text = text.replace(mindspore.LOSS_MONITOR, "loss: ")
        items = pairs(text)
        if not items:
            return []
        fields, extra = normalise(items)
        if "/step" in text or "/Step" in text:
            m = PER_STEP.search(text)
            if m is not None and "step_time_ms" not in fields:
                fields["step_time_ms"] = to_ms(float(m.group(1)), m.group(2), "s")
        tm = step_total(s)
        step = fields.pop("step", None)
        if step is None and tm is not None:     # `Step [100/600]`
            step = int(tm.group(1))
        if step is None:
            return []
        if "d2.utils.events" in s:
            printers.detectron2(fields, extra)
            self._detectron2_printed(rank, step)
            if "step_time_ms" not in fields:
                ms = self._detectron2_step_ms(rank, step, extra.get("time_mean_ms"))
                if ms is not None:
                    fields["step_time_ms"] = ms
        if tm:
            em = EPOCH_OF.search(s) if "poch" in s else None
            if em is not None:      # `epoch: 8/40, iter: 1340/1816`
                step = self._run_step(rank, fields, int(em.group(1)), int(em.group(2)), step, int(tm.group(2)))
            else:
                fields.setdefault("total_steps", int(tm.group(2)))
        if "xent: " in s and " tok/s;" in s:
            _opennmt(s, fields, extra)
        if len(fields) + len(extra) == 0:
            return []
        in_epoch = tm is None and type(fields.get("epoch")) is int
        if not any(k in fields for k in _PROGRESS_FIELDS):
            if in_epoch:
                step = self._in_epoch_step(rank, fields, fields["epoch"], step, training=False)
            return self._eval_line(rank, step, fields, extra)
        if in_epoch:
            step = self._in_epoch_step(rank, fields, fields["epoch"], step)
        if rank is None and "Node[" in s:
            nm = NODE.search(s)
            if nm:
                rank = int(nm.group(1))
        if "Device=xla:" in s:
            rank = self._xla_update(s, rank, fields, extra)
        if "ank " in s:      # `[rank 3] Step: 1 | Loss: ..` (Picotron), `[Rank 0] step: 8`
            rm = RANK_TAG.search(s)
            if rm is not None:
                extra.pop("rank", None)     # (the tag, read as a value)
                if rank is None:
                    rank = int(rm.group(1))
        timers: dict = {}
        for k in list(extra):
            if k in _TIMERS:
                timers[k] = to_ms(extra.pop(k), "s")
        if timers:
            fields["timers_ms"] = timers
            lanes = {}
            data = next((timers[k] for k in _DATA_TIMERS if k in timers), None)
            if data is not None:
                lanes["input"] = data
            comp = sum(timers.get(k, 0.0) for k in ("dtf", "dtb", "dto"))
            if comp:
                lanes["compute"] = round(comp, 6)
            fields["lanes_ms"] = lanes
            if "iter" in timers and "step_time_ms" not in fields:
                fields["step_time_ms"] = round(timers["iter"] + (data or 0.0), 6)
        extra.pop("eta", None)
        if extra:
            fields["metrics"] = dict(list(extra.items())[:24])
        if self.loop_bars.absorb(rank, step, fields):
            return []
        rec = record("progress", self.name, rank, step, **fields)
        if loss_monitor:
            self.mindspore_steps[rank] = step
            if CLOCK.now_ns is not None:
                rec["drawn_ns"] = CLOCK.now_ns      # read live: its step ended now (`mindspore.py`)
        return [rec]

    @staticmethod
    def _xla_update(s: str, rank, fields: dict, extra: dict):
        """PyTorch/XLA's `print_training_update` line: the rank its device names (`xla:0/3`, the
        process's global ordinal), and its `Rate=`, the samples a second of that device."""
        m = XLA_DEVICE.search(s)
        if rank is None and m is not None:
            rank = int(m.group(1))
        extra.pop("xla", None)      # (`Device=xla:0`, read as a value)
        rate = extra.pop("rate", None)
        if rate is not None:
            fields["samples_per_s"] = rate
        return rank

    def _eval_line(self, rank, step: int, fields: dict, extra: dict) -> list[dict]:
        """A step's line of evaluation results alone (`Step 00200 | Validation bpb: 0.8123`,
        `step: 300, eval_loss: 2.1, eval_accuracy: 0.5`): an eval record, where some value's
        names say it is one (most of them name an evaluation and what it measured; a bare
        `validation: 1` is a setting, as nccl-tests prints its own); nothing otherwise."""
        named = sum(1 for k in extra if _EVAL_KEY.search(k) and k.lower() not in _EVAL_WORD_ALONE)
        if not named or named * 2 <= len(extra):
            return []
        metrics = dict(list(extra.items())[:24])
        return [record("eval", self.name, rank, step, phase="result", epoch=fields.get("epoch"),
                       metrics=metrics)]

    def _detectron2_printed(self, rank, step: int) -> None:
        last = self.d2_printed.get(rank, [None])[0]
        period = step - last if last is not None and step > last else None
        self.d2_printed[rank] = [step, None if period is None else step + period]

    def _detectron2_step_ms(self, rank, step: int, mean_ms) -> float | None:
        """The mean time of the iterations since the rank's last line, from Detectron2's mean
        since its timer's warm-up, which times iterations from the third on."""
        start = self.d2_start.get(rank)
        if start is None:
            start = self._detectron2_fresh_start(rank, step, mean_ms)
        now = printed_mean(step - start - 1, mean_ms) if start is not None else None
        if now is None:
            return None
        before = self.d2_means.get(rank, (0, 0.0, 0))
        self.d2_means[rank] = now
        ms = interval_mean(before, now)
        return None if ms is None else round(ms, 3)

    def _detectron2_fresh_start(self, rank, step: int, mean_ms) -> int | None:
        """Where the count began, for a log without its `Starting training` line (cut off, or
        its logger filtered): 0, where the rank's first two lines are one writer period apart
        and the first came at the end of the first period (a resumed run starts at one of its
        checkpoints' iterations, and that line says so).  The first line's mean is then placed
        as well, so that the second gives the time of the iterations between them."""
        if rank not in self.d2_first:
            self.d2_first[rank] = (step, mean_ms)
            return None
        first = self.d2_first[rank]
        self.d2_first[rank] = None
        if first is None or first[0] + 1 != step - first[0]:
            return None
        placed = printed_mean(first[0] - 1, first[1])
        if placed is None:
            return None
        self.d2_start[rank] = 0
        self.d2_means[rank] = placed
        return 0

    def _in_epoch_step(self, rank, fields: dict, epoch: int, i: int, training: bool = True) -> int:
        """The run's step of a line that prints its epoch and a step with no count of the
        epoch's steps (MindSpore's `epoch: 2 step: 100, loss is ..`, a loop's `epoch 2 step 100
        loss ..`).  Where a new epoch's training step is not above the last epoch's highest, the
        step counts in its epoch (`iter_in_epoch`, in place): each epoch runs on after those
        before, as long as the highest step it printed (one more where the count starts at 0).
        Until then, and from a line of an earlier epoch on (a run started again), as printed.
        A line of evaluation values (not `training`) of the epoch runs on so, and counts nothing."""
        state = self.epoch_counts.get(rank)
        if not training:
            if state is None or not state[4] or state[0] != epoch:
                return i
            fields["iter_in_epoch"] = i
            return state[1] + i
        if state is None or epoch < state[0]:     # (an earlier epoch: another run's count)
            self.epoch_counts[rank] = [epoch, 0, i, i == 0, False]
            return i
        last_epoch, before, highest, from_zero, per_epoch = state
        if epoch > last_epoch and (per_epoch or i <= highest):
            before += highest + (1 if from_zero else 0)
            per_epoch, highest = True, i
        state[:] = [epoch, before, max(highest, i), from_zero or i == 0, per_epoch]
        if not per_epoch:
            return i
        fields["iter_in_epoch"] = i
        return before + i

    def _run_step(self, rank, fields: dict, epoch: int, epochs: int, i: int, of: int) -> int:
        """The run's step of a line that prints its epoch of `epochs` and its step `i` of `of`
        (in place: the record's epoch fields).  Whether the step counts in its epoch (`of` an
        epoch) or over the run shows where an epoch begins: with a step lower than the last
        (the epoch's), or one that runs on (the run's).  Until then the step is taken as printed,
        which is both where the stream starts at the first epoch (epochs count from 1 unless
        it shows an epoch 0), and keeps steps rising where it starts later."""
        state = self.epochs.get(rank)
        if state is None:
            state = self.epochs[rank] = [0 if epoch == 0 else 1, None, epoch, i]
        origin, mode, last_epoch, last_i = state
        if mode is None and epoch > last_epoch:
            mode = state[1] = "epoch" if i < last_i else "run"
        state[2], state[3] = epoch, i
        fields["epoch"] = epoch
        if mode == "epoch":
            fields.update(iter_in_epoch=i, iters_per_epoch=of, total_steps=epochs * of)
            return max(epoch - origin, 0) * of + i
        if mode == "run":
            fields["total_steps"] = of
        return i

    def spread_line(self, line: str, rank) -> list[dict] | None:
        """A line of the dict that pprint spread over lines, which `rank` has open
        (`spread_dicts`): [] while it goes on, the dict's record at its last; None where the line
        is none of it (the dict is dropped, and the line read as any other)."""
        if not self.spread.add(line, rank):
            return None
        whole = self.spread.closed(rank)
        if whole is None:
            return []
        return self._dict(whole, rank) or []

    def _dict(self, s: str, rank) -> list[dict] | None:
        """The record of a printed dict with a step (`{'training_steps': 1, 'average_loss': 6.3}`);
        None where `s` is no flat dict, and the line is read in other ways."""
        d = parse_flat_dict(s)
        return self._dict_of(d, rank) if d else None

    def _dict_of(self, d: dict, rank) -> list[dict]:
        step = None
        for k in _DICT_STEP:
            if isinstance(d.get(k), int):
                step = d[k]
                break
        if step is None:
            return []
        # numbers only (a bool is an int, but no number): the dict holds built-in types
        numbers = [(k, v, None) for k, v in d.items()
                   if (v.__class__ is float or v.__class__ is int) and k not in _DICT_STEP_KEYS]
        fields, extra = normalise(numbers)
        if "step_loss" in d:
            fields["loss"] = d["step_loss"]
        if not fields and not extra:
            return []
        # "eval" holds no newline: it is in the joined keys only where it is in one key
        kind = "eval" if "loss" not in fields and "eval" in "\n".join(d) else "progress"
        return [record(kind, self.name, rank, step, **fields, **({"metrics": extra} if extra else {}))]

    def _clu(self, step: int, text: str, rank) -> list[dict]:
        """JAX trainers' metric writer (CLU: Flax examples, T5X): `[100] steps_per_second=2.18,
        train_loss=6.95`, and evaluations' metrics the same way (`[2000] bleu=22.66`).  Each
        `write_scalars` is a line: a step's later lines with no loss (CLU's `ReportProgress`,
        `[100] steps_per_sec=..` and `[100] uptime=..`) add nothing to its record.  Read live, a
        record says when it was read (`drawn_ns`): its step's end, where each step is written."""
        fields, extra = normalise(pairs(text))
        fields.pop("step", None)
        if not fields and not extra:
            return []
        kind = "progress"
        if not any(k in fields for k in _PROGRESS_FIELDS) and _EVAL_WORDS.search(text):
            kind = "eval"
        elif self.clu_steps.get(rank) == step and "loss" not in fields:
            return []
        else:
            self.clu_steps[rank] = step
        rec = record(kind, self.name, rank, step, **fields, **({"metrics": extra} if extra else {}))
        if kind == "progress" and CLOCK.now_ns is not None:
            rec["drawn_ns"] = CLOCK.now_ns
        return [rec]

    def _mmengine(self, m, rank) -> list[dict]:
        return self._mm("mmengine", m.group(1) or m.group(3), int(m.group(2)) if m.group(2) else None,
                        int(m.group(4)), int(m.group(5)), m.group(6), rank)

    def _mmcv(self, m, rank) -> list[dict]:
        total = m.group(4) or m.group(7)
        return self._mm("mmcv", m.group(1) or m.group(5) or "train", int(m.group(2)) if m.group(2) else None,
                        int(m.group(3) or m.group(6)), int(total) if total else None, m.group(8), rank)

    def _mm(self, framework: str, mode: str, epoch: int | None, i: int, total: int | None, text: str,
            rank) -> list[dict]:
        """An MMEngine or mmcv line: an iteration of training (`i` of `total` in its epoch, or of
        the run where no epoch), or an evaluation's last batch (mmcv prints no total there)."""
        items = pairs(text)
        fields, extra = normalise([it for it in items if it[0] != "memory"])
        for name in ("step", "mem_gb", "epoch", "iter_in_epoch", "iters_per_epoch", "total_steps"):
            fields.pop(name, None)      # the bracketed counts' (`[epoch=2]` in its text is not)
        memory = next((num(v) for k, v, _ in items if k == "memory"), None)
        if mode != "train":     # an evaluation: its result once its last batch is done
            metrics = {k: v for k, v in extra.items() if k not in _MM_NOT_METRICS}
            if (total is not None and i != total) or not metrics:
                return []
            return [record("eval", framework, rank, self.last_step.get(rank), phase="result",
                           epoch=epoch, metrics=metrics)]
        data = extra.pop("data_time", None)
        if data is not None:
            fields["timers_ms"] = {"data": seconds_to_ms(data)}
            fields["lanes_ms"] = {"input": seconds_to_ms(data)}
        extra.pop("eta", None)
        if total is None:
            return []
        step = self.last_step[rank] = (epoch - 1) * total + i if epoch is not None else i
        return [record("progress", framework, rank, step, epoch=epoch,
                       iter_in_epoch=i if epoch is not None else None,
                       iters_per_epoch=total if epoch is not None else None,
                       total_steps=None if epoch is not None else total,
                       mem_gb=round(memory / 1024, 6) if memory is not None else None, **fields,
                       **({"metrics": extra} if extra else {}))]

    def _epoch_step_in_parens(self, m, rank) -> list[dict]:
        """MiniMind's line: the run's step from its epoch's, where epochs count from 0 if the
        stream shows an epoch 0 (`_run_step`, told that the step counts in its epoch)."""
        fields, extra = normalise(pairs(m.group(5)))
        for name in ("step", "epoch", "step_time_ms"):
            fields.pop(name, None)
        extra.pop("epoch_time", None)
        if not fields:
            return []
        epoch, i = int(m.group(1)), int(m.group(3))
        state = self.epochs.setdefault(rank, [0 if epoch == 0 else 1, "epoch", epoch, i])
        state[1] = "epoch"
        step = self._run_step(rank, fields, epoch, int(m.group(2)), i, int(m.group(4)))
        return [record("progress", "minimind", rank, step, **fields,
                       **({"metrics": extra} if extra else {}))]

    def _timm(self, m, rank) -> list[dict]:
        i, of = int(m.group(3)), int(m.group(4))
        values: dict = {}
        for im in _TIMM_ITEM.finditer(m.group(5)):
            values[im.group(1)] = (im.group(2), im.group(3), im.group(4), im.group(5))
        if m.group(1) == "Test":    # the evaluation's last batch (of 0..`of`): its means, in brackets
            if i != of:
                return []
            metrics = {k: num(v[3] or v[0]) for k, v in values.items() if k not in ("Time", "Data")}
            return [record("eval", "timm", rank, self.last_step.get(rank), phase="result",
                           metrics={k: v for k, v in metrics.items() if v is not None} or None)]
        if m.group(2) is None:
            return []
        epoch = int(m.group(2))
        fields: dict = {}
        if "Loss" in values:
            fields["loss"] = num(values["Loss"][0])
        if "LR" in values:
            fields["lr"] = num(values["LR"][0])
        if "Time" in values:
            t, _, rate, _ = values["Time"]
            fields["step_time_ms"] = to_ms(num(t), "s")
            fields["samples_per_s"] = num(rate)
        if "Data" in values:
            data = to_ms(num(values["Data"][0]), "s")
            if data is not None:
                fields["timers_ms"] = {"data": data}
                fields["lanes_ms"] = {"input": data}
        # timm numbers its updates from 0 in each epoch, of `of` updates an epoch
        step = self.last_step[rank] = epoch * of + i + 1
        return [record("progress", "timm", rank, step, epoch=epoch,
                       iter_in_epoch=i, iters_per_epoch=of, **fields)]

    def _mxnet(self, m, rank) -> list[dict]:
        r = rank if rank is not None or not m.group(1) else int(m.group(1))
        fields, extra = normalise(pairs(m.group(6)))
        fields.pop("step", None)
        epoch, batch = int(m.group(2)), int(m.group(4))
        return [record("progress", "mxnet", r, self._mxnet_step(r, epoch, batch), step_inferred=True,
                       epoch=epoch, iter_in_epoch=batch, samples_per_s=num(m.group(5)), **parsed(fields, _OWN_MXNET),
                       **({"metrics": extra} if extra else {}))]

    def _mxnet_step(self, rank, epoch: int, batch: int) -> int:
        """A step that runs on across epochs: the batch, after the batches of the epochs this
        stream printed before (the epoch's size is not printed, its last batch is)."""
        state = self.mxnet_epochs.get(rank)
        if state is None:
            state = self.mxnet_epochs[rank] = [epoch, 0, 0]
        elif state[0] != epoch:
            state[0], state[1], state[2] = epoch, state[1] + state[2], 0
        state[2] = max(state[2], batch)
        return state[1] + batch

    def _meter_at(self, text: str, start: int, end: int, rank) -> list[dict] | None:
        if not text.startswith(_METER_TAGS, start, end):
            return None
        m = METER_LINE.fullmatch(text, start, end)
        if m is None or text.find("NCCL", start, end) >= 0:
            return None
        return self._meter(m, rank) if interesting(text[start:end]) else []

    def _mxnet_at(self, text: str, start: int, end: int, rank) -> list[dict] | None:
        if end - start > _MXNET_TAIL or text.find(" Batch [", start, end) < 0:
            return None
        m = MXNET_LINE.fullmatch(text, start, end)
        return None if m is None else self._mxnet(m, rank)

    def _dict_at(self, text: str, start: int, end: int, rank, claimed) -> list[dict] | None:
        """A printed dict (`{'training_steps': 1, 'average_loss': 6.3, ...}`) that gives records."""
        if end - start < 2 or text[start] != "{" or text[end - 1] != "}" \
                or not printable_ascii(text, start, end):
            return None
        line = text[start:end]
        d = parse_flat_dict(line)
        if self._claimed_dict(line, d, claimed):
            return None
        recs = None
        if d and not ("%|" in line or "][" in line or "Speed:" in line or "| " in line):
            recs = self._dict_of(d, rank)   # what `parse` comes to, with none of its other shapes
        if recs is None:
            recs = self.parse(line, rank)
        return recs or None       # no record: `feed` also asks the events

    def _claimed_dict(self, line: str, d: dict | None, claimed) -> bool:
        """`claimed(line)`, asked once per shape of a dict of numbers alone: its lines differ in
        their digits, which decide no `detect`, and asking all of them cost a line like MLPerf
        BERT's a third of its time.  (`claimed` remembers the shapes of lines too, but a dict's
        floats change their count of digits from line to line: its keys alone still save a
        seventh.)"""
        if not d or "(" in line or not all(v.__class__ is float or v.__class__ is int for v in d.values()):
            return claimed(line)
        keys = tuple(d)
        known = self.dict_claims.get(keys)
        if known is None:
            known = claimed(line)
            if len(self.dict_claims) < 256:
                self.dict_claims[keys] = known
        return known

    def _meter(self, m, rank) -> list[dict]:
        tag = m.group(1) or ""
        epoch, i, total = int(m.group(2)), int(m.group(3)), int(m.group(4))
        fields: dict = {}
        timers = {}
        tail = m.group(5)
        if "\teta " in tail:
            tail = _SWIN_ETA.sub("\t", tail)
        for k, printed in meter_items(tail).items():
            v = num(printed)
            if v is None:
                continue
            kl = k.lower()
            field = _METER_FIELDS.get(kl)
            if field is None:
                if kl.startswith("loss"):
                    fields.setdefault("loss", v)
                else:
                    fields.setdefault("metrics", {})[k] = v
            elif field == "step_time_ms":
                fields[field] = seconds_to_ms(v)
            elif field == "data":
                timers[field] = seconds_to_ms(v)
            elif field == "mem_mb":
                fields["mem_gb"] = to_gb(v, "mb")
            else:
                fields[field] = v
        if timers:
            fields["timers_ms"] = timers
            fields["lanes_ms"] = {"input": timers["data"]}
        if tag.upper().startswith(("TEST", "VAL", "EVAL")):
            # a batch of an evaluation (GNMT's `TEST [0][0/3]`): its first says one began, after
            # the training step the rank had reached; the rest are its progress, no result
            if i:
                return []
            rec = record("eval", self.name, rank, self.last_step.get(rank), phase="start")
            return [rec] if self.first_start(rec) else []
        step = self.last_step[rank] = epoch * total + i + 1    # (the step Swin's ` * Acc@1 ..` comes after)
        return [record("progress", self.name, rank, step, epoch=epoch, iter_in_epoch=i,
                       iters_per_epoch=total, **fields)]
