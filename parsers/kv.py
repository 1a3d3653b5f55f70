"""`key: value`, `key=value` and `key value` pairs -> normalised record fields."""
from __future__ import annotations

import re

from .base import Pattern, num, to_gb, to_ms

# key, its unit in brackets, separator, number, unit.  Keys may hold '/', '.', '-' and up to two
# inner spaces ('max mem', 'train loss'), and be followed by their unit ('time (ms): 153.2',
# 'throughput (samples/s): 55'); every quantifier is bounded or possessive.
_PAIR = Pattern(
    r"(?P<key>[A-Za-z_][\w/.@-]{0,48}+(?: [a-z_][\w/]{0,20}+){0,2}?)"
    r"(?: ?\((?P<kunit>ms|s|sec|GiB|GB|MiB|MB|it/s|s/it|tok/s|tokens/s|samples/s)\))?"
    r"(?:\s{0,3}+[:=]\s{0,8}+|\s{1,8}+)"
    r"(?P<val>[-+]?(?:\d[\d,]{0,30}+(?:\.\d*+)?|\.\d++)(?:[eE][-+]?\d{1,3}+)?|nan|inf|N/A)"
    r"(?:(?P<unit>ms|s|sec|%|GiB|GB|Gb|MiB|MB|Mb|it/s|s/it|tok/s|K|M|G|T)|\x20(?P<sunit>tokens/s|tok/s|samples/s|ms|sec|s|GiB|GB|MiB|MB)"
    r"(?![\w./]))?(?![\w.]|:\d)")
"""A unit follows its number, or a space and then a unit of time, memory or throughput (`iter time:
112.20 ms`, `step-time 73.352 sec`, prime-rl's `Throughput: 3324 tokens/s`); K, M, G and T scale
the number (`tokens_per_sec: 2.35K`).  A number followed by `:` and a digit is a clock's hours
(PyTorch/XLA's `Time=21:35:07`), not a value."""
SCALE = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}

STEP_KEYS = {"step", "iter", "iteration", "it", "global_step", "globalstep", "num_updates", "current_steps",
             "training_steps", "update", "steps", "train/global_step", "trainer/global_step", "global step"}
LOSS_KEYS = {"loss", "train_loss", "lm_loss", "lm loss", "train loss", "training_loss", "step_loss",
             "reduced_train_loss", "loss/train/total", "train/loss", "loss/tok", "avg_loss",
             "train_loss_step", "loss_step", "cross_entropy_loss", "ce_loss", "total_loss",
             "gpt_loss", "avr_loss"}
"""`gpt_loss`: OpenRLHF's SFT loss of the step, in its bar's postfix (its `loss_mean` is a moving
average); `avr_loss`: kohya's sd-scripts' moving average, the one loss its bar shows."""
LR_KEYS = {"lr", "learning_rate", "learning rate", "train/learning_rate", "lr-adamw", "train_learning_rate"}
GN_KEYS = {"grad_norm", "gnorm", "norm", "grad norm", "gradnorm", "grad_norm/total", "train/grad_norm",
           "gradient_norm", "total_grad_norm", "grad"}
TIME_KEYS = {"time", "dt", "step_time", "iter_time", "batch_time", "elapsed", "step time", "iter time", "batch time",
             "time/step", "train_step_timing in s", "step_time_s", "time_per_step", "batch_cost",
             "avg_batch_cost"}
"""`batch_cost`: the Paddle suites' (PaddleOCR, PaddleSeg, PaddleDetection) seconds a batch."""
TIME_MS_KEYS = {"step_time_ms", "time_ms", "dt_ms", "iter_time_ms", "batch_time_ms", "elapsed_ms",
                "elapsed_time_per_iteration_ms"}
TOK_KEYS = {"tok/s", "tok/sec", "tokens/s", "tokens/sec", "tps", "tokens_per_sec", "tokens_per_s",
            "wps", "tokens_per_second", "train_tokens_per_second", "tokens per second",
            "timing/target_tokens_per_second"}
