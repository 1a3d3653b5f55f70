"""The ranks of torchrun's `--log-dir` files, for `ridgescope ingest`.

With `--redirects 3`, torchrun writes each worker's stdout to
`LOG_DIR/RUN_ID_xxxxxxxx/attempt_N/LOCAL_RANK/stdout.log`: the directory names the worker's local
rank, and nothing names its node.  Every node's agent makes a run directory of its own (its
random suffix differs even on a shared file system), so files of one run directory are one
node's, and its `attempt_N` are the same workers restarted.  Given the run directories in node
order, the Kth one's local rank N is the job's rank K x workers per node + N, torch's own numbering
where the node ranks were given (a static rendezvous's `--node-rank K`).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

_ATTEMPT = re.compile(r"attempt_\d{1,6}")


def torchrun_place(path: str) -> tuple[str, int] | None:
    """(run directory, local rank) of a file torchrun's `--log-dir` wrote; None for another."""
    p = Path(path)
    if p.parent.name.isdigit() and _ATTEMPT.fullmatch(p.parent.parent.name):
        return str(p.parent.parent.parent), int(p.parent.name)
    return None


def job_ranks(paths: list[str], nproc: int | None, say: Callable[[str], None]) -> list[int | None]:
    """Each file's rank in the job, where the files come from the run directories of two or more
    nodes (None for every file otherwise, and for a file of no run directory): the nodes in the
    order their first files were given.  `nproc`: workers per node, else 1 + the highest local
    rank of any file.  `say` tells the user which directory became which node."""
    places = [torchrun_place(path) for path in paths]
    nodes: dict[str, int] = {}
    for place in places:
        if place is not None:
            nodes.setdefault(place[0], len(nodes))
    if len(nodes) < 2:
        return [None] * len(paths)
    highest = max(place[1] for place in places if place is not None)
    if nproc is not None and highest >= nproc:
        raise ValueError(f"a --log-dir file is local rank {highest}'s, more than --nproc-per-node "
                         f"{nproc} allows")
    workers = nproc or highest + 1
    say(f"torchrun --log-dir files of {len(nodes)} nodes, {workers} worker(s) each "
        f"(--nproc-per-node if a node ran more), in the order their directories were given: "
        f"the log does not say a node's rank")
    for run_dir, node in nodes.items():
        say(f"{run_dir}: node {node}, ranks {node * workers}-{node * workers + workers - 1}")
    return [None if place is None else nodes[place[0]] * workers + place[1] for place in places]
