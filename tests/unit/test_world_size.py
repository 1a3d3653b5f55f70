"""The job's size as its log prints it (`ingest`), on lines of the corpus and the captures."""
from __future__ import annotations

import pytest

from pathlib import Path

from ridgescope.cli.world_size import (MegatronLayout, from_records, labelled_ranks, may_state_it,
                                       printed_world_size)

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.parametrize("line, size", [
    ("[default0]:using world size: 2, data-parallel size: 1, context-parallel size: 1, "
     "hierarchical context-parallel sizes: None, tensor-model-parallel size: 1, "
     "pipeline-model-parallel size: 2", 2),
    ("  world_size ...................................... 64", 64),
    ("[2022-10-28 22:57:01,607] [INFO] [config.py:982:print]   world_size ................... 8", 8),
    ("[2023-06-09 05:17:52,629] [INFO] [launch.py:163:main] dist_world_size=16", 16),
    ("Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/32", 32),
    ("[11/30 20:12:01 detectron2]: Rank of current process: 0. World size: 1", 1),
    ("\x1b[36m(RayTrainWorker pid=1847)\x1b[0m Setting up process group for: env:// "
     "[rank=0, world_size=2]", 2),
    ("[NeMo I 2026-12-01 01:38:05 megatron_init:485] All model parallel group ranks: [[0], [1]]", 2),
    ("[NeMo I 2025-06-20 10:18:28 nemo_logging:393] All model parallel group ranks: [[0], [1], [2], [3], "
     "[4], [5], [6], [7], [8], [9], [10], [11], [12], [13], [14], [15]]", 16),
    # torchtitan 0.3's mesh degrees (expert parallel is carved out of the others), and the
    # mesh's shape as older torchtitan and OLMo-core log it
    ("[rank0]:[titan] 2026-05-19 13:57:41,374 - root - INFO - Building device mesh with parallelism: "
     "pp=1, dp_replicate=1, dp_shard=8, cp=1, tp=1, ep=1", 8),
    ("Building device mesh with parallelism: pp=2, dp_replicate=2, dp_shard=4, cp=2, tp=8, ep=4, etp=1", 256),
    ("[rank0]:2024-06-01 12:00:00,000 - root - INFO - Building 2-D device mesh with ['dp_shard', 'tp'], [4, 2]", 8),
    ("Building 2-D device mesh with ['dp', 'tp'], [2, 1]...", 2),
    ("Building 0-D device mesh with [], []", 1),
])
def test_lines_that_state_the_jobs_size(line, size):
    assert printed_world_size(line) == size


@pytest.mark.parametrize("line", [
    "\t self.dp_world_size=2",
    "  inprocess_active_world_size ..................... 2",
    "2026-11-30 17:16:36.484\tvm:0\tolmo_core.train.train_module.transformer.train_module:177\tINFO\t"
    "Data parallel world size = 2",
    "Env var 'LOCAL_WORLD_SIZE' already set to '1'",
    "    _ndev = int(os.environ.get(\"LOCAL_WORLD_SIZE\", \"1\"))",
    "using world size: 0",
    "[NeMo I 2026-12-01 01:38:05 megatron_init:498] All tensor model parallel group ranks: [[0], [1]]",
    "[NeMo I 2026-12-01 01:38:05 megatron_init:485] All model parallel group ranks: []",
    "Building 3-D device mesh with ['dp', 'tp'], [2, 4]",       # a shape that is not the mesh's
    "Building device mesh with parallelism: pp=1, dp_replicate=1, dp_shard=0, cp=1, tp=1",
])
def test_a_parts_size_or_none_is_not_the_jobs(line):
    assert printed_world_size(line) is None


def test_the_largest_nccl_communicator_is_the_job():
    records = [{"kind": "nccl_init", "nranks": 8}, {"kind": "nccl_init", "nranks": 64},
               {"kind": "progress", "nranks": 512}, {"kind": "nccl_init", "nranks": None}]
    assert from_records(records) == 64 and from_records([]) == 0