TOK_GPU_KEYS = {"tgs", "tokens/gpu/sec", "tokens_per_sec_per_gpu", "tokens_per_second_per_gpu", "tokens_per_s_per_gpu",
                "interval_tokens_per_second_per_device"}
"""Per device: `tgs` is Megatron's tokens per GPU per second."""
SAMPLE_KEYS = {"samples/s", "samples/sec", "samples_per_sec", "samples_per_s", "seq/s", "sps",
               "samples_per_second", "train_samples_per_second", "throughput", "img/s", "images/s",
               "timing/seqs_per_second", "ips", "interval_samples_per_second"}
IT_KEYS = {"it/s", "it/sec", "ups", "steps_per_second", "steps_per_sec", "train_steps_per_second", "iters/s",
           "batches_per_sec", "timing/steps_per_second", "interval_steps_per_second"}
TFLOPS_KEYS = {"tflops", "tflop/s", "tflops/gpu", "model_tflops", "tflop", "TFLOPs", "model_tflops_per_gpu",
               "tflops_per_gpu"}
MEM_KEYS = {"memory", "mem", "max mem", "mem_gb", "peak_mem", "max_mem", "peak memory", "memory_gb",
            "max_memory_allocated", "mem_alloc", "peak_gpu_memory", "memory usage", "memory_usage",
            "peak_memory_alloc", "peak mem", "memory/max_mem_allocated(gib)", "memory/max_allocated (gib)",
            "mem_usage"}
"""`peak_memory_alloc`: torchtune's peak allocated GiB (beside `peak_memory_active` and `_reserved`);
`Peak mem 100.759 GB`: mlx-lm's; Axolotl's in the Trainer's log dicts (`memory/max_allocated (GiB)` since
late 2025)."""
EPOCH_KEYS = {"epoch", "ep"}
TOTAL_KEYS = {"total_steps", "max_steps", "total"}
TIMESTAMP_KEYS = {"timestamp", "_timestamp", "unix_time"}
"""Keys whose value may be the time the record was printed (`{'timestamp': 1593108596.88}`)."""


def epoch_seconds(v: float) -> float | None:
    """A printed Unix time in seconds, milliseconds, microseconds or nanoseconds (read by its
    size: 2001 to 2286) as seconds; None for any other number."""
    for scale in (1.0, 1e3, 1e6, 1e9):
        if 1e9 * scale <= v < 1e10 * scale:
            return v / scale
    return None


# A whole key and a whole number as `_PAIR` reads them with no unit, in ASCII: the key one
# word, `[A-Za-z_][\w/.@-]{0,48}`; the number `nan`, `inf`, or
# `[-+]?(digits{1,31}(.digits*)?|.digits+)([eE][-+]?digits{1,3})?`, no comma.  Possessive and
# unambiguous (neither holds a space, `=` or `:`): one linear pass, so no time-out is needed.
_KEY = r"[A-Za-z_][A-Za-z0-9_/.@-]{0,48}+"
_NUMBER = r"(?:nan|inf|[-+]?+(?:[0-9]{1,31}+(?:\.[0-9]*+)?+|\.[0-9]++)(?:[eE][-+]?+[0-9]{1,3}+)?+)"
_EQUALS_TEXT = re.compile(rf"{_KEY}={_NUMBER}(?: {_KEY}={_NUMBER})*+").fullmatch
"""`k=v k=v ...`, every key and value whole."""
_SPACED_TEXT = re.compile(rf"{_KEY}:?+ {_NUMBER}(?: {_KEY}:?+ {_NUMBER})*+").fullmatch
"""`k v k v ...` or `k: v k: v ...`, every key and value whole."""


