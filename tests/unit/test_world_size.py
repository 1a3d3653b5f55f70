"""The job's size as its log prints it (`ingest`), on lines of the corpus and the captures."""
from __future__ import annotations

import pytest

from ridgescope.cli.world_size import from_records, labelled_ranks, printed_world_size


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
