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
is known whose prefix stands before torchrun's `[0]:`, the first worker's.  Every known role's
prefix is then read so.  On a terminal torchx colours the prefix (`ESC[32mcrash/1ESC[0m `).  It
repeats it after each `\\r` of a line (a bar's redraw, where no torchrun turned the `\\r` into
a newline: `utils.python`'s one process), where srun's label would not be: there it is taken
off.  A second role learnt (a parameter server's) would number its replicas as the first's."""
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
        self._text: _Relabel | None = None
        self._bytes: _Relabel | None = None

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
            return self._text.relabel(data) if self._text is not None else data
        return self._bytes.relabel(data) if self._bytes is not None else data

    def _learn(self, data: str | bytes, text: re.Pattern, raw: re.Pattern) -> None:
        if isinstance(data, str):
            found = [m if isinstance(m, str) else next(filter(None, m)) for m in text.findall(data)]
        else:
            found = [(m if isinstance(m, bytes) else next(filter(None, m))).decode() for m in raw.findall(data)]
        if found:
            self.roles = list(dict.fromkeys(found))
            self._text, self._bytes = _Relabel(self.roles, str), _Relabel(self.roles, bytes)


class _Relabel:
    """Known roles' prefixes as srun's labels, in text or in bytes.  The patterns begin with a
    role's name, so that a search skips to it (a pattern that began with the optional `\\r` or
    colour before it tried every byte: a 64 KiB block of a torchx log cost 3.5 ms, now 0.7 ms)."""

    def __init__(self, roles: list[str], kind: type) -> None:
        def spelt(text: str):
            return text if kind is str else text.encode()
        self.kind = kind
        self.starts = [spelt(role + "/") for role in roles]
        alternatives = "|".join(re.escape(r) for r in sorted(roles, key=len, reverse=True))
        names = "(?:%s)/[0-9]{1,6}" % alternatives
        self.colour, self.green = spelt("\x1b[32m"), re.compile(spelt(r"\x1b\[32m(%s)\x1b\[0m " % names))
        # (its colour's end, and its start before it, where a read was cut between the two)
        self.prefix = re.compile(spelt(r"(?:%s)/([0-9]{1,6})(?:\x1b\[0m)? (\[([0-9]{1,7})\]:)?" % alternatives))
        self.plain = spelt(r"\1 ")
        self.newline, self.cr, self.nothing, self.colon = spelt("\n"), spelt("\r"), spelt(""), spelt(": ")

    def relabel(self, data):
        if not any(start in data for start in self.starts):
            return data
        if self.colour in data:
            data = self.green.sub(self.plain, data)
        for start in self.starts:       # (a `\r` at a line's start erases nothing)
            data = data.replace(self.newline + self.cr + start, self.newline + start)
            if data.startswith(self.cr + start):
                data = data[1:]
        return self.prefix.sub(self._label, data)

    def _label(self, m):
        at, text = m.start(), m.string
        before = text[at - 1:at]
        if before == self.cr:
            return self.nothing     # torchx's prefix again after a redraw's `\r`
        node, tee = m.group(1), m.group(2)
        if tee is None:
            if at and before != self.newline and text[max(0, at - 5):at] != self.colour:
                return m.group(0)   # (a line's text that names no replica)
            return node + self.colon
        # at a line's start, or inside one, behind another replica's part that has no newline
        # yet (`srun.flatten` reads a label there as that line's)
        local = m.group(3)
        return f"{node}: [default{local}]:" if self.kind is str else b"%s: [default%s]:" % (node, local)
