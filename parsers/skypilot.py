"""SkyPilot's prefix on each line of a task: `(head, rank=0, pid=2481) ` on a cluster's head
node, `(worker1, rank=1, pid=2379, ip=10.0.0.3) ` on the others (before 2023 the node's name
first: `(node-0, worker1, rank=1, ...)`), `(task, pid=17499) ` on a cluster of one node.  The
rank is the node's (`SKYPILOT_NODE_RANK`), as srun's label is the task's where srun starts one
torchrun a node: the prefix is read as that label, `1: `, so that torchrun's own prefix inside
it (`[default3]:`) numbers the node's workers as it does under srun.  A one-node cluster's prefix
names no rank, and is taken off.  The prefix may be coloured (`ESC[36m(head, ...)ESC[0m `).

srun's habits come with its label: a line of exactly 1024 bytes after the prefix is taken for
the first piece of a longer one and joined with the node's next line (SkyPilot cuts no line;
such a length is chance)."""
from __future__ import annotations

import re

PID = ", pid="
PID_BYTES = PID.encode()
_COLOUR = r"(?:\x1b\[[0-9;]{0,16}m)?"
_PREFIX = (_COLOUR + r"\((?:[\w.-]{1,64}, )?(?:head|worker[0-9]{1,6}), rank=([0-9]{1,7}), pid=[0-9]{1,10}"
           r"(?:, ip=[0-9a-fA-F.:]{1,64})?\)" + _COLOUR + r" ")
_ONE_NODE = _COLOUR + r"\([\w.-]{1,64}, pid=[0-9]{1,10}\)" + _COLOUR + r" "
_TEXT = re.compile(r"^(?:%s|%s)" % (_PREFIX, _ONE_NODE), re.M)
_BYTES = re.compile(_TEXT.pattern.encode(), re.M)


def _label(m) -> str:
    return "" if m.group(1) is None else f"{m.group(1)}: "


def _label_bytes(m) -> bytes:
    return b"" if m.group(1) is None else m.group(1) + b": "


def as_srun_labels(data: str | bytes) -> str | bytes:
    """`data` with each line's SkyPilot prefix as srun's label (or taken off); `data` itself
    where no line has one (a substring test first: a block without `, pid=` costs no more)."""
    if isinstance(data, str):
        return _TEXT.sub(_label, data) if PID in data else data
    return _BYTES.sub(_label_bytes, data) if PID_BYTES in data else data
