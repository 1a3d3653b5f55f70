"""torchx's prefix, `ROLE/N `, on each line that `torchx run` passes on from replica N of a role
(`crash/1 [1]:step 3/5 loss 0.6667`).

torchx's `dist.ddp` starts one torchrun a replica with `--tee 3 --role ''`: torchrun's own
prefix inside names the local rank, `[M]:`.  A replica is a node, as SkyPilot's, kubectl's and
pdsh's prefixes are: `ROLE/N ` is read as srun's label of node N, and the `[M]:` behind it as
torchrun's `[defaultM]:`, so that the node's workers are numbered as under srun (rank = N x
workers a node + M) and torch's own `[rankN]:` names the job's rank.  The replica's number is
the node's rank where the job's rendezvous is static; under `dist.ddp`'s default c10d
rendezvous nodes are numbered as they join, which the replica's number need not be.

No fixed text marks such a prefix, so it is learnt, as pdsh's hosts are.  Where a stream has
shown torchx's logger (`torchx 2026-12-06 13:54:31 INFO     Waiting for the app to finish...`,
as `torchx run` prints), a role is known whose prefix stands before torchrun's `[M]:`, or first
after torchx's `Waiting for the app to finish...`, or after a `\\r` (which only torchx puts a
prefix behind).  Where it has not (`torchx log`, which prints the replicas' lines alone), a role
is known whose prefix stands before torchrun's `[0]:`, the first worker's.  Every known role's prefix is then read so.  On a terminal torchx colours the
prefix (`ESC[32mcrash/1ESC[0m `).  It repeats it after each `\\r` of a line (a bar's redraw,
where no torchrun turned the `\\r` into a newline: `utils.python`'s one process), where srun's
label would not be: there it is taken off.  A second role learnt (a parameter server's) would
number its replicas as the first's."""
from __future__ import annotations

import re

from .sighting import Sighting

MARK = "torchx"
"""torchx's logger's name, which it colours on a terminal (`ESC[34mtorchxESC[0m `)."""
FIRST_WORKER = " [0]:"
"""torchrun's prefix of a node's first worker, behind a replica's prefix."""
_ROLE = r"[A-Za-z_][\w.-]{0,127}"
_GREEN, _END = r"(?:\x1b\[32m)?", r"(?:\x1b\[0m)?"
_PREFIX = _GREEN + "(" + _ROLE + ")/[0-9]{1,6}" + _END + " "
_BEFORE_TEE = r"^" + _PREFIX + r"\[[0-9]{1,7}\]:"
_TEXT_ROLE = re.compile(_BEFORE_TEE + r"|Waiting for the app to finish\.\.\..{0,8}?\n" + _PREFIX + r"|\r" + _PREFIX,
                        re.M)
_BYTES_ROLE = re.compile(_TEXT_ROLE.pattern.encode(), re.M)
"""A role's prefix where only torchx puts one (see the module's doc)."""
_TEXT_TEE_ROLE = re.compile(_BEFORE_TEE, re.M)
_BYTES_TEE_ROLE = re.compile(_BEFORE_TEE.encode(), re.M)
"""A role's prefix before torchrun's own."""


class TorchxRoles:
    """The roles of one stream's torchx app, learnt from its lines (see the module's doc)."""

    def __init__(self) -> None:
        self.roles: list[str] = []
        self.logger, self.first_worker = Sighting(MARK), Sighting(FIRST_WORKER)
        self._first = True
        self._needles: list[bytes] = []
        self._text: re.Pattern | None = None
        self._bytes: re.Pattern | None = None

    @property
    def shown(self) -> bool:
        """Has the stream shown torchx's logger or a role?  (Then each of its lines may hold a
        role's prefix.)"""
        return self.logger.shown or bool(self.roles)

    def relabel(self, data: str | bytes) -> str | bytes:
        """`data` with each known role's prefix as srun's label of its node, the roles first
        learnt from `data` while none is known.  The stream's first block is looked at whole,
        the others at their ends (`sighting`): `torchx run` prints its logger's lines first, and
        a replica's first worker's prefix is on many lines."""
        if not self.roles:
            first, self._first = self._first, False
            if self.logger.look(data, first):
                self._learn(data, _TEXT_ROLE, _BYTES_ROLE)
            elif self.first_worker.glimpse(data, first):
                self._learn(data, _TEXT_TEE_ROLE, _BYTES_TEE_ROLE)
            if not self.roles:
                return data
        if isinstance(data, str):
            text = data
            shown = any(role in text for role in self.roles)
            return self._text.sub(_label, text) if shown and self._text is not None else text
        raw = data
        shown = any(needle in raw for needle in self._needles)
        return self._bytes.sub(_label_bytes, raw) if shown and self._bytes is not None else raw

    def _learn(self, data: str | bytes, text: re.Pattern, raw: re.Pattern) -> None:
        if isinstance(data, str):
            found = [m if isinstance(m, str) else next(filter(None, m)) for m in text.findall(data)]
        else:
            found = [(m if isinstance(m, bytes) else next(filter(None, m))).decode() for m in raw.findall(data)]
        if found:
            self.roles = list(dict.fromkeys(found))
            self._needles = [role.encode() + b"/" for role in self.roles]
            alternatives = "|".join(re.escape(r) for r in sorted(self.roles, key=len, reverse=True))
            self._text = re.compile(r"(\r)?" + _GREEN + "(?:%s)/([0-9]{1,6})" % alternatives + _END
                                    + r" (\[([0-9]{1,7})\]:)?")
            self._bytes = re.compile(self._text.pattern.encode())


def _label(m) -> str:
    at = m.start()
    if at == 0 or m.string[at - 1] == "\n":
        # (a `\r` at a line's start erases nothing)
        return f"{m.group(2)}: " if m.group(3) is None else f"{m.group(2)}: [default{m.group(4)}]:"
    if m.group(1) is not None:
        return "\r"     # torchx's prefix again after a redraw's `\r`
    # inside a line, behind another replica's part that has no newline yet (`srun.flatten` reads
    # a label there as that line's)
    return m.group(0) if m.group(3) is None else f"{m.group(2)}: [default{m.group(4)}]:"


def _label_bytes(m) -> bytes:
    at = m.start()
    if at == 0 or m.string[at - 1] == 10:
        return m.group(2) + b": " if m.group(3) is None else b"%s: [default%s]:" % (m.group(2), m.group(4))
    if m.group(1) is not None:
        return b"\r"
    return m.group(0) if m.group(3) is None else b"%s: [default%s]:" % (m.group(2), m.group(4))
