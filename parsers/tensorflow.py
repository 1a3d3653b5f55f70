"""TensorFlow's training loops, as their own loggers print them (each line behind
`INFO:tensorflow:` or absl's `I1201 10:54:09.452073 1400 controller.py:531] `, or neither):

- `tf.estimator` (`LoggingTensorHook`): `loss = 0.65, step = 5 (0.054 sec)`, the seconds since
  its last such line, `log_step_count_steps` steps before; `Saving checkpoints for 10 into
  /m/model.ckpt.`, and after it `Calling checkpoint listeners after saving checkpoint 10...`;
  an evaluation's `Starting evaluation at ...`, `Inference Time : 0.11933s` and `Saving dict for
  global step 10: accuracy = 0.57, global_step = 10, loss = 0.67`.  Its `step` is the global step
  before the update the line reports (the first is `step = 0`).
- TF-slim's `learning.train` (the first Object Detection API): `global step 7: loss = 59.8181
  (16.456 sec/step)`, the step's own time.
- The Object Detection API for TF2 (`model_lib_v2`): `Step 200 per-step time 0.831s loss=1.192`
  every 100 steps, the time of the step it follows (of its loop's `num_steps_per_iteration`
  steps, one a step by default).  Its later releases print no loss there but log the losses
  and the learning rate as a dict on the lines after (`pprint.pformat(..., width=40)`: `{'Loss/
  classification_loss': 0.12,`, then one item a line behind one space, up to `'learning_rate':
  0.04}`); the step's record waits for it (`_LossDict`).
- Model Garden's Orbit `Controller`: `train | step:     25 | steps/sec:    3.2 | output:
  {'learning_rate': 0.001, 'training_loss': 0.675}` (the rate of the steps since its last line),
  ` eval | step:     20 | steps/sec:   63.0 | eval time:    0.1 sec | output: {...}`, `saved
  checkpoint to /m/ckpt-25.`, `restored from checkpoint: /m/ckpt-40`.  A dict wider than 80
  characters is printed over the lines that follow, indented.
- `Restoring parameters from /m/model.ckpt-40` (tf.compat.v1's `Saver`): a training that
  begins so resumed at step 40; an evaluation restores each checkpoint it reads.

Orbit's messages, the Object Detection API's and TF-slim's are printed twice (absl's handler
and Python's, or `print`): a message the same as the last one read gives nothing more."""
from __future__ import annotations

from .base import Parser, Pattern, num, record, to_ms
from .kv import normalise
from .means import DOUBT
from .pydict import parse_flat_dict

ABSL = Pattern(r"[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} ++\d++ [\w.-]{1,200}+:\d++\] ")
SLIM = Pattern(r"global step (\d++): loss = ([-\d.e+]++|nan|inf) \(([\d.]++) sec/step\)")
OD_V2 = Pattern(r"Step (\d++) per-step time ([\d.]++)s(?: loss=([-\d.e+]++|nan|inf))?")
ORBIT = Pattern(r"(train|eval) \| step: *+(\d++) \| (?:steps/sec: *+([\d.]++) \| )?"
                r"(?:eval time: *+([\d.]++) sec \| )?(?:output: ?+(.{0,8000}+)|(running|training until).{0,200}+)")
SAVING = Pattern(r"Saving checkpoints for (\d++) into (.{1,1000}?)\.?$")
SAVED = Pattern(r"after saving checkpoint (\d++)\.\.\.")
EVAL_DICT = Pattern(r"Saving dict for global step (\d++): (.{0,4000}+)")
INFERENCE = Pattern(r"Inference Time : ([\d.]++)s")
CKPT_NUMBER = Pattern(r"-(\d++)(?:\.\w{1,20}+)?$")

_OWN = ("Calling checkpoint listeners before", "Recording summary at step", "global_step/sec: ",
        "Saving 'checkpoint_path' summary", "Loss for final step", "Evaluation [",
        "Finished evaluation at", "restoring or initializing model", "restored model from ",
        "restoring model from ")
"""Lines of these loops that give no record: counters, the second half of a message read from
its first, and summaries of what a record already says."""
_OWN_EVENTS = ("Saving checkpoints for ", "Calling checkpoint listeners ", "restored from checkpoint: ",
               "saved checkpoint to ", "Restoring parameters from ", "Starting evaluation at ")
"""Messages of these loops that may come before their first step's."""
_DICT_LINE = ("    {'", "     '")
"""The lines of a dict that Orbit printed over several (each read with the line it follows)."""


