"""The metric printers of widely copied training scripts, read for the generic parser:

- torchvision's `MetricLogger.log_every` (its reference scripts, and DeiT, MAE, DETR, DINO,
  ConvNeXt, ... which copy it): `Epoch: [2]  [ 150/1251]  eta: 0:20:52  lr: 0.000201  loss:
  6.8610 (6.8841)  time: 1.0552  data: 0.0035  max mem: 8249`, the batch counted from 0 in its
  epoch.  `time` and `data` are means over the last 20 iterations (`SmoothedValue`'s window),
  `max mem` is MB.  An evaluation prints `Test:  [  0/196]  ...` per batch, then DeiT's
  `Test:  Acc@1 76.130 Acc@5 92.862` (torchvision's own), DeiT's `* Acc@1 81.234 Acc@5 95.123
  loss 0.812`, or with `;` between (the result over all batches: the batches' own lines read
  `Acc@1: 78.1 (76.5)`, a value and its mean, and are not results).
- Detectron2's `CommonMetricPrinter`: `[11/01 11:27:04 d2.utils.events]:  eta: 8:05:12  iter: 1259
  total_loss: 1.012  ...  time: 0.3322  last_time: 0.3310  data_time: 0.0334  last_data_time:
  0.0301  lr: 0.01  max_mem: 3961M`, the iteration counted from 0.  Its `time` is the mean
  since the timer's warm-up (timed from the run's third iteration on) and `data_time` a mean of
  the last 20: the step's own are `last_time` and `last_data_time`, which the releases (0.5,
  0.6) do not print.  There the mean gives the time of the iterations since the last line
  (`means.py`), once `Starting training from iteration N` has said where the count began, or
  the first line came at the end of the first writer period (a run from its start).
- DLRM's `Finished training it 1024/315310 of epoch 0, 15.12 ms/it, loss 0.476438, accuracy
  78.931 %` (the mean over the iterations since its last line) and `Testing at - 1000/2000 of
  epoch 0, loss 0.516816, accuracy 78.123 %, best 78.123 %`.
- PaddleDetection's `LogPrinter` (and PaddleX's detection models): `Epoch: [1] [ 20/200]
  learning_rate: 0.000025 loss: 5.93 loss_cls: 0.14 ... eta: 10 days, 19:39:33 batch_cost: 6.6231
  data_cost: 6.0753 ips: 4.8315 images/s`, since 2.7 followed by `, max_mem_reserved: 42653 MB,
  max_mem_allocated: 31490 MB`.  Epoch and batch count from 0, the batch padded to the width of
  the count; `batch_cost` and `data_cost` are the batch's own seconds.
- The word-level language model loop of PyTorch's examples (`word_language_model`), and the
  Transformer tutorial, AWD-LSTM and the research code that copies them: `| epoch   6 |   200/
  2983 batches | lr 5.00 | ms/batch 32.47 | loss  4.95 | ppl   140.84` (AWD-LSTM adds `| bpc
  ...`) every `log_interval` batches, the batch counted from 0 in its epoch and the epoch from 1;
  `ms/batch` is the mean over the batches since the last line.  Each epoch ends with `| end of
  epoch   6 | time: 127.27s | valid loss  4.35 | valid ppl    77.44` (the epoch's time,
  training and validation), and the run with `| End of training | test loss  4.25 | test ppl
  70.11`.
- The MNIST example of PyTorch's examples, and the many loops that copy it (its DDP variants,
  Kubeflow's and Katib's, which print `loss=2.3000`): `Train Epoch: 1 [640/60000 (1%)]\tLoss:
  2.213470` every `log_interval` batches, the sample the batch starts at and the dataset's size
  (not the batch: the batch size is not printed, so the step counts the positions printed,
  `step_inferred`); each epoch ends with `Test set: Average loss: 0.0468, Accuracy: 9842/10000
  (98%)`.
- The MNIST examples of PyTorch-Ignite, and the handlers copied from them: `Epoch[2]
  Iteration[60/469] Loss: 0.31` every `log_interval` iterations, the engine's iteration (counted
  over the run, from 1; the `/469` is an epoch's); each epoch ends with `Training Results -
  Epoch: 2  Avg accuracy: 0.95 Avg loss: 0.16` and `Validation Results - ...` (an evaluation
  over each set, at the epoch's last iteration).
"""
from __future__ import annotations

