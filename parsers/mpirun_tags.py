"""Open MPI 5's other output tags, read as its plain one, `[1,3]<stdout>: `, which the rest of the
parsing knows (`prefix.py`, `tee.py`).

`mpirun --output tag-detailed` adds each process's host and pid (`[1,3][gpu-node-1:4242]<stdout>: `);
`--output tag-fullname` names the job by its PRRTE namespace
(`[prterun-gpu-node-1-4242@1,3]<stdout>: `), the same on every line of one mpirun.  The host's
part is taken off where it stands before `<stdout>`/`<stderr>`; a namespace, once seen before a
job's rank, is taken off each line (a plain replace, where a search for it would try every
byte of a block)."""
from __future__ import annotations

import re

_DETAILED = re.compile(rb"\]\[[\w.-]{1,255}:[0-9]{1,10}\](?=<std(?:out|err)>:)")
_NAMED = re.compile(rb"\[([\w.-]{1,255}@)[0-9]{1,7},[0-9]{1,7}\]<std(?:out|err)>:")
_LOOKS = 8
"""The `@`s of a block looked at for a namespace (an address in a line's text may come first)."""
_NAMESPACES = 16


class MpirunTags:
    """The namespaces of one stream's `--output tag-fullname` mpiruns, learnt from its lines."""

    def __init__(self) -> None:
        self.namespaces: list[bytes] = []

    def plain_text(self, line: str) -> str:
        """A line of text (which shows `]<std`) with its tag as Open MPI's plain one."""
        if not ("][" in line or "@" in line or self.namespaces):
            return line
        return self.plain_bytes(line.encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")

    def plain_bytes(self, data: bytes) -> bytes:
        """A block of bytes (which shows `]<std`) with each tag as Open MPI's plain one."""
        if b"][" in data:
            data = _DETAILED.sub(b"]", data)
        at = data.find(b"@")
        for _ in range(_LOOKS):
            if at < 0:
                break
            start = data.rfind(b"[", max(0, at - 256), at)
            m = _NAMED.match(data, start) if start >= 0 else None
            if m is not None and m.group(1) not in self.namespaces and len(self.namespaces) < _NAMESPACES:
                self.namespaces.append(m.group(1))
            at = data.find(b"@", at + 1)
        for name in self.namespaces:
            data = data.replace(b"[" + name, b"[")
        return data