def _fast_pairs(text: str, limit: int):
    """Plain `k v k v`, `k: v k: v` or `k=v k=v` text (the common case) without the regex: what
    `_PAIR.finditer` finds there, or None when the text is not of that plain shape (ASCII,
    printable, single spaces or tabs, `|` only as ` | `, every key and value whole as `_PAIR` reads
    it), where the regex decides."""
    if "\t" in text:
        text = text.replace("\t", " ")     # `\s` in the separators takes either
    if "," in text or "(" in text or not text.isascii() or not text.isprintable():
        return None
    text = text.strip(" ").replace(" | ", " ")
    if "|" in text or not text:
        return None
    toks = text.split(" ")
    # one pass of a regex over the text checks every token, where a check per token in Python
    # cost ~0.7 us each (a 35-pair line: 23 us); tokens past `limit` are not read, nor checked
    if all("=" in t for t in toks):
        if len(toks) > limit:
            toks = toks[:limit]
            text = " ".join(toks)
        if _EQUALS_TEXT(text) is None:
            return None
        return [(k, v, None) for k, _, v in (t.partition("=") for t in toks)]
    if len(toks) % 2:
        return None
    if len(toks) > 2 * limit:
        toks = toks[:2 * limit]
        text = " ".join(toks)
    if _SPACED_TEXT(text) is None:
        return None
    return [(k[:-1] if k[-1] == ":" else k, v, None) for k, v in zip(toks[::2], toks[1::2])]


def regex_pairs(text: str, limit: int = 64) -> list[tuple[str, str, str | None]]:
    out = []
    for m in _PAIR.finditer(text):
        key = m.group("key")
        at = m.start()
        if text[at - 1:at] == ":" and at > 1 and (text[at - 2].isalnum() or text[at - 2] == "_"):
            key = _qualified_key(text, at, key)
            if ":" in key and text[m.start("val") - 1] == ":" and text[m.end():m.end() + 1] == " ":
                # `mem_usage:cuda:0 67.8GB`: the device's index, then the value
                after = _VALUE_AFTER.match(text, m.end() + 1)
                if after is not None:
                    out.append((f"{key}:{m.group('val')}", after.group(1), after.group(2)))
                    continue
        elif key[0].isupper():
            level, space, rest = key.partition(" ")
            if space and level in _LEVELS:
                key = rest      # `INFO step 1`: a logger's level, then the key
            elif text[at - 1:at] == " ":
                key = _titled_key(text, at, key)
        out.append((key, m.group("val"), m.group("unit") or m.group("sunit") or m.group("kunit")))
        if len(out) >= limit:
            break
    return out


def _qualified_key(text: str, at: int, key: str) -> str:
    """The key at `at` with the name joined to it by a colon (RETURNN's `max_size:time 291200`,
    the batch's longest sequence, and `grad_norm:p2 3.388`): another quantity than the key alone
    names.  Only a name of words joined by `_` qualifies a key: a logger's `INFO:__main__:` and a
    phase's `Train:` before a key are no part of it."""
    start = max(text.rfind(" ", 0, at), text.rfind(",", 0, at), text.rfind("|", 0, at), text.rfind("]", 0, at)) + 1
    name = text[start:at - 1]
    return f"{name}:{key}" if "_" in name and name.partition(":")[0] not in _LEVELS else key


_VALUE_AFTER = re.compile(r"([-+]?[0-9]{1,31}(?:\.[0-9]{1,31})?)(GiB|GB|MiB|MB|ms|s|%)?(?![\w.])")


