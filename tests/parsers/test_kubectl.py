"""kubectl's prefix (`kubectl logs --prefix`, `-l SELECTOR`: `[pod/NAME/CONTAINER] `) is read as
srun's label of the pod's node where the pod's name gives its place: captured srun logs, their
labels turned into a PyTorchJob's or an Indexed Job's pods, give the same records, read in blocks
and line by line."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ridgescope.parsers import Dispatcher
from ridgescope.parsers.kubectl import pod_labels

from .conftest import feed_all

CAPTURED = Path(__file__).resolve().parents[1] / "data" / "captured"
SRUN_LOGS = ["slurm-22.05.8_torch-2.15_srun-label-around-torchrun-tee3_lines-in-two-writes_2x2rank.log",
             "slurm-22.05.8_torch-2.15_srun-label_rank1-raises_2task.log",
             "slurm-22.05.8_srun-label-unbuffered_lines-in-two-writes_3rank.log"]


def pytorchjob_pod(node: int) -> str:
    """Kubeflow's PyTorchJob: the master is node 0, worker N node N + 1."""
    return "[pod/llama-8b-master-0/pytorch] " if node == 0 else f"[pod/llama-8b-worker-{node - 1}/pytorch] "


def indexed_job_pod(node: int) -> str:
    """An Indexed Job's pod (and a JobSet's, Kubeflow Trainer's): its completion index, then a hash."""
    return f"[pod/sft-node-0-{node}-x7k{node}p/node] "


def records(data: bytes) -> tuple[list[dict], list[dict]]:
    d = Dispatcher()
    in_block = d.feed_chunk(data) + d.flush()
    by_line, _ = feed_all(data.splitlines(keepends=True))
    return in_block, by_line


@pytest.mark.parametrize("name", SRUN_LOGS)
@pytest.mark.parametrize("pod", [pytorchjob_pod, indexed_job_pod])
def test_a_pods_prefix_reads_as_its_nodes_srun_label(name, pod):
    data = (CAPTURED / name).read_bytes()
    relabelled = re.sub(rb"(?m)^ {0,7}([0-9]{1,7}): ", lambda m: pod(int(m.group(1))).encode(), data)
    assert relabelled != data and b"[pod/" in relabelled
    srun_block, srun_lines = records(data)
    pod_block, pod_lines = records(relabelled)
    assert srun_block and pod_block == srun_block
    assert pod_lines == srun_lines
    assert {r["rank"] for r in pod_block} >= {0, 1}


def test_a_pod_whose_name_gives_no_place_loses_its_prefix_and_keeps_its_lines_ranks():
    """An MPIJob's launcher: mpirun's tag inside names the rank.  A prefix quoted inside a line
    is the line's text."""
    text = ("[pod/bert-launcher-x7k2p/mpi-launcher] [1,5]<stdout>:step 8 loss 1.8\n"
            "saw [pod/llama-8b-worker-0/pytorch] go\n"
            "[pod/llama-8b-worker-0/pytorch] [rank11]:step 9 loss 1.7\n")
    assert pod_labels(text) == "[1,5]<stdout>:step 8 loss 1.8\nsaw [pod/llama-8b-worker-0/pytorch] go\n1: [rank11]:step 9 loss 1.7\n"
    assert pod_labels(text.encode()) == pod_labels(text).encode()
    recs, _ = feed_all(text.splitlines())
    assert [(r["rank"], r["step"]) for r in recs] == [(5, 8), (11, 9)]
