"""pdsh's prefix, `host: `, on each line of a node's output.

DeepSpeed's launcher (`deepspeed --hostfile`) starts one launcher a node through pdsh, which
passes each node's lines on behind its host's name.  The name is no rank: the node's place
comes from the hosts the launcher lists in its order, in the runner's `cmd = pdsh -S -f 1024
-w host1,host2 ...` or in each node's `WORLD INFO DICT: {'host1': [0, 1, ...], 'host2': ...}`.
Once a stream has shown them, a known host's prefix is read as srun's label of its node, `1: `
(see skypilot.py); before, its lines are read as they are.  A host's line that carries torch's
own `[rankN]:` names the job's rank whether the host is known or not: the host's name is taken
off it (`node7: [rank11]:step 5` is rank 11's line)."""
from __future__ import annotations

import re

WORLD = "WORLD INFO DICT: {"
WORLD_BYTES = WORLD.encode()
RUNNER = "pdsh "
RUNNER_BYTES = RUNNER.encode()
_WORLD_HOST = re.compile(r"'([\w.-]{1,128})': \[")
RANK_INSIDE = ": [rank"
RANK_INSIDE_BYTES = RANK_INSIDE.encode()
HOST_BEFORE_RANK = re.compile(r"^[A-Za-z][\w.-]{0,127}: (?=\[rank[0-9]{1,7}\]:)", re.M)
HOST_BEFORE_RANK_BYTES = re.compile(HOST_BEFORE_RANK.pattern.encode(), re.M)
_RUNNER = re.compile(r"\bpdsh (?:-[A-Za-z]+ (?:[0-9]+ )?)*-w ([\w.-]{1,128}(?:,[\w.-]{1,128}){0,4095}) ")


class PdshHosts:
    """The nodes of one stream's pdsh, in the launcher's order, learnt from its lines."""

    def __init__(self) -> None:
        self.nodes: dict[str, int] = {}     # host -> its node's place
        self._text: re.Pattern | None = None
        self._bytes: re.Pattern | None = None

    def relabel(self, data: str | bytes, learn: bool, hosts_before_ranks: bool) -> str | bytes:
        """`data` with each known host's prefix as srun's label of its node; where
        `hosts_before_ranks`, any host's before torch's `[rankN]:` taken off; where `learn`, the
        hosts first learnt from `data` where it names them (substring tests first: most blocks
        do not)."""
        if isinstance(data, str):
            if learn and (WORLD in data or RUNNER in data):
                self._learn(data)
            if hosts_before_ranks and RANK_INSIDE in data:
                data = HOST_BEFORE_RANK.sub("", data)
            if self._text is None:
                return data
            return self._text.sub(lambda m: f"{self.nodes[m.group(1)]}: ", data)
        if learn and (WORLD_BYTES in data or RUNNER_BYTES in data):
            self._learn(bytes(data).decode("utf-8", "replace"))
        if hosts_before_ranks and RANK_INSIDE_BYTES in data:
            data = HOST_BEFORE_RANK_BYTES.sub(b"", data)
        if self._bytes is None:
            return data
        return self._bytes.sub(lambda m: b"%d: " % self.nodes[m.group(1).decode()], data)

    def _learn(self, text: str) -> None:
        """The hosts that `text` names: a `WORLD INFO DICT` line behind one of its hosts'
        prefixes (a launcher on one node, which pdsh did not start, prints it unprefixed), or
        the runner's pdsh command."""
        at = text.find(WORLD)
        hosts = _WORLD_HOST.findall(text, at, text.find("}", at)) if at >= 0 else []
        if hosts and not text.startswith(tuple(f"{host}: " for host in hosts), text.rfind("\n", 0, at) + 1):
            hosts = []
        if not hosts and RUNNER in text:
            r = _RUNNER.search(text)
            hosts = r.group(1).split(",") if r is not None else []
        if hosts and list(self.nodes) != hosts:
            self.nodes = {host: place for place, host in enumerate(hosts)}
            alternatives = "|".join(re.escape(h) for h in sorted(hosts, key=len, reverse=True))
            self._text = re.compile(r"^(%s): " % alternatives, re.M)
            self._bytes = re.compile(self._text.pattern.encode(), re.M)
