"""Logs given to one `ingest` that hold the same ranks' same steps.

Each node's torchrun `--tee` log names local ranks (`[default0]:`...): given as they are, two
nodes' logs put node 1's steps on node 0's ranks, and each step of a rank is stored once, so
half the job was silently lost.  `--node-logs` places them; this finds where it was likely
forgotten, and says so.
"""
from __future__ import annotations

MIN_SHARED = 0.5
"""The share of the smaller file's (rank, step) pairs that the other file must hold too."""


def rank_steps(items) -> set[tuple[int, int]]:
    """The (rank, step) of a file's progress records."""
    return {(it.rank, it.record["step"]) for it in items
            if it.record is not None and it.record.get("kind") == "progress"
            and isinstance(it.record.get("step"), int)}


def overlaps(files: list[tuple[str, set[tuple[int, int]]]]) -> list[str]:
    """A warning for each pair of files where most (rank, step) pairs of one are the other's
    too (each pair counted against the first file that holds it: one pass, however many
    files, as a job of a thousand ranks' logs needs)."""
    first: dict[tuple[int, int], int] = {}
    shared: dict[tuple[int, int], set[tuple[int, int]]] = {}
    for j, (_, pairs) in enumerate(files):
        for pair in pairs:
            i = first.setdefault(pair, j)
            if i != j:
                shared.setdefault((i, j), set()).add(pair)
    out = []
    for (i, j), both in sorted(shared.items()):
        if len(both) < MIN_SHARED * min(len(files[i][1]), len(files[j][1])):
            continue
        ranks = sorted({rank for rank, _ in both})
        steps = sorted({step for _, step in both})
        out.append(f"{files[i][0]} and {files[j][0]} both hold steps {steps[0]}-{steps[-1]} of "
                   f"rank(s) {', '.join(map(str, ranks))}: each step of a rank is stored once, so "
                   f"one file's replace the other's.  Two nodes' torchrun --tee logs: ingest them "
                   f"with --node-logs (the Kth file is node K); a log of each rank whose path "
                   f"names no 'rankN': --rank-in-path REGEX reads its rank from its path")
    return out
