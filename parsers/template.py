"""torchrun's console prefix under another role or template than its default `[default3]:`.

torchrun's `--tee` writes `[${role_name}${local_rank}]:` before each write of a worker
(`--role trainer`: `[trainer3]:`), or what `--log-line-prefix-template` says, from the macros
`${role_name}`, `${local_rank}`, `${rank}` and `${hostname}` (torchrun's own example for a job of
several nodes: `${hostname}:${rank}: `, `r12i0n8:3: `).  Such a prefix is rewritten to the
default one, `[defaultN]:`, N being the number it gives, so that the rest of the parsing
(`prefix`, `tee`'s joins) reads it as it does torchrun's default.
"""
from __future__ import annotations

import re

from .srun import LABEL

_NUMBER = r"[0-9]{1,7}"
_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}"
_MACRO = re.compile(r"\$\{(\w+)\}|\$(\w+)")
_LINE_START = rb"^(?:" + LABEL + rb")?"
"""A line's start, behind srun's label where there is one (`srun --label torchrun ...`)."""


class TeePrefix:
    """One torchrun prefix template.  Where the role's or the host's name is not given (a log
    read later), the names are learnt from the prefixes that begin lines (behind srun's label,
    where there is one): a prefix inside a line (a part of a worker's line that torchrun passed
    on before the rest, see `tee`) is found only once its names are known, so that no text that
    merely looks like one is."""

    MAX_SHAPES = 1024

    def __init__(self, template: str, role: str | None = None, hostname: str | None = None) -> None:
        macros = {m.group(1) or m.group(2) for m in _MACRO.finditer(template)}
        self.local = "rank" not in macros and "local_rank" in macros
        """Does the prefix name a local rank (the job's rank only on the first node)?"""
        number = "rank" if "rank" in macros else "local_rank"
        names = {"role_name": re.escape(role) if role else _NAME,
                 "hostname": re.escape(hostname) if hostname else _NAME}
        parts, pos = [], 0
        for m in _MACRO.finditer(template):
            macro = m.group(1) or m.group(2)
            parts.append(re.escape(template[pos:m.start()]))
            parts.append(f"(?P<n>{_NUMBER})" if macro == number else
                         names.get(macro, _NUMBER if macro.endswith("rank") else re.escape(m.group())))
            pos = m.end()
        parts.append(re.escape(template[pos:]))
        pattern = "".join(parts).encode()
        if template.startswith("[") and template.endswith("] "):
            # MPICH's `[3] `: NCCL writes the same shape inside its lines (`host:pid:tid [0] NCCL
            # INFO`), after a space; a prefix inside a line follows the part of a write before it
            pattern = rb"(?<![ \t])" + pattern
        learn = (role is None and "role_name" in macros) or (hostname is None and "hostname" in macros)
        self._at_start = re.compile(_LINE_START + b"(?P<p>" + pattern + b")", re.M) if learn else None
        self._anywhere = None if learn else re.compile(pattern)
        self._shapes: set[tuple[bytes, bytes]] = set()
        """(what comes before the number, what after) of each prefix learnt so far"""

    def found(self, data: bytes) -> bool:
        """Does `data` hold a prefix of this template (where names are learnt, at a line's
        start)?"""
        pattern = self._at_start if self._at_start is not None else self._anywhere
        return pattern is not None and pattern.search(data) is not None

    def as_default(self, data: bytes) -> bytes:
        """`data` with each of its prefixes as torchrun's default one, `[defaultN]:`."""
        if self._at_start is not None:
            self._learn(data)
        if self._anywhere is None:
            return data
        return self._anywhere.sub(_as_default, data)

    def _learn(self, data: bytes) -> None:
        shapes = self._shapes
        before = len(shapes)
        for m in self._at_start.finditer(data) if self._at_start is not None else ():
            if len(shapes) >= self.MAX_SHAPES:
                break
            shapes.add((data[m.start("p"):m.start("n")], data[m.end("n"):m.end("p")]))
        if len(shapes) > before:
            heads = b"|".join(re.escape(head) for head in sorted({h for h, _ in shapes}))
            tails = b"|".join(re.escape(tail) for tail in sorted({t for _, t in shapes}))
            self._anywhere = re.compile(b"(?:" + heads + b")(?P<n>[0-9]{1,7})(?:" + tails + b")")