def _body(line: str) -> str:
    """The message, without its logger's prefix."""
    if line.startswith("INFO:tensorflow:"):
        return line[16:]
    if line[:1] in "IWEF" and "] " in line[:300]:
        m = ABSL.match(line)
        if m is not None:
            return line[m.end():]
    return line


def _step_of_path(path: str) -> int | None:
    m = CKPT_NUMBER.search(path)
    return int(m.group(1)) if m else None


def _mean_step_ms(printed: str | None) -> float | None:
    """The mean step of an Orbit loop from its `steps/sec` (the loop's steps over its time),
    where the printed digits (one decimal) leave it sure within `means.DOUBT`: a run's lines may
    carry no time of their own (a dict printed over several lines ends on a line without absl's)."""
    rate = num(printed)
    if not rate or printed is None or 0.5 * 10.0 ** -len(printed.partition(".")[2]) > DOUBT * rate:
        return None
    return round(1000.0 / rate, 3)


def _assignments(text: str) -> list[tuple[str, str, None]] | None:
    """`loss = 0.65, accuracy = 0.5` -> [(key, value, None)], as `normalise` takes them; None
    where a part is no `key = value`."""
    items = []
    for part in text.split(", ", 64)[:64]:
        key, sep, value = part.partition(" = ")
        if not sep or not key or " " in key:
            return None
        items.append((key, value.strip(), None))
    return items


def tensors_logged(body: str) -> tuple[int, list, float | None] | None:
    """(step, the other tensors, seconds since the last such line) of a `LoggingTensorHook`
    line that logs the global step (`loss = 0.65, step = 5 (0.054 sec)`); None for another."""
    seconds = None
    if body.endswith(" sec)"):
        at = body.rfind(" (")
        seconds = num(body[at + 2:-5])
        if seconds is None:
            return None
        body = body[:at]
    items = _assignments(body)
    if not items:
        return None
    steps = [value for key, value, _ in items if key == "step"]
    if len(steps) != 1 or not steps[0].isdigit():
        return None
    return int(steps[0]), [item for item in items if item[0] != "step"], seconds


def _closed(parts: list[str]) -> str:
    """A dict's lines as one, closed where another line (or the stream's end) cut it off."""
    text = " ".join(parts).rstrip(",")
    return text if text.endswith("}") else text + "}"


def _estimator_shaped(body: str, prefixed: bool) -> bool:
    """A `LoggingTensorHook` line behind TensorFlow's (or absl's) prefix, or one that says its
    seconds: a loop of one's own may print `epoch = 1, step = 100, loss = 0.5` too."""
    logged = tensors_logged(body)
    return logged is not None and (prefixed or logged[2] is not None)


class _LossDict:
    """A model_lib_v2 step waiting for the dict of its losses, which the lines after its own
    print (`state` "wait", then "dict" while reading it); once given, the dict's second print
    by the other logger may follow ("again", "again_dict"), and is skipped."""
    __slots__ = ("rec", "state", "parts", "head")

    def __init__(self, rec: dict) -> None:
        self.rec = rec
        self.state = "wait"
        self.parts: list[str] = []
        self.head = ""

    def fill(self) -> dict:
        """The step's record, with what the dict held: the total loss, the learning rate, and
        each loss as a metric."""
        values = parse_flat_dict(_closed(self.parts)) or {}
        total = values.pop("Loss/total_loss", None)
        fields, extra = normalise([(k, v, None) for k, v in values.items()])
        if total is not None:
            self.rec["loss"] = total
        if "lr" in fields:
            self.rec["lr"] = fields["lr"]
        if extra:
            self.rec["metrics"] = extra
        return self.rec


