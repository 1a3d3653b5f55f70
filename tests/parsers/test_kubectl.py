"""kubectl's prefix (`kubectl logs --prefix`, `-l SELECTOR`: `[pod/NAME/CONTAINER] `) is read as
srun's label of the pod's node where the pod's name gives its place: captured srun logs, their
labels turned into a PyTorchJob's or an Indexed Job's pods, give the same records, read in blocks
and line by line."""
from __future__ import annotations

import re

import pytest

from ridgescope.parsers.kubectl import pod_labels

from .conftest import CAPTURED, SRUN_LOGS, blocks_and_lines, feed_all, reads_as_srun_labels
from .test_torchx import CRASH as TORCHX_CRASH, as_srun_with_tee


def pytorchjob_pod(node: int) -> str:
    """Kubeflow's PyTorchJob: the master is node 0, worker N node N + 1."""
    return "[pod/llama-8b-master-0/pytorch] " if node == 0 else f"[pod/llama-8b-worker-{node - 1}/pytorch] "


def indexed_job_pod(node: int) -> str:
    """An Indexed Job's pod (and a JobSet's, Kubeflow Trainer's): its completion index, then a hash."""
    return f"[pod/sft-node-0-{node}-x7k{node}p/node] "


@pytest.mark.parametrize("name", SRUN_LOGS)
@pytest.mark.parametrize("pod", [pytorchjob_pod, indexed_job_pod])
def test_a_pods_prefix_reads_as_its_nodes_srun_label(name, pod):
    reads_as_srun_labels(name, pod)


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


def test_torchx_volcano_pods_read_as_their_replicas_and_their_workers_bare_prefix_as_torchruns():
    """torchx's Kubernetes scheduler names replica N's pod `APP-ROLE-N-0`, its container `ROLE-N`,
    and its torchrun (`dist.ddp`, an empty role) prefixes each worker's line `[M]:`.  The captured
    2x2 `dist.ddp` crash, its replicas' lines behind their pods' prefixes as `kubectl logs
    --prefix -l ...` gives them, reads as the same log under `srun --label torchrun --tee 3`:
    rank 3's traceback, its agent's failure and torchrun's report naming rank 3."""
    replica = re.compile(rb"(?m)^crash/([0-9]) ")
    lines = [line for line in (CAPTURED / TORCHX_CRASH).read_bytes().splitlines(keepends=True) if replica.match(line)]
    pods = b"".join(replica.sub(rb"[pod/crash-x095grd5w0s5bc-crash-\1-0/crash-\1] ", line) for line in lines)
    srun = as_srun_with_tee(b"".join(lines))
    assert pod_labels(pods) == srun
    block, by_line = blocks_and_lines(pods)
    assert (block, by_line) == blocks_and_lines(srun)
    assert [r["rank"] for r in block if r.get("exception") == "RuntimeError" and "shape mismatch" in r["message"]] == [3]
    assert [(r["rank"], r["local_rank"]) for r in block if r.get("error") == "child_failed"] == [
        (3, 1), (3, 1), (0, 0), (0, 0)]
    # a pod of another shape keeps a worker's bare prefix as its line's text
    assert pod_labels("[pod/crash-x095-crash-1-0/pytorch] [1]:step 2\n") == "[1]:step 2\n"