_ROLE_PREFIX = re.compile(_LINE_START + rb"\[(?P<name>[A-Za-z][A-Za-z0-9_.-]{0,62}?)[0-9]{1,7}\]:", re.M)
_HOST_RANK_PREFIX = re.compile(_LINE_START + rb"(?P<name>" + _NAME.encode() + rb"):[0-9]{1,7}: ", re.M)
_ROLE_RANK_LOCAL_PREFIX = re.compile(
    _LINE_START + rb"\[(?P<name>[A-Za-z][A-Za-z0-9_.-]{0,62}?)[0-9]{1,7}\|[0-9]{1,7}\]:", re.M)
_MPICH_PREFIX = re.compile(_LINE_START + rb"\[(?P<name>)[0-9]{1,7}\] ", re.M)
MPICH = "[${rank}] "
"""MPICH's and Intel MPI's mpiexec (Hydra) with `-l`/`-prepend-rank`: the job's rank."""
GUESSES = ((_ROLE_PREFIX, "[${role_name}${local_rank}]:"), (_HOST_RANK_PREFIX, "${hostname}:${rank}: "),
           (_ROLE_RANK_LOCAL_PREFIX, "[${role_name}${rank}|${local_rank}]:"), (_MPICH_PREFIX, MPICH))
"""The prefixes of torchrun's other templates that a log is read with unasked: a role's
(`--role trainer`: `[trainer3]:`), the one torchrun's docs give for a job of several nodes
(`${hostname}:${rank}: `), and the role, rank and local rank of torchtune's multi-node runs
(`[trainer12|4]:`); and MPICH's (`[3] `), read as a template of the rank."""


def guess(head: bytes) -> str | None:
    """The template of GUESSES whose prefix begins at least half of the lines of `head` (a
    log's first lines) that hold anything, if one does.  A shape as loose as `[word3]:` is taken
    only when most of the log is written so: a line or two of it proves nothing."""
    lines = sum(1 for line in head.split(b"\n") if line.strip())
    for pattern, template in GUESSES:
        found = sum(1 for m in pattern.finditer(head) if m.group("name") not in (b"default", b"rank"))
        if found and 2 * found >= lines:
            return template
    return None


BARE_LOCAL = "[${local_rank}]:"
"""torchrun's default template under an empty role (`--role ''`, as torchx's `dist.ddp` runs it):
`[0]:`, a local rank."""
_BARE_PREFIX = re.compile(rb"^\[([0-9]{1,7})\]:(?=[^\n])", re.M)


def bare_prefixes(head: bytes) -> frozenset[bytes]:
    """The N of the `[N]:` that begin at least a quarter of the lines of a log's head that hold
    anything (none otherwise).  (The bare `[0]:` over each failure in torchrun's report holds
    nothing after it, and is not counted.)"""
    lines = sum(1 for line in head.split(b"\n") if line.strip())
    numbers = [m.group(1) for m in _BARE_PREFIX.finditer(head)]
    return frozenset(numbers) if numbers and 4 * len(numbers) >= lines else frozenset()


def bare_local(shown: list[frozenset[bytes]]) -> bool:
    """Are the `[N]:` of these node logs (`bare_prefixes` of each) local ranks (BARE_LOCAL)?  So
    where every log shows some, and two the same N: a template of the job's rank (`[${rank}]:`)
    numbers each node's workers apart."""
    return all(shown) and any(a & b for i, a in enumerate(shown) for b in shown[i + 1:])


def _as_default(m: re.Match) -> bytes:
    return b"[default" + m.group("n") + b"]:"
