"""Logs of one node each: `ridgescope parse|ingest --node-logs node0.log node1.log ...`.

torchrun's `--tee` prefix names a worker's local rank, so on a job of several nodes every
node's log has its `[default0]:`.  Given the logs in node order, the Kth log's local rank N is
the job's rank K x workers per node + N: torch's own numbering where the node ranks were given
(a static rendezvous's `--node-rank K`).  A c10d rendezvous numbers the nodes otherwise: where a
log's head holds its agent's result (LOGLEVEL=INFO: `global_ranks=[2, 3]`,
`parsers/rendezvous.py`), the node's ranks are those, whatever its place in the list; where not,
they are still one per worker, not necessarily torch's number for it.
A node's stdout and stderr saved apart and given together (`pipe_pairs`) are one node.
"""
from __future__ import annotations

import argparse
import itertools
import re
from dataclasses import dataclass
from typing import Callable

from ridgescope.cli import pipe_pairs
from ridgescope.cli.log_blocks import head_blocks
from ridgescope.parsers import rendezvous
from ridgescope.parsers.template import TeePrefix

LOCAL_PREFIX = re.compile(rb"(?m)^\[default([0-9]{1,7})\]:")
"""torchrun's default prefix at a line's start (behind srun's label it is not a node log's)."""
AGENT_HEAD_BLOCKS = 4
"""The blocks of a file's head that are looked through for its agent's rendezvous result where
the file is not given as a node's log (the agent logs it before it starts its workers)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--node-logs", action="store_true",
                        help="each FILE is one node's torchrun --tee output, in node order: its "
                             "[defaultN] (or, from torchx's dist.ddp, [N]) are local ranks, and the Kth "
                             "file's are the job's ranks "
                             "K x workers per node + N, or those its torchrun agent logged the "
                             "rendezvous gave it (LOGLEVEL=INFO) (a node's stdout and stderr files, "
                             "node0.out and node0.err, are one node)")
    parser.add_argument("--nproc-per-node", type=int, default=None, metavar="N",
                        help="workers per node, for --node-logs and for torchrun --log-dir files "
                             "of several nodes (default: the most local ranks the files show)")


Head = tuple[int, list[int] | None]
"""What a file's head says of its node (`read_head`)."""


def read_head(path: str, prefix: TeePrefix | None, blocks: int | None = None) -> Head:
    """What the file's first SCAN_HEAD bytes (or first `blocks`) say of its node: 1 + the
    highest local rank that begins a line (0 where none does, or where `prefix`, torchrun's
    template where it is not the default, names no local rank); and the job's ranks of the
    node's workers, as the first rendezvous result that its torchrun agent logged gave them
    (None where there is none; a restart's later one is not looked for)."""
    shown, given = 0, None
    for block in itertools.islice(head_blocks(path), blocks):
        if prefix is not None:
            block = prefix.as_default(block)
        if b"[default" in block and (prefix is None or prefix.local):
            shown = max(shown, max((int(m.group(1)) + 1 for m in LOCAL_PREFIX.finditer(block)),
                                   default=0))
        if given is None and rendezvous.MARK_BYTES in block:
            given = next((ranks for node, ranks in rendezvous.results(block.decode("utf-8", "replace"))
                          if node is None), None)
    return shown, given


@dataclass(frozen=True)
class NodeLog:
    """Where one node's log sits in the job: `base` is the job's rank of its local rank 0 (and
    of its lines without a prefix), `local` says whether its prefixes name local ranks, and
    `workers` how many ranks the node ran."""
    base: int
    local: bool
    workers: int