def _titled_key(text: str, at: int, key: str) -> str:
    """The key at `at` joined to the capitalised word before it, where the two name what the key
    alone does not: a field (mlx-lm's `Learning Rate 1.000e-06`), or another span's measure than
    the step's (`Epoch Time 120.4`, `Val Loss 0.7`, `Data Time 0.02`: extras, where `Time` and
    `Loss` alone would be the step's).  `_PAIR` joins only lowercase words after a key's first:
    a capitalised word before a known key is otherwise no part of it (`INFO Step 5`,
    `Training Step 5`)."""
    if " " in key:
        return key
    word = text[text.rfind(" ", 0, at - 1) + 1:at - 1]
    if not (word[:1].isupper() and word.isalpha()):
        return key
    tag = _FIELD_OF.get(key.lower())
    if tag is None:
        return f"{word} {key}" if f"{word} {key}".lower() in _FIELD_OF else key
    return f"{word} {key}" if tag in _SPAN_MEASURES and word.lower() in _OTHER_SPANS else key


_SPAN_MEASURES = frozenset(("loss", "time", "step_time_ms", "tokens_per_s", "samples_per_s", "it_per_s"))
_OTHER_SPANS = frozenset(("epoch", "total", "eval", "evaluation", "val", "valid", "validation", "test",
                          "data"))
"""Words that, capitalised before a measure's key, make it another span's measure than the step's."""


def pairs(text: str, limit: int = 64) -> list[tuple[str, str, str | None]]:
    """The (key, value, unit) items of a line, as `_PAIR` finds them.

    Plain text takes `_fast_pairs`.  A line whose head is a bracketed logger prefix
    (`[2025-01-01 10:00:00,123][I][train:42] iter=1 loss=2.0 ...`) takes the regex on the head
    only: no match can span a `]`, so the regex finds in head and tail apart what it finds in
    the whole line."""
    fast = _fast_pairs(text, limit)
    if fast is not None:
        return fast
    head, bracket, tail = text.rpartition("]")
    if bracket:
        fast = _fast_pairs(tail, limit)
        if fast is not None:
            return (regex_pairs(head + bracket, limit) + fast)[:limit]
    return regex_pairs(text, limit)


# Which field a lowercased key feeds, in the order the checks below used to run: a key in
# several sets takes the first.  Keys ending in `_ms` that no earlier set claims are extras.
_FIELD_SETS = (("step", STEP_KEYS), ("loss", LOSS_KEYS), ("lr", LR_KEYS),
               ("grad_norm", GN_KEYS), ("step_time_ms", TIME_MS_KEYS), ("time", TIME_KEYS),
               ("tokens_per_s", TOK_KEYS), ("tokens_per_s_per_gpu", TOK_GPU_KEYS),
               ("samples_per_s", SAMPLE_KEYS), ("it_per_s", IT_KEYS),
               ("tflops", TFLOPS_KEYS | {"tflops"}), ("mfu", {"mfu"}), ("mem", MEM_KEYS),
               ("epoch", EPOCH_KEYS), ("total_steps", TOTAL_KEYS), ("log_time_s", TIMESTAMP_KEYS))
_MS_CLAIMED_BY = ("step", "loss", "lr", "grad_norm", "step_time_ms")
_FIELD_OF: dict[str, str] = {   # reversed: an earlier set overwrites a later one
    key: tag for tag, keys in reversed(_FIELD_SETS) for key in keys
    if tag in _MS_CLAIMED_BY or not key.endswith("_ms")}
_SAME_NAME = frozenset(("loss", "lr", "grad_norm", "samples_per_s", "it_per_s", "tflops", "mfu",
                        "tokens_per_s", "tokens_per_s_per_gpu"))


_KEYS: dict = {}
"""A printed key -> (its lowercase form, the field it feeds, its extra's name or None for
`_ms` keys), for the keys seen so far (a log repeats its keys on every line)."""


_LEVELS = frozenset(("DEBUG", "INFO", "WARN", "WARNING", "ERROR", "CRITICAL", "FATAL", "TRACE"))
"""A logger's level, as its prefix prints it before the record's time (`INFO    24-10-19 18:47:38`):
no key of a value."""