from .base import OWN_EPOCH_COUNTS, Pattern, num, parsed, record, seconds_to_ms, to_gb
from .kv import normalise, pairs

METRIC_LOGGER = Pattern(r"(.{0,120}?)\[\s*+(\d++)/(\d++)\]  eta: \S{1,24}+  (.{0,2000}+)")
_EPOCH = Pattern(r"Epoch: \[(\d++)")
ACCURACY = Pattern(r"Acc@1:?+ ++([\d.]++)(?:;?+ ++Acc@5:?+ ++([\d.]++))?+(?:;?+ ++loss:?+ ++([\d.]++))?+ *+$")
DLRM = Pattern(r"Finished training it (\d++)/(\d++) of epoch (\d++), ([\d.]++) ms/it, loss ([\d.]++)"
               r"(?:, accuracy ([\d.]++) %)?")
DLRM_TEST = Pattern(r"Testing at - (\d++)/(\d++) of epoch (\d++),(.{0,300}+)")
_DLRM_TEST_ITEM = Pattern(r"(loss|accuracy|auc|best) ([\d.]++)")
_EVAL_HEADERS = ("Test", "Val", "Eval")
WORD_LM = Pattern(r"\| epoch +(\d++) \| +(\d++)/ *+(\d++) batches \|(.{0,400}+)")
WORD_LM_END = Pattern(r"\| (?:end of epoch +(\d++)|End of training) \|(.{0,400}+)")
MNIST = Pattern(r"Train Epoch: (\d{1,9}+) \[(\d{1,15}+)/(\d{1,15}+) \((\d{1,4}+)%\)\]\s++(?:Loss: |loss=)([-\d.eE+]++|nan|inf)")
MNIST_TEST = Pattern(r"Test set: Average loss: ([-\d.eE+]++|nan|inf), Accuracy: (\d{1,15}+)/(\d{1,15}+)")
IGNITE_ITERATION = Pattern(r"Epoch\[(\d{1,9}+)\] Iteration\[(\d{1,15}+)/(\d{1,15}+)\] Loss: ([-\d.eE+]++|nan|inf)")
IGNITE_RESULTS = Pattern(r"(Training|Validation) Results - Epoch: (\d{1,9}+) +Avg accuracy: ([-\d.eE+]++|nan) +"
                         r"Avg loss: ([-\d.eE+]++|nan|inf)")
_BAR_ITEM = Pattern(r" ([A-Za-z][\w/ ]{0,30}?):? ++(-?[\d.]++(?:e[-+]?\d++)?+)s? *+(?:\||$)")
PADDLE_DETECTION = Pattern(r"Epoch: \[(\d++)\] \[ *+(\d++)/(\d++)\] (.{0,4000}+)")
_PADDLE_ETA = Pattern(r"eta: (?:\d{1,6}+ days?, )?\d{1,4}+:\d\d:\d\d")


def metric_logger(s: str, rank, last_step: dict) -> list[dict] | None:
    """The records of a MetricLogger line; None for another line."""
    m = METRIC_LOGGER.search(s)
    if m is None:
        return None
    header, i, of = m.group(1), int(m.group(2)), int(m.group(3))
    items: dict = {}
    for item in m.group(4).split("  "):
        name, colon, printed = item.strip().partition(": ")
        v = num(printed.split(" ", 1)[0]) if colon else None
        if v is not None:
            items[name] = v
    label = header.rstrip(": ").rsplit(":", 1)[-1].strip()   # what a launcher or timestamp left
    if label.startswith(_EVAL_HEADERS):
        if i != 0:
            return []
        return [record("eval", "generic", rank, last_step.get(rank), phase="start")]
    em = _EPOCH.search(header)
    epoch = int(em.group(1)) if em else None
    fields: dict = {}
    if "loss" in items:
        fields["loss"] = items.pop("loss")
    if "lr" in items:
        fields["lr"] = items.pop("lr")
    if "time" in items:
        fields["step_time_ms"] = seconds_to_ms(items.pop("time"))
    if "data" in items:
        data = seconds_to_ms(items.pop("data"))
        fields["timers_ms"] = {"data": data}
        fields["lanes_ms"] = {"input": data}
    if "max mem" in items:
        fields["mem_gb"] = to_gb(items.pop("max mem"), "mb")
    step = last_step[rank] = (epoch * of if epoch is not None else 0) + i + 1
    return [record("progress", "generic", rank, step, epoch=epoch, iter_in_epoch=i, iters_per_epoch=of,
                   **parsed(fields, OWN_EPOCH_COUNTS), metrics=items or None)]


