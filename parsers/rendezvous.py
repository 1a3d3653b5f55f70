"""The job's ranks of a node's workers, as torchrun's agent logs its rendezvous's result.

torchrun numbers a node's workers group rank x workers a node + local rank, and the group rank
is the rendezvous's to give.  A static one gives `--node-rank`; a c10d one orders the nodes by
their agents' descriptors (host name, then pid, compared as text: `node10` before `node2`), not
by srun's task id, nor by the order in which a user lists the nodes' logs.  With LOGLEVEL=INFO
(torchtitan's Slurm script sets it) each agent logs what it got, before it starts its workers:

    I1207 07:52:39.958000 2395 torch/distributed/elastic/agent/server/api.py:552] [default] Rendezvous complete for workers. Result:
    I1207 07:52:39.958000 2395 torch/distributed/elastic/agent/server/api.py:552]   group_rank=1
    I1207 07:52:39.958000 2395 torch/distributed/elastic/agent/server/api.py:552]   local_ranks=[0, 1]
    I1207 07:52:39.958000 2395 torch/distributed/elastic/agent/server/api.py:552]   global_ranks=[2, 3]

(torch 1.x logs the lines after the first bare: `  global_ranks=[2, 3]`.)  `global_ranks` lists
the job's rank of local rank 0, 1, ... in order, so that one line says it all.  After a restart
the agents meet again and log a new result, which may number the nodes otherwise.
"""
from __future__ import annotations

import re

from .srun import LABEL

MARK = "global_ranks=["
MARK_BYTES = MARK.encode()
_LABEL = re.compile(LABEL.decode())
"""srun's label, which a node's lines have where another launcher labelled them (`node_labels`)."""
_MOST = 100_000
"""The most workers a node's list is read for: a longer one is no agent's."""


def ranks_listed(line: str, at: int = 0) -> list[int] | None:
    """The ranks of the `global_ranks=[...]` in `line` (searched from `at`); None where there
    is none or it is not a list of ranks."""
    start = line.find(MARK, at)
    if start < 0:
        return None
    start += len(MARK)
    end = line.find("]", start, start + 10 * _MOST)
    if end < 0:
        return None
    try:
        ranks = [int(word) for word in line[start:end].split(",")]
    except ValueError:
        return None
    return ranks if all(r >= 0 for r in ranks) else None


def results(text: str) -> list[tuple[int | None, list[int]]]:
    """Each agent's result in `text` (lines), in order: (the node's srun label, None where the
    line has none; the job's ranks of its local ranks)."""
    out: list[tuple[int | None, list[int]]] = []
    at = text.find(MARK)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        ranks = ranks_listed(text, start)
        if ranks is not None:
            label = _LABEL.match(text, start, at)
            out.append((int(label.group("task")) if label else None, ranks))
        at = text.find(MARK, at + len(MARK))
    return out


def node_base(ranks: list[int]) -> int | None:
    """The job's rank of local rank 0, where the node's ranks run on from it one by one (as
    torchrun gives them); None otherwise."""
    return ranks[0] if ranks and ranks == list(range(ranks[0], ranks[0] + len(ranks))) else None