@pytest.mark.parametrize("raw, ranks", [
    (b"[default1]:11/30/2026 23:22:46 [INFO|DP=1|PP=0|TP=0]: No checkpoint path provided.", 2),   # nanotron
    (b"[rank3]:[titan] 2026-11-30 20:01:49,966 - root - INFO - Sleeping 2 seconds", 4),
    (b"[1,2]<stdout>:step 5", 3),
    (b"  1: slurmstepd: task_p_pre_launch", 0),        # srun's label may be a line's own text
    (b"[3] NCCL INFO x", 0),
    (b"[INFO] x", 0),
    (b"plain", 0),
])
def test_a_launchers_label_shows_a_rank_of_the_job(raw, ranks):
    assert labelled_ranks(raw) == ranks


def _layout(lines) -> int:
    layout = MegatronLayout()
    for line in lines:
        if may_state_it(line.encode()):
            layout.read(line)
    return layout.size()


BRIDGE_2 = ["  global_batch_size: 4", "  micro_batch_size: 2",
            "INFO:megatron.core.num_microbatches_calculator:setting number of microbatches to constant 1",
            "> initialized tensor model parallel with size 1", "> initialized pipeline model parallel with size 1"]


@pytest.mark.parametrize("lines, size", [
    (BRIDGE_2, 2),
    # Megatron-LM's arguments, under torchrun's label; older Megatron's `micro-batches`
    (["[default0]:  global_batch_size ............................... 1024",
      "[default0]:  micro_batch_size ................................ 4",
      "[default0]:  tensor_model_parallel_size ...................... 4",
      "[default0]:  pipeline_model_parallel_size .................... 16",
      "[default0]:setting number of micro-batches to constant 256"], 64),
    # Bridge prints context parallel only where it is not 1, among its non-default values
    (BRIDGE_2 + ["  context_parallel_size: 2  (Mcore default: 1)"], 4),
    (BRIDGE_2[:4], 0),                                       # pipeline parallel never printed
    (BRIDGE_2[:2] + BRIDGE_2[3:], 0),                       # a batch-size ramp: no constant count
    (BRIDGE_2 + ["  global_batch_size: 8"], 0),             # two configurations: which is the job's?
    (BRIDGE_2 + ["  global_batch_size: 4"], 2),             # the same value again
    (["  global_batch_size: 6", "  micro_batch_size: 4"] + BRIDGE_2[2:], 0),   # 6 is no multiple of 4 x 1
    (BRIDGE_2[:1] + ["  micro_batch_size: 4"] + BRIDGE_2[2:], 1),
    (["  eval_global_batch_size: 64", "  global_batch_size=4"] + BRIDGE_2[1:], 0),   # no key of its own
])
def test_a_megatron_jobs_size_from_the_layout_it_printed(lines, size):
    assert _layout(lines) == size


def test_the_layout_agrees_with_the_world_size_wherever_a_log_prints_both():
    """Every log of the corpus and the captures that prints its layout: the size read from it is
    the size printed (8, 16, 32 and 64 ranks, tensor and pipeline parallel among them), and the
    2-rank Megatron-Bridge run, which prints no size, is 2."""
    sizes = {}
    for path in sorted(DATA.rglob("*.log")):
        layout, printed = MegatronLayout(), 0
        for raw in path.read_bytes().splitlines():
            if may_state_it(raw):
                text = raw.decode("utf-8", "replace")
                printed = max(printed, printed_world_size(text) or 0)
                layout.read(text)
        if layout.size():
            sizes[path.name] = (layout.size(), printed)
    assert len([s for s in sizes.values() if s[1]]) >= 10
    assert all(from_layout == printed for from_layout, printed in sizes.values() if printed)
    assert {s for s, _ in sizes.values()} >= {1, 2, 8, 16, 32, 64}
    assert sizes["megatron-bridge-0.3.1_megatron-core-0.16.1_tiny-llama_2rank-dp_cpu.log"] == (2, 0)