def accuracy(s: str, rank, last_step: dict) -> list[dict] | None:
    """The `Test:  Acc@1 .. Acc@5 ..` line that ends a MetricLogger evaluation; None for another
    line with `Acc@1 `."""
    m = ACCURACY.search(s)
    if m is None:
        return None
    metrics = {"acc1": num(m.group(1))}
    if m.group(2):
        metrics["acc5"] = num(m.group(2))
    if m.group(3):
        metrics["loss"] = num(m.group(3))
    return [record("eval", "generic", rank, last_step.get(rank), phase="result", metrics=metrics)]


def detectron2(fields: dict, extra: dict) -> None:
    """Detectron2's means, read as `key: value` pairs, put where they belong (in place)."""
    mean = fields.pop("step_time_ms", None)
    if mean is not None:
        extra["time_mean_ms"] = mean
    last = extra.pop("last_time", None)
    if last is not None:
        fields["step_time_ms"] = seconds_to_ms(last)
    extra.pop("data_time", None)
    data = extra.pop("last_data_time", None)
    if data is not None:
        ms = seconds_to_ms(data)
        fields["timers_ms"] = {"data": ms}
        fields["lanes_ms"] = {"input": ms}


def dlrm(s: str, rank, last_step: dict) -> list[dict] | None:
    """DLRM's training and testing lines; None for another line.  Its iteration counts from 1
    in each epoch, of `of` an epoch: the step is the run's."""
    m = DLRM.search(s)
    if m is not None:
        it, of, epoch = int(m.group(1)), int(m.group(2)), int(m.group(3))
        step = last_step[rank] = epoch * of + it
        acc = num(m.group(6)) if m.group(6) else None
        return [record("progress", "dlrm", rank, step, epoch=epoch, iter_in_epoch=it, iters_per_epoch=of,
                       step_time_ms=num(m.group(4)), loss=num(m.group(5)),
                       metrics={"accuracy": acc} if acc is not None else None)]
    t = DLRM_TEST.search(s)
    if t is None:
        return None
    it, of, epoch = int(t.group(1)), int(t.group(2)), int(t.group(3))
    metrics = {im.group(1): num(im.group(2)) for im in _DLRM_TEST_ITEM.finditer(t.group(4))}
    return [record("eval", "dlrm", rank, epoch * of + it, phase="result", metrics=metrics or None)]


def paddle_detection(s: str, rank, last_step: dict) -> list[dict] | None:
    """The record of a PaddleDetection training line; None for another line."""
    m = PADDLE_DETECTION.search(s)
    if m is None:
        return None
    epoch, i, of = int(m.group(1)), int(m.group(2)), int(m.group(3))
    fields, extra = normalise(pairs(_PADDLE_ETA.sub("", m.group(4))))
    data = extra.pop("data_cost", None)
    if data is not None:
        ms = seconds_to_ms(data)
        fields["timers_ms"] = {"data": ms}
        fields["lanes_ms"] = {"input": ms}
    allocated = extra.pop("max_mem_allocated", None)
    if allocated is not None:
        fields["mem_gb"] = to_gb(allocated, "mb")
    step = last_step[rank] = epoch * of + i + 1
    return [record("progress", "generic", rank, step, epoch=epoch, iter_in_epoch=i, iters_per_epoch=of,
                   **parsed(fields, OWN_EPOCH_COUNTS), metrics=extra or None)]