def places(args: argparse.Namespace, prefixes: list[TeePrefix | None],
           say: Callable[[str], None]) -> list[NodeLog | None]:
    """Each file's NodeLog under `--node-logs`, else None for each.  `prefixes`: a fresh parser
    of each file's torchrun prefix template, where it is not the default; `say` tells the user
    where each file was placed.  Raises ValueError for what cannot be a node's log,
    OSError for a file that cannot be read."""
    paths = args.files
    if not args.node_logs:
        return placed_by_agents(paths, prefixes, say)
    if "-" in paths:
        raise ValueError("--node-logs reads files, not standard input: each one is a node")
    nproc = args.nproc_per_node
    if nproc is not None and nproc < 1:
        raise ValueError("--nproc-per-node must be at least 1")
    heads = {path: read_head(path, prefix) for path, prefix in zip(paths, prefixes)}
    shown = [heads[path][0] for path in paths]
    workers = nproc or max(shown) or 1
    if nproc is None:
        say(f"{workers} worker(s) per node: the most local ranks one file shows "
             f"(--nproc-per-node if a node ran more, whose ranks printed nothing)")
    elif max(shown) > nproc:
        raise ValueError(f"a file shows local rank {max(shown) - 1}, more than --nproc-per-node "
                         f"{nproc} allows")
    out: list[NodeLog | None] = []
    pairs = pipe_pairs.pair_files(paths)
    nodes: dict[str, int] = {}      # a node's stdout and stderr files are one node
    for path, count in zip(paths, shown):
        node = nodes.setdefault(pairs[path].stdout if path in pairs else path, len(nodes))
        base = node * workers
        given = _agents_ranks(path, heads, pairs)
        agent_base = rendezvous.node_base(given) if given else None
        if count and agent_base is not None:
            base = agent_base
            say(f"{path}: ranks {base}-{base + workers - 1}, as torchrun's rendezvous gave them "
                f"(its agent's global_ranks={given})")
        elif count:
            say(f"{path}: node {node}, ranks {base}-{base + workers - 1}")
        else:
            say(f"{path}: node {node}: no line begins with torchrun's prefix of a local rank; its "
                 f"ranks are the log's own, and its lines without one rank {base}'s (where each "
                 f"worker prints its steps, ranks {base}-{base + workers - 1} by the order of "
                 f"their prints: --nproc-per-node says how many)")
        out.append(NodeLog(base, bool(count), workers))
    return out


def placed_by_agents(paths: list[str], prefixes: list[TeePrefix | None],
                     say: Callable[[str], None]) -> list[NodeLog | None]:
    """Without `--node-logs`: a node's own log (torchrun's `--tee` prefixes name local ranks)
    whose agent logged the ranks that the rendezvous gave the node, other than node 0's, is
    placed by them all the same; every other file is read as it is (None)."""
    heads: dict[str, Head] = {}
    for path, prefix in zip(paths, prefixes):
        try:
            heads[path] = read_head(path, prefix, AGENT_HEAD_BLOCKS) if path != "-" else (0, None)
        except OSError:     # (a stream that cannot be read twice, say: its reader tells)
            heads[path] = (0, None)
    pairs = pipe_pairs.pair_files(paths)
    out: list[NodeLog | None] = []
    for path in paths:
        given = _agents_ranks(path, heads, pairs)
        base = rendezvous.node_base(given) if given else None
        if given is None or not base or not heads[path][0]:
            out.append(None)
            continue
        say(f"{path}: a node's log, its [defaultN] local ranks: ranks {base}-{base + len(given) - 1}, as "
            f"torchrun's rendezvous gave them (its agent's global_ranks={given})")
        out.append(NodeLog(base, True, len(given)))
    return out


def _agents_ranks(path: str, heads: dict[str, Head], pairs: dict[str, pipe_pairs.Pipes]) -> list[int] | None:
    """The ranks the node's agent logged, in the head of the file or of its other pipe's."""
    pipes = pairs.get(path)
    return next((heads[f][1] for f in ((pipes.stdout, pipes.stderr) if pipes is not None else (path,))
                 if heads[f][1]), None)


def as_job_rank(record: dict, node: NodeLog | None) -> dict:
    """The record with its local rank turned into the job's (and kept as `local_rank`).  A
    record that names a local rank itself (torchrun's report, `rank : 3 (local_rank: 1)`, or its
    agent's `failed (exitcode: 1) local_rank: 1`) has the job's rank beside it where the line
    gave one, and the node's rank of that local rank where it did not."""
    rank = record.get("rank")
    if node is None or not node.local:
        return record
    if "local_rank" in record:
        local = record["local_rank"]
        if (isinstance(rank, int) and rank >= 0) or not isinstance(local, int) or local < 0:
            return record
        return dict(record, rank=node.base + local)
    if not isinstance(rank, int) or rank < 0:
        return record
    return dict(record, rank=node.base + rank, local_rank=rank)