def _key(key: str) -> tuple:
    k = key.strip().lower()
    if key.strip() in _LEVELS:
        plan: tuple = (k, "level", None)
    else:
        # `learning-rate`, `step-time`: a hyphen stands for the underscore of the known keys
        tag = _FIELD_OF.get(k) or ("-" in k and _FIELD_OF.get(k.replace("-", "_"))) or None
        if tag is None and ":" in k and _FIELD_OF.get(k.partition(":")[0]) in ("grad_norm", "mem"):
            tag = _FIELD_OF[k.partition(":")[0]]    # `grad_norm:p2`, `mem_usage:cuda:0`: of one kind
        plan = (k, tag, None if k.endswith("_ms") else k.replace(" ", "_"))
    if len(_KEYS) < 4096:
        _KEYS[key] = plan
    return plan


def normalise(items, fields: dict | None = None) -> tuple[dict, dict]:
    """Map raw (key, value, unit) items to record fields; returns (fields, extras).  A value is
    the printed number, or a finite number already read (printed dicts): `num` takes both alike.

    One dict lookup per key: most keys of a long line are extras, and a chain of set tests
    cost each of them ~1 us; the lookup itself is remembered per printed key (`_KEYS`)."""
    fields = {} if fields is None else fields
    extra: dict = {}
    known = _KEYS.get
    for key, val, unit in items:
        v = num(val)
        if v is None:
            continue
        k, tag, name = known(key) or _key(key)
        if unit and unit in SCALE:
            if tag == "mem":        # `max_mem: 3961M`: memory's M and G are MB and GB
                fields.setdefault("mem_gb", to_gb(v, unit + "b") if unit != "T" else v * 1024)
                continue
            v *= SCALE[unit]
        if unit in ("tok/s", "tokens/s") and tag in (None, "samples_per_s"):    # throughput (tokens/s)
            fields.setdefault("tokens_per_s", v)
        elif tag is None:
            if name is None:        # `_ms`: an extra under its own name
                extra[k] = v
            elif unit == "it/s":
                fields.setdefault("it_per_s", v)
            elif unit == "s/it" and v > 0:
                fields.setdefault("it_per_s", round(1.0 / v, 6))
            elif len(extra) < 32:
                extra[name] = v
        elif tag in _SAME_NAME:
            fields.setdefault(tag, v)
        elif tag == "step":
            if v == int(v) and "step" not in fields:
                fields["step"] = int(v)
            elif k == "iter" and "step" in fields and unit in (None, "", "s") and "." in str(val):
                extra["iter"] = v   # `step: 10 ... iter:  0.4512`: the iteration's seconds (Meta Lingua's)
        elif tag == "step_time_ms":
            fields.setdefault("step_time_ms", v)
        elif tag == "time":
            ms = to_ms(v, unit if unit in ("ms", "s", "sec") else None, "s")
            if ms is not None:
                fields.setdefault("step_time_ms", ms)
        elif tag == "mem":
            if unit == "%":         # a share of the device's memory (`mem: 51%`), no amount
                if len(extra) < 32:
                    extra[f"{name or k}_pct"] = v
            elif unit in ("GiB", "GB", "MiB", "MB", "Gb", "Mb"):
                fields.setdefault("mem_gb", to_gb(v, unit))
            elif k == "mem_gb" or k == "memory_gb":
                fields.setdefault("mem_gb", v)
            else:   # bare number: maskrcnn & co print MB
                fields.setdefault("mem_gb", to_gb(v, "mb" if v > 512 else "gb"))
        elif tag == "epoch":
            fields.setdefault("epoch", v if v != int(v) else int(v))
        elif tag == "log_time_s":
            t = epoch_seconds(v)
            if t is not None:
                fields.setdefault("log_time_s", t)
            elif len(extra) < 32:       # a number named so, but no time (a counter, say)
                extra[name] = v
        elif tag == "level":    # (last: rare, and no other key pays for the test)
            continue
        elif v == int(v):   # total_steps
            fields.setdefault("total_steps", int(v))
    return fields, extra