def word_lm(s: str, rank, last_step: dict) -> list[dict] | None:
    """The word language model loop's training line, or the line that ends its epoch or run;
    None for another line."""
    m = WORD_LM.search(s)
    if m is not None:
        epoch, batch, of = int(m.group(1)), int(m.group(2)), int(m.group(3))
        items = _bar_items(m.group(4))
        step = last_step[rank] = (epoch - 1) * of + batch + 1
        fields = {key: items.pop(name) for name, key in (("ms/batch", "step_time_ms"), ("loss", "loss"),
                                                          ("lr", "lr")) if name in items}
        return [record("progress", "generic", rank, step, epoch=epoch, iter_in_epoch=batch,
                       iters_per_epoch=of, **fields, metrics=items or None)]
    m = WORD_LM_END.search(s)
    if m is None:
        return None
    items = _bar_items(m.group(2))
    if "time" in items:
        items["epoch_time_s"] = items.pop("time")
    return [record("eval", "generic", rank, last_step.get(rank), phase="result",
                   epoch=int(m.group(1)) if m.group(1) else None, metrics=items or None)]


def _bar_items(text: str) -> dict:
    """`| name value | name: value` items (a value may end in `s`), a name's spaces as `_`."""
    return {"_".join(im.group(1).split()): num(im.group(2)) for im in _BAR_ITEM.finditer(text)}


_MNIST_HELD = 64
"""How many of the latest positions each stream remembers: enough for every process that shares
it to print the position the first one printed."""


def mnist(s: str, rank, last_step: dict, positions: dict) -> list[dict] | None:
    """The MNIST example's training line or its test result; None for another line.

    The step counts the positions (epoch, sample) printed: where the processes of a job share a
    stream unprefixed, each prints every position, and each print of one is the same step
    (`positions`: rank -> position -> step)."""
    m = MNIST.search(s)
    if m is not None:
        epoch, sample = int(m.group(1)), int(m.group(2))
        held = positions.setdefault(rank, {})
        step = held.get((epoch, sample))
        if step is None:
            step = held[(epoch, sample)] = (max(held.values()) if held else 0) + 1
            if len(held) > _MNIST_HELD:
                del held[next(iter(held))]
        last_step[rank] = step
        return [record("progress", "generic", rank, step, step_inferred=True, epoch=epoch, loss=num(m.group(5)),
                       metrics={"sample": sample, "dataset_size": int(m.group(3)), "epoch_pct": int(m.group(4))})]
    m = MNIST_TEST.search(s)
    if m is None:
        return None
    correct, total = int(m.group(2)), int(m.group(3))
    return [record("eval", "generic", rank, last_step.get(rank), phase="result", loss=num(m.group(1)),
                   metrics={"accuracy": round(correct / total, 6) if total else None, "correct": correct,
                            "total": total})]


def ignite_example(s: str, rank, last_step: dict, epoch_length: dict) -> list[dict] | None:
    """Ignite's MNIST examples' training line or an epoch's results; None for another line.
    An epoch's results are at its last iteration, where a training line gave the epoch's length
    (`epoch_length`: rank -> iterations an epoch); else at the last iteration printed."""
    m = IGNITE_ITERATION.search(s)
    if m is not None:
        epoch, step, per_epoch = int(m.group(1)), int(m.group(2)), int(m.group(3))
        last_step[rank] = step
        if per_epoch:
            epoch_length[rank] = per_epoch
        return [record("progress", "ignite", rank, step, epoch=epoch, iters_per_epoch=per_epoch or None,
                       loss=num(m.group(4)))]
    m = IGNITE_RESULTS.search(s)
    if m is None:
        return None
    ended = int(m.group(2))
    length = epoch_length.get(rank)
    at = ended * length if length else last_step.get(rank)
    return [record("eval", "ignite", rank, at, phase="result", epoch=ended,
                   subset="train" if m.group(1) == "Training" else "validation",
                   metrics={"accuracy": num(m.group(3)), "loss": num(m.group(4))})]