class TensorflowParser(Parser):
    name = "tensorflow"

    def __init__(self) -> None:
        self.last_body: dict = {}       # rank -> the message of the last line read
        self.logged_step: dict = {}     # rank -> the step of its last `loss = .., step = N` line
        self.at: dict = {}              # rank -> the global step it last said it was at
        self.trained: set = set()       # ranks that have given a step record
        self.evaluating: dict = {}      # rank -> the evaluation's `Inference Time` (ms), once begun
        self.open: dict = {}
        """rank -> (the Orbit line whose dict follows, its lines), or the `_LossDict` of a
        model_lib_v2 step"""
        self.swallowed = False
        """The line just parsed is these loops' own and gives nothing (a message's second print,
        a counter): no other parser reads it (`owns`), and no event is made of it (`place_events`)."""

    def detect(self, line: str) -> bool:
        body = _body(line) if line[:1] in "IWEF" else line      # (`INFO:tensorflow:` too)
        if body is not line and body.startswith(_OWN_EVENTS):
            return True     # behind TensorFlow's or absl's prefix: no other framework's message
        if "step" not in body:
            return False
        return (("step = " in body and _estimator_shaped(body, prefixed=body is not line))
                or (body.startswith("global step ") and SLIM.match(body) is not None)
                or (body.startswith("Step ") and OD_V2.match(body) is not None)
                or (" | step: " in body and ORBIT.match(body.lstrip()) is not None))

    def owns(self, line: str) -> bool:
        return self.swallowed

    def place_events(self, recs: list[dict], rank) -> list[dict]:
        return [] if self.swallowed else recs

    def parse(self, line: str, rank: int | None) -> list[dict]:
        self.swallowed = False
        if rank in self.open:
            if isinstance(self.open[rank], _LossDict):
                part, out = self._read_losses(line, rank)
                if part:
                    self.last_body[rank] = _body(line)     # (read again once the dict is done: skipped)
                    self.swallowed = True
                return out      # (a line that is no part of it is then read as any other)
            orbit = self._read_dict(line, rank)
            if orbit is not None or line.startswith(_DICT_LINE):
                self.swallowed = True
                return orbit or []
        body = _body(line)
        if body == self.last_body.get(rank) or body.startswith(_OWN) or line.startswith(_DICT_LINE):
            self.swallowed = True       # (a dict line here: the dict of a message's second print)
            return []
        out = self._parse(body, rank)
        if out or rank in self.open:
            self.last_body[rank] = body
            self.swallowed = True
        return out

    def _parse(self, body: str, rank) -> list[dict]:
        if "step = " in body:
            logged = tensors_logged(body)
            if logged is not None:
                return self._estimator(rank, *logged)
        if body.startswith("global step "):
            m = SLIM.match(body)
            if m is not None:
                return self._step(rank, int(m.group(1)), step_time_ms=to_ms(num(m.group(3)), "s"),
                                  loss=num(m.group(2)))
        if body.startswith("Step "):
            m = OD_V2.match(body)
            if m is not None:
                recs = self._step(rank, int(m.group(1)), step_time_ms=to_ms(num(m.group(2)), "s"),
                                  loss=num(m.group(3)))
                if m.group(3) is not None:
                    return recs
                self.open[rank] = _LossDict(recs[0])    # its losses follow
                return []
        if " | step: " in body:
            return self._orbit(body.lstrip(), rank)
        return self._event(body, rank)

    def flush(self) -> list[dict]:
        out = []
        for rank, held in list(self.open.items()):
            if isinstance(held, _LossDict):
                if held.state in ("wait", "dict"):
                    out.append(held.fill())
            else:
                out.extend(self._orbit_record(held[0], _closed(held[1]), rank))
        self.open.clear()
        return out

    def _read_losses(self, line: str, rank) -> tuple[bool, list[dict]]:
        """A line after a model_lib_v2 step: whether it is a part of the step's print (its
        line by the other logger, its dict's, the dict's second print), and the records it
        completes: the step's, once its dict is read, or where the dict did not come or was
        cut off by another line."""
        held = self.open[rank]
        state = held.state
        if state == "wait":
            body = _body(line)
            if body == self.last_body.get(rank):
                return True, []     # the step's line by the other logger
            if body.startswith("{'"):
                held.head, held.parts, held.state = body, [body], "dict"
                return True, self._losses_given(rank, body)
        elif state == "dict":
            if line.startswith(" '") and len(held.parts) < 200:
                held.parts.append(line.strip())
                return True, self._losses_given(rank, line)
        elif state == "again":
            if _body(line) == held.head:
                held.state = "again_dict"
                if line.rstrip().endswith("}"):
                    del self.open[rank]
                return True, []
        elif line.startswith(" '"):
            if line.rstrip().endswith("}"):
                del self.open[rank]
            return True, []
        del self.open[rank]
        return False, [held.fill()] if state in ("wait", "dict") else []

    def _losses_given(self, rank, line: str) -> list[dict]:
        """The step's record once its dict's last line is read."""
        if not line.rstrip().endswith("}"):
            return []
        held = self.open[rank]
        held.state = "again"
        return [held.fill()]

    def _step(self, rank, step: int, **fields) -> list[dict]:
        self.trained.add(rank)
        self.at[rank] = step
        return [record("progress", self.name, rank, step, **fields)]

    def _estimator(self, rank, step: int, items: list, seconds: float | None) -> list[dict]:
        fields, extra = normalise(items)
        before = self.logged_step.get(rank)
        self.logged_step[rank] = step
        if seconds is not None and before is not None and step > before:
            fields["step_time_ms"] = round(seconds * 1000 / (step - before), 3)
        return self._step(rank, step, **fields, **({"metrics": extra} if extra else {}))

    def _orbit(self, body: str, rank) -> list[dict]:
        m = ORBIT.match(body)
        if m is None:
            return []
        kind, step = m.group(1), int(m.group(2))
        if m.group(6):      # `running 4 steps of evaluation...`, `training until step 40...`
            self.at[rank] = step
            return [record("eval", self.name, rank, step, phase="start")] if kind == "eval" else []
        printed = m.group(5).strip()
        if not printed:     # its dict follows, over lines of its own
            self.open[rank] = (m, [])
            return []
        return self._orbit_record(m, printed, rank)

    def _read_dict(self, line: str, rank) -> list[dict] | None:
        """A line of an Orbit dict printed over several lines: None while it goes on, the
        record once it closes (or once another line shows that it will not)."""
        m, parts = self.open[rank]
        text = line.strip()
        if line.startswith("    ") and text and len(parts) < 200:
            parts.append(text)
            if not text.endswith("}"):
                return None
        del self.open[rank]     # (a line that is not the dict's is then read as any other)
        return self._orbit_record(m, _closed(parts), rank)

    def _orbit_record(self, m, printed: str, rank) -> list[dict]:
        kind, step = m.group(1), int(m.group(2))
        values = parse_flat_dict(printed) or {}
        values.pop("steps_per_second", None)
        fields, extra = normalise([(k, v, None) for k, v in values.items()])
        if kind == "eval":
            return [record("eval", self.name, rank, step, phase="result", loss=fields.get("loss"),
                           duration_ms=to_ms(num(m.group(4)), "s"), metrics=extra or None)]
        return self._step(rank, step, it_per_s=num(m.group(3)), step_time_ms=_mean_step_ms(m.group(3)), **fields,
                          **({"metrics": extra} if extra else {}))

    def _event(self, body: str, rank) -> list[dict]:
        if body.startswith("Saving checkpoints for "):
            m = SAVING.match(body)
            if m is not None:
                step = int(m.group(1))
                self.at[rank] = step
                return [record("checkpoint", self.name, rank, step, action="save", phase="start",
                               path=f"{m.group(2)}-{step}")]
        if "after saving checkpoint " in body:
            m = SAVED.search(body)
            if m is not None:
                return [record("checkpoint", self.name, rank, int(m.group(1)), action="save", phase="end")]
        if body.startswith("saved checkpoint to "):
            path = body[20:].strip().rstrip(".")
            return [record("checkpoint", self.name, rank, _step_of_path(path) or self.at.get(rank),
                           action="save", phase="end", path=path)]
        if body.startswith("Starting evaluation at"):
            self.evaluating[rank] = None
            return [record("eval", self.name, rank, self.at.get(rank), phase="start")]
        if body.startswith("Inference Time : "):
            m = INFERENCE.match(body)
            if m is not None and rank in self.evaluating:
                self.evaluating[rank] = to_ms(num(m.group(1)), "s")
            self.swallowed = True
            return []
        if body.startswith("Saving dict for global step "):
            m = EVAL_DICT.match(body)
            if m is not None:
                fields, extra = normalise(_assignments(m.group(2)) or [])
                extra.pop("global_step", None)
                return [record("eval", self.name, rank, int(m.group(1)), phase="result", loss=fields.get("loss"),
                               duration_ms=self.evaluating.pop(rank, None), metrics=extra or None)]
        if body.startswith(("Restoring parameters from ", "restored from checkpoint: ")):
            return self._restore(body.split(": ", 1)[-1] if body[0] == "r" else body[26:], rank)
        return []

    def _restore(self, path: str, rank) -> list[dict]:
        """A checkpoint's load; before the stream's first step on this rank, the run's resume."""
        path = path.strip()
        if rank in self.evaluating:
            self.swallowed = True       # the evaluation reads the checkpoint just saved
            return []
        step = _step_of_path(path)
        out = [record("checkpoint", self.name, rank, step, action="load", phase="end", path=path)]
        if rank not in self.trained and step:
            out.append(record("restart", self.name, rank, step, path=path))
        return out
