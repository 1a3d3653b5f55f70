"""MindSpore Transformers' (MindFormers') training line, its `MFLossMonitor` callback's:

    { Epoch:[  1/  2], step:[    2/   19], loss: 10.633, per_step_time: 1752ms, lr: 1e-05,
      overflow cond: False, loss_scale: 1.0, global_norm: [1.508834], train_throughput_per_npu: 170.738T

(one line, behind its logger's `- INFO - `; without dataset sinking the loss is printed with its
mean so far, `loss:[10.633/10.641]`).  The step is the epoch's: the run's is
`(epoch - 1) * steps_per_epoch + step`, as the callback itself counts it for its summaries.
`train_throughput_per_npu` is the model's TFLOPS per device; `global_norm` a one-element
array (`[1.508834]`, its colon left out in some releases' lines).  The bar on the line after
(`10.0% |█████   | 0.81 samples/s/p  1:23:45 }`) gives nothing."""
from __future__ import annotations

from .base import Pattern, num, record

LINE = Pattern(r"\{ Epoch:\[\s*+(\d{1,9}+)/\s*+(\d{1,9}+)\], step:\[\s*+(\d{1,12}+)/\s*+(\d{1,12}+)\], (.{0,2000}+)")
ITEM = Pattern(r"([a-z_][a-z_ ]{0,40}?):? ?(\[)?(-?[\d.]++(?:e[-+]?\d++)?)(?:/-?[\d.]++(?:e[-+]?\d++)?)?(\])?"
               r"(ms|T)?(?=,|\s|$)")
_FIELDS = {"loss": "loss", "lr": "lr", "global_norm": "grad_norm", "train_throughput_per_npu": "tflops"}
_METRICS = 16


def read(s: str, rank) -> list[dict] | None:
    """The record of a MindFormers training line; None for any other line."""
    m = LINE.search(s)
    if m is None:
        return None
    epoch, epochs, step, per_epoch = (int(g) for g in m.group(1, 2, 3, 4))
    if epoch < 1 or per_epoch < 1:
        return None
    fields: dict = {}
    metrics: dict = {}
    for item in ITEM.finditer(m.group(5)):
        name, value = item.group(1), num(item.group(3))
        if value is None or bool(item.group(2)) != bool(item.group(4)):
            continue    # (`global_norm: [1 31049]`, two elements printed: no one norm)
        if name == "per_step_time":
            if item.group(5) == "ms":
                fields["step_time_ms"] = value
        elif name in _FIELDS:
            fields.setdefault(_FIELDS[name], value)
        elif len(metrics) < _METRICS:
            metrics[name.replace(" ", "_")] = value
    if "overflow cond: True" in m.group(5):
        metrics["overflow"] = 1
    return [record("progress", "mindformers", rank, (epoch - 1) * per_epoch + step, total_steps=epochs * per_epoch,
                   epoch=epoch, iter_in_epoch=step, iters_per_epoch=per_epoch, **fields,
                   **({"metrics": metrics} if metrics else {}))]
