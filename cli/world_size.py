"""The job's world size where a log prints it, for `ingest`.

Most frameworks print their steps from one rank (Megatron-LM's last pipeline stage, DeepSpeed's,
the Trainer's and Lightning's rank 0), so the ranks a log shows are not the job's.  `ingest` takes
the world size from what the launcher or the framework printed at start, so that the job's row
holds it and a step that one printing rank waited through, or timed as the slowest rank's, is not
blamed on that rank (the verdict's `_held_up_by_the_unseen`, as for a job run live, whose
launcher says its world).
"""
from __future__ import annotations

import regex

WORLD = regex.compile(
    r"using world size: (\d{1,7}+)"                     # Megatron-LM's arguments
    r"|^\s*+world_size \.{3,}+ (\d{1,7}+)\s*+$"          # Megatron-LM's arguments dump
    r"|\[config\.py:\d++:print\]\s++world_size \.{3,}+ (\d{1,7}+)"    # DeepSpeed's config dump
    r"|\bdist_world_size=(\d{1,7}+)"                    # DeepSpeed's launcher
    r"|GLOBAL_RANK: \d{1,7}+, MEMBER: \d{1,7}+/(\d{1,7}+)"   # Lightning's `Initializing distributed`
    r"|\bWorld size: (\d{1,7}+)"                        # Detectron2's
    r"|\[rank=\d{1,7}+, world_size=(\d{1,7}+)\]")       # Ray Train's process group
"""Lines that state the whole job's size; never a part's (`dp_world_size`, `LOCAL_WORLD_SIZE`,
OLMo-core's `Data parallel world size`)."""


MODEL_PARALLEL_GROUPS = "All model parallel group ranks: "
"""NeMo's `megatron_init` lists every model-parallel group (`All model parallel group ranks: [[0],
[1]]`): each rank is in one, so the job is its highest rank and one."""


_GROUPS = MODEL_PARALLEL_GROUPS.encode()
LABEL = regex.compile(rb"\[(?:default|rank)(\d{1,7}+)\]:|\[\d{1,7}+,(\d{1,7}+)\]<std")
"""torchrun's `[default1]:` and `[rank1]:`, mpirun's `[0,1]<stdout>:`: labels no other line
starts with (srun's `1: ` may be a line's own text)."""


def labelled_ranks(raw: bytes) -> int:
    """The ranks a launcher's label on a raw line shows the job has (its rank and one), whether
    or not the line gives a record (a rank that prints no step still prints); 0 for none."""
    if raw[:1] != b"[":
        return 0
    m = LABEL.match(raw)
    return int(m.group(1) or m.group(2)) + 1 if m else 0


def may_state_it(raw: bytes) -> bool:
    """The cheap test of a raw line before `printed_world_size`."""
    return b"orld" in raw or b"MEMBER" in raw or _GROUPS in raw


def printed_world_size(line: str) -> int | None:
    """The job's world size that `line` states, else None."""
    at = line.find(MODEL_PARALLEL_GROUPS)
    if at >= 0:
        ranks = regex.findall(r"\d++", line[at + len(MODEL_PARALLEL_GROUPS):])
        return max(int(r) for r in ranks) + 1 if ranks else None
    if "orld" not in line and "MEMBER" not in line:
        return None
    m = WORLD.search(line[:2000])
    if m is None:
        return None
    size = int(next(g for g in m.groups() if g is not None))
    return size if size > 0 else None


def from_records(records) -> int:
    """The largest communicator an NCCL init line names (its `nranks`): the job's, where NCCL
    printed its init (NCCL_DEBUG=INFO); 0 where none did."""
    return max((r.get("nranks") or 0 for r in records
                if r.get("kind") == "nccl_init" and isinstance(r.get("nranks"), int)), default=0)
