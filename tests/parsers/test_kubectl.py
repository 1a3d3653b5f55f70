"""kubectl's prefix (`kubectl logs --prefix`, `-l SELECTOR`: `[pod/NAME/CONTAINER] `) is read as
srun's label of the pod's node where the pod's name gives its place: captured srun logs, their
labels turned into a PyTorchJob's or an Indexed Job's pods, give the same records, read in blocks
and line by line."""
from __future__ import annotations

import pytest

from ridgescope.parsers.kubectl import pod_labels

from .conftest import SRUN_LOGS, feed_all, reads_as_srun_labels


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
