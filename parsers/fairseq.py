"""fairseq's progress and validation lines, and metaseq's (its descendant, which trained OPT).

`fairseq_cli/train.py` logs its stats through `fairseq/logging/progress_bar.py` under a logger
named for what they are: `train_inner` every `--log-interval` updates, `train` at an epoch's
end (the epoch's means), and the validation subset's name (`valid`) after each validation.  The
step is `num_updates`; the `100 / 1975` of a `train_inner` line is the batch in its epoch.
- `--log-format json`: `| train_inner | {"epoch": 1, "update": 0.167, "loss": "8.725", ...,
  "num_updates": "2100", ...}`; an epoch's and a validation's keys begin with the tag
  (`train_loss`, `valid_loss`, `valid_num_updates`).
- `simple` (the default where stderr is no terminal): `| train_inner | epoch 001:    100 / 1975
  loss=12.834, ..., num_updates=100, ...`, `| train | epoch 001 | loss 8.5 | ... | num_updates
  1563 | ...` and `| valid | epoch 001 | valid on 'valid' subset | loss 7.9 | ...`.
- `fairseq-hydra-train` logs the same behind `[2020-12-19 17:41:22,153][valid][INFO] - `.
- Releases before 0.9 name no logger: `| epoch 009:   1000 / 2737 loss=6.220, ...`, `| epoch 008 |
  loss 6.326 | ...` and `| epoch 008 | valid on 'valid' subset | valid_loss 6.43844 | ...`.
- fairseq-py of 2017 counts no updates: `| epoch 010  2000 / 8223 loss=1.27 (1.50), wps=962, ...`
  (each value, then its mean over the epoch) is batch 2000 of the epoch's 8223, an update each:
  the run's step 9 * 8223 + 2000.  Its epoch's means and its validations name no step either, and
  give no record.
Checkpoint saves and loads (`Saved checkpoint ... (writing took 12.2 seconds)`) and `begin
validation on "valid" subset` are events (`events.py`).
"""
from __future__ import annotations

import json

from .base import Pattern, num, record
from .kv import normalise

TAGGED = Pattern(r"(?:\| |\]\[)(train_inner|train|valid\w{0,40}+)(?: \| |\]\[[A-Z]{4,8}+\] - )"
                 r"(\{.{0,8000}+|epoch \d++.{0,8000}+)")
LEGACY = Pattern(r"\| (epoch \d{3,}+(?::|(?= \| )).{0,8000}+)")
"""A line of the releases before 0.9: the epoch zero-padded to three digits (the word language
model's `| epoch   6 |   200/ 2983 batches |` pads with spaces: `printers.word_lm`)."""
INNER = Pattern(r"epoch (\d++):\s++\d++ / \d++ (.{0,8000}+)")
INNER_2017 = Pattern(r"\| epoch (\d{3,}+)  \s*+(\d++) / (\d++) (.{0,8000}+)")
PIPES = Pattern(r"epoch (\d++) \| (?:valid on '([^']{1,200}+)' subset \| )?(.{0,8000}+)")
KEPT = ("loss_scale", "ppl", "wpb", "bsz", "train_wall", "wall", "gb_free")
"""Stats kept under their own names (among normalise's extras)."""


def read(s: str, rank) -> list[dict] | None:
    """The record of a fairseq stats line; None for any other line."""
    tag: str | None
    m = TAGGED.search(s)
    if m is not None:
        tag, body = m.group(1), m.group(2)
        if body[0] == "{":
            return _json(tag, body, rank)
    else:
        m = LEGACY.match(s)
        if m is None:
            early = INNER_2017.match(s)
            return _record_2017(early, rank) if early is not None else None
        tag, body = None, m.group(1)
    inner = INNER.match(body)
    if inner is not None:
        items = [part.partition("=") for part in inner.group(2).split(", ")]
        return _record("train_inner", int(inner.group(1)), {k.strip(): v for k, _, v in items}, rank)
    piped = PIPES.match(body)
    if piped is None:
        return None
    subset = piped.group(2)
    if tag is None:
        tag = "valid" if subset else "train"
    values = {}
    for part in piped.group(3).split(" | "):
        key, _, value = part.strip().rpartition(" ")
        if key:
            # before 0.9, a validation's keys began with its subset's name: `valid_loss`
            values[key[len(subset) + 1:] if subset and key.startswith(subset + "_") else key] = value
    if "num_updates" not in values:
        return None     # (fairseq-py's of 2017, `| epoch 005 | train loss 2.92 | ...`, count no updates)
    return _record(tag, int(piped.group(1)), values, rank, subset)


def _json(tag: str, body: str, rank) -> list[dict] | None:
    body = body.rstrip()
    if not body.endswith("}"):
        return None
    try:
        d = json.loads(body)
    except ValueError:
        return None
    if not isinstance(d, dict):
        return None
    prefix = tag + "_" if tag != "train_inner" else ""
    values = {k[len(prefix):] if prefix and k.startswith(prefix) else k: str(v) for k, v in d.items()}
    epoch = num(values.pop("epoch", ""))
    return _record(tag, int(epoch) if epoch is not None else None, values, rank)


def _record_2017(m, rank) -> list[dict]:
    """A batch line of fairseq-py's of 2017 (`INNER_2017`'s match): `loss=1.27 (1.50), wps=962,
    ...`, each value the batch's, then (for some) the epoch's mean so far, in brackets."""
    epoch, i, of = int(m.group(1)), int(m.group(2)), int(m.group(3))
    items = (part.partition("=") for part in m.group(4).split(", ")[:32])
    fields, extra = normalise([(k.strip(), v.split(" ", 1)[0], None) for k, _, v in items])
    fields.pop("step", None)
    _keep(fields, extra)
    step = max(epoch - 1, 0) * of + i
    return [record("progress", "fairseq", rank, step, epoch=epoch, iter_in_epoch=i, iters_per_epoch=of, **fields)]


def _record(tag: str, epoch: int | None, values: dict, rank, subset: str | None = None) -> list[dict]:
    updates = num(values.pop("num_updates", ""))
    step = int(updates) if updates is not None else None
    fields, extra = normalise([(k, v, None) for k, v in values.items()])
    fields.pop("step", None)
    if epoch is not None:
        fields["epoch"] = epoch
    if not tag.startswith("train"):     # its scores are the task's own (`bleu`, `wer`, `best_bleu`, ...)
        fields.update(phase="result", subset=subset or tag, metrics=extra or None)
        return [record("eval", "fairseq", rank, step, **fields)]
    _keep(fields, extra)
    if tag == "train":
        fields["summary"] = True        # the epoch's means, at its last update
    return [record("progress", "fairseq", rank, step, **fields)]


def _keep(fields: dict, extra: dict) -> None:
    """The stats of `KEPT` among the extras, into the record's fields."""
    for k in KEPT:
        if k in extra:
            fields[k] = extra[k]
