"""The job's world size where a log prints it, for `ingest`.

Most frameworks print their steps from one rank (Megatron-LM's last pipeline stage, DeepSpeed's,
the Trainer's and Lightning's rank 0), so the ranks a log shows are not the job's.  `ingest` takes
the world size from what the launcher or the framework printed at start, so that the job's row
holds it and a step that one printing rank waited through, or timed as the slowest rank's, is not
blamed on that rank (the verdict's `_held_up_by_the_unseen`, as for a job run live, whose
launcher says its world).
"""
from __future__ import annotations

import math

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


MESH = regex.compile(
    r"Building device mesh with parallelism: pp=(\d{1,7}+), dp_replicate=(\d{1,7}+), dp_shard=(\d{1,7}+), "
    r"cp=(\d{1,7}+), tp=(\d{1,7}+)"
    r"|Building (\d)-D device mesh with \[[^\]]{0,400}+\], \[((?:\d{1,7}+(?:, )?+){0,9}+)\]")
"""A device mesh over the whole job, as torchtitan logs it before it builds one: its degrees
`pp=1, dp_replicate=1, dp_shard=2, cp=1, tp=1, ep=1` (0.3 on; expert parallel is carved out of
the others), or the shape of the mesh, `Building 2-D device mesh with ['dp_shard', 'tp'], [4, 2]`,
as older torchtitan, OLMo-core and others log it (`init_device_mesh` takes the whole world)."""


def mesh_size(line: str) -> int | None:
    """The ranks of the device mesh `line` logs, else None."""
    m = MESH.search(line[:2000])
    if m is None:
        return None
    if m.group(1):
        degrees = [int(g) for g in m.groups()[:5]]
    else:
        degrees = [int(d) for d in m.group(7).split(", ") if d]
        if len(degrees) != int(m.group(6)):
            return None
    return math.prod(degrees) or None


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
    """The cheap test of a raw line before `printed_world_size` and `MegatronLayout.read`.  On the
    line as text (latin-1: any bytes, and the words are ASCII): a substring test on bytes first
    tries its operand as an int and drops the TypeError, five times the cost of str's."""
    line = raw.decode("latin-1")
    return ("orld" in line or "MEMBER" in line or MODEL_PARALLEL_GROUPS in line or "_size" in line
            or "device mesh" in line or "batches to constant" in line or "parallel with size" in line)


def printed_world_size(line: str) -> int | None:
    """The job's world size that `line` states, else None."""
    at = line.find(MODEL_PARALLEL_GROUPS)
    if at >= 0:
        ranks = regex.findall(r"\d++", line[at + len(MODEL_PARALLEL_GROUPS):])
        return max(int(r) for r in ranks) + 1 if ranks else None
    if "device mesh with" in line:
        return mesh_size(line)
    if "orld" not in line and "MEMBER" not in line:
        return None
    m = WORLD.search(line[:2000])
    if m is None:
        return None
    size = int(next(g for g in m.groups() if g is not None))
    return size if size > 0 else None


LAYOUT = regex.compile(
    r"(?<![\w.-])(global_batch_size|micro_batch_size|tensor_model_parallel_size|pipeline_model_parallel_size"
    r"|context_parallel_size)(?::| \.{3,}+) (\d{1,9}+)(?!\S)"        # a config or arguments dump
    r"|initialized (tensor|pipeline) model parallel with size (\d{1,9}+)"
    r"|setting number of micro-?batches to constant (\d{1,9}+)")
"""The lines Megatron-Core's users print of the job's layout: `global_batch_size: 4` (Megatron-Bridge's
configuration dump) or `global_batch_size ...... 4` (Megatron-LM's arguments), Megatron's
`> initialized tensor model parallel with size 1`, and `setting number of microbatches to constant 1`
(Megatron-Core's calculator; `micro-batches` in older Megatron-LM)."""


class MegatronLayout:
    """The job's size from the layout a Megatron-Core job prints, where it prints no world size
    (Megatron-Bridge): the number of microbatches is the global batch over the micro batch and
    the data-parallel size, so data parallel is global / (micro x microbatches), and the job is
    data x tensor x pipeline x context parallel.  Context parallel is 1 unless printed (Bridge
    prints only its non-default values); tensor and pipeline must be printed.  A value printed
    twice with two numbers (two configurations in one log) leaves the size unknown."""

    def __init__(self) -> None:
        self.values: dict[str, int | None] = {}

    def read(self, line: str) -> None:
        """Note what `line` prints of the layout (a line `may_state_it` let through)."""
        m = LAYOUT.search(line[:2000])
        if m is None:
            return
        if m.group(1):
            name, value = m.group(1), m.group(2)
        elif m.group(3):
            name, value = f"{m.group(3)}_model_parallel_size", m.group(4)
        else:
            name, value = "microbatches", m.group(5)
        seen = self.values.get(name, int(value))
        self.values[name] = seen if seen == int(value) else None

    def size(self) -> int:
        """The job's size, or 0 where the layout printed is not all there, or not consistent."""
        v = self.values
        need = ("global_batch_size", "micro_batch_size", "microbatches", "tensor_model_parallel_size",
                "pipeline_model_parallel_size")
        if any(not v.get(name) for name in need) or v.get("context_parallel_size", 1) in (None, 0):
            return 0
        per_replica = v["micro_batch_size"] * v["microbatches"]
        if v["global_batch_size"] % per_replica:
            return 0
        return (v["global_batch_size"] // per_replica * v["tensor_model_parallel_size"]
                * v["pipeline_model_parallel_size"] * (v.get("context_parallel_size") or 1))


def from_records(records) -> int:
    """The largest communicator an NCCL init line names (its `nranks`): the job's, where NCCL
    printed its init (NCCL_DEBUG=INFO); 0 where none did."""
    return max((r.get("nranks") or 0 for r in records
                if r.get("kind") == "nccl_init" and isinstance(r.get("nranks"), int)), default=0)
