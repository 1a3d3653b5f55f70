"""open_clip's training and evaluation lines (`open_clip_train/train.py` and its forks):

    Train Epoch: 0 [  6464/109468 (6%)] Data (t): 0.158 Batch (t): 0.559, 114.5/s, 57.2/s/gpu
      LR: 0.000001 Logit Scale: 99.995 Contrastive_loss: 0.97884 (1.023) Loss: 0.97884 (1.023)

(one line; older releases print `Loss: v (mean)` first, and one rate with no per-GPU one).
The bracket counts samples, not steps: `batch_count * batch_size * accum_freq * world_size` of
the epoch's `num_samples`.  A rank logs each epoch's first step and every `--log-every-n-steps`
after, so the greatest common divisor of the samples it printed is one step's samples, G (the
first line alone gives it, where the log starts with an epoch, `(0%)`; the first line of a log
cut inside one is held until the rank's next gives the divisor, or the stream ends); the run's
step is then `epoch * (num_samples // G) + samples // G`, epochs counted from 0.  `Data (t)`
and `Batch (t)` are means over the steps since the last line: the step's time and its data wait
(input lane).
The one rate is total samples a second where the per-GPU one follows it, and is left among the
metrics where it stands alone (some forks print the per-GPU one there).

`Eval Epoch: E image_to_text_R@1: 0.41\t...\tclip_val_loss: 0.0076\tepoch: E\tnum_samples: N`
after training epoch E-1 (and E 0 before training) is an evaluation at that epoch's last step;
the running `Eval Epoch: E [n / N]\tClip Loss: ..` lines give nothing."""
from __future__ import annotations

import math

from .base import Pattern, num, record, seconds_to_ms

TRAIN = Pattern(r"Train Epoch: (\d{1,9}+) \[\s*+(\d{1,15}+)/(\d{1,15}+) \((\d{1,4}+)%\)\](.{0,4000}+)")
ITEM = Pattern(r"([A-Z][\w@ ]{0,40}?(?: \(t\))?): (-?[\d.]++(?:[eE][-+]?\d++)?|nan|inf)"
               r"(?: \((-?[\d.]++(?:[eE][-+]?\d++)?|nan|inf)\))?(?:, ([\d.]++(?:[eE][-+]?\d++)?)/s)?"
               r"(?:, [\d.]++(?:[eE][-+]?\d++)?(/s/gpu))?")
EVAL = Pattern(r"Eval Epoch: (\d{1,9}+) ([^\[].{0,8000}+)")
_EVAL_ITEM = Pattern(r"([\w@/.-]{1,120}+): (-?[\d.]++(?:[eE][-+]?\d++)?|nan|inf)")
_NOT_METRICS = frozenset(("epoch", "num_samples"))
_METRICS = 32


class OpenClipLines:
    """Each rank's samples a step (G) and steps an epoch, learnt from its training lines."""

    def __init__(self) -> None:
        self.step_samples: dict = {}    # rank -> G so far (the gcd of the samples printed)
        self.per_epoch: dict = {}       # rank -> steps an epoch
        self.held: dict = {}            # rank -> the match of its first line, cut inside an epoch

    def read(self, s: str, rank) -> list[dict] | None:
        """The records of an open_clip line; None for any other line (the MNIST example's
        `Train Epoch: 1 [0/60000 (0%)]\tLoss: ..` names no `Batch (t)`)."""
        if "Batch (t): " in s:
            m = TRAIN.search(s)
            if m is not None:
                return self._train(m, rank)
        m = EVAL.search(s)
        if m is not None:
            return self._eval(int(m.group(1)), m.group(2), rank)
        return None

    def flush(self) -> list[dict]:
        """The first line of each rank whose next never came, by the divisor it gives alone."""
        held, self.held = self.held, {}
        return [r for rank, m in held.items() for r in self._step(m, rank)]

    def _train(self, m, rank) -> list[dict]:
        samples = int(m.group(2))
        if samples <= 0:
            return []
        if rank not in self.step_samples and m.group(4) != "0" and rank not in self.held:
            self.held[rank] = m         # cut inside an epoch: its samples are many steps'
            return []
        first = self.held.pop(rank, None)
        out: list = []
        if first is not None:
            self.step_samples[rank] = math.gcd(int(first.group(2)), samples)
            out = self._step(first, rank)
        return out + self._step(m, rank)

    def _step(self, m, rank) -> list[dict]:
        """The record of a training line, its step by the rank's divisor so far and this line's."""
        epoch, samples, of = int(m.group(1)), int(m.group(2)), int(m.group(3))
        g = self.step_samples[rank] = math.gcd(self.step_samples.get(rank, 0), samples)
        per_epoch = self.per_epoch[rank] = of // g
        fields: dict = {}
        metrics: dict = {}
        for item in ITEM.finditer(m.group(5)):
            name, value = item.group(1), num(item.group(2))
            if value is None:
                continue
            if name == "Batch (t)":
                fields["step_time_ms"] = seconds_to_ms(value)
                rate = num(item.group(4) or "")
                if rate is not None:
                    if item.group(5):
                        fields["samples_per_s"] = rate
                    else:
                        metrics["samples/s"] = rate
            elif name == "Data (t)":
                data = seconds_to_ms(value)
                fields["timers_ms"] = {"data": data}
                fields["lanes_ms"] = {"input": data}
            elif name == "LR":
                fields["lr"] = value
            elif name == "Loss":
                fields["loss"] = value
            elif len(metrics) < _METRICS:
                metrics[name.lower().replace(" ", "_")] = value
        step = epoch * per_epoch + samples // g
        return [record("progress", "open_clip", rank, step, epoch=epoch, iter_in_epoch=samples // g,
                       iters_per_epoch=per_epoch, **fields, **({"metrics": metrics} if metrics else {}))]

    def _eval(self, epoch: int, text: str, rank) -> list[dict]:
        metrics: dict = {}
        for item in _EVAL_ITEM.finditer(text):
            name = item.group(1)
            value = num(item.group(2))
            if value is not None and name not in _NOT_METRICS and len(metrics) < _METRICS:
                metrics[name] = value
        if not metrics:
            return []
        per_epoch = self.per_epoch.get(rank)
        loss = metrics.get("clip_val_loss")
        return [record("eval", "open_clip", rank, epoch * per_epoch if per_epoch else None, phase="result",
                       epoch=epoch, loss=loss, metrics=metrics)]
