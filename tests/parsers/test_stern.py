"""stern's prefix (`stern QUERY`: `POD CONTAINER `, `NAMESPACE POD CONTAINER ` over several
namespaces, coloured on a terminal) is read as srun's label of the pod's node where the pod's name
gives its place: captured srun logs and torchx's replicas, their labels turned into a job's pods
as stern prints them, give the same records, read in blocks and line by line."""
from __future__ import annotations

import re

import pytest

from ridgescope.parsers import Dispatcher
from ridgescope.parsers.stern import LOOK, job_of

from .conftest import CAPTURED, SRUN_LOGS, blocks_and_lines, reads_as_srun_labels
from .test_torchx import CRASH as TORCHX_CRASH, as_srun_with_tee


def pytorchjob(node: int) -> str:
    """A Kubeflow PyTorchJob's pods, whose container is always `pytorch`: master node 0, worker N node N + 1."""
    return "llama-8b-master-0 pytorch " if node == 0 else f"llama-8b-worker-{node - 1} pytorch "


def indexed_job_in_namespaces(node: int) -> str:
    """A JobSet's pods (Kubeflow Trainer), stern tailing two namespaces: the namespace first."""
    return f"ml-team sft-node-0-{node}-x7k{'bcdfg'[node]}p node "


def pytorchjob_coloured(node: int) -> str:
    """stern on a terminal: each pod's name and its container's in a colour of the pod's."""
    pod = "llama-8b-master-0" if node == 0 else f"llama-8b-worker-{node - 1}"
    return f"\x1b[9{node + 1}m{pod}\x1b[0m \x1b[3{node + 1}mpytorch\x1b[0m "


@pytest.mark.parametrize("name", SRUN_LOGS)
@pytest.mark.parametrize("pod", [pytorchjob, indexed_job_in_namespaces, pytorchjob_coloured])
def test_a_pods_prefix_reads_as_its_nodes_srun_label(name, pod):
    reads_as_srun_labels(name, pod)


def test_torchx_replicas_pods_read_as_their_nodes():
    """The captured torchx 2x2 crash as stern prints its pods (`APP-ROLE-N-0 ROLE-N `, its workers'
    `[M]:` behind): the records of the same log under `srun --label torchrun --tee 3`."""
    replica = re.compile(rb"(?m)^crash/([0-9]) ")
    lines = [line for line in (CAPTURED / TORCHX_CRASH).read_bytes().splitlines(keepends=True) if replica.match(line)]
    stern = b"".join(replica.sub(rb"crash-x095grd5w0s5bc-crash-\1-0 crash-\1 ", line) for line in lines)
    block, by_line = blocks_and_lines(stern)
    assert (block, by_line) == blocks_and_lines(as_srun_with_tee(b"".join(lines)))
    assert [r["rank"] for r in block if r.get("exception") == "RuntimeError" and "shape mismatch" in r["message"]] == [3]


def test_only_a_pods_name_that_gives_a_place_is_learnt():
    assert job_of("llama-8b-worker-12", "pytorch") == "llama-8b"
    assert job_of("llama-8b-master-0", "pytorch") == "llama-8b"
    assert job_of("llama-8b-worker-12", "started") is None         # a line's words, not a container
    assert job_of("sft-node-0-3-x7k2p", "node") == "sft-node-0"
    assert job_of("sft-node-0-3-abcde", "node") is None            # vowels: no pod's suffix
    assert job_of("crash-x095-crash-1-0", "crash-1") == "crash-x095"
    assert job_of("crash-x095-crash-1-0", "crash-2") is None


def test_lines_that_only_look_like_a_prefix_keep_their_ranks():
    """A log whose lines begin with two words is read as it is; a pod's prefix seen after the
    stream's first LOOK lines is not learnt."""
    text = "".join(f"[rank{r}]:step 5 loss 2.0 step_time_ms 10.0\n" for r in range(2))
    plain = "llama-8b-worker-0 started pytorch\nstep 7 loss 1.0\n"
    d = Dispatcher()
    recs = d.feed_chunk((plain + text).encode()) + d.flush()
    assert [(r["rank"], r["step"]) for r in recs] == [(None, 7), (0, 5), (1, 5)]
    assert not d.labels.stern.jobs
    late = "".join(f"chatter {i}\n" for i in range(LOOK)) + "llama-8b-worker-0 pytorch [rank3]:step 9 loss 1.0\n"
    d = Dispatcher()
    recs = d.feed_chunk(late.encode()) + d.flush()
    assert [(r["rank"], r["step"]) for r in recs] == [(None, 9)]     # the prefix read as the line's text
    assert not d.labels.stern.jobs


def test_sterns_notice_of_a_pod_that_comes_late_teaches_its_job():
    """stern started before the job's pods (or tailing other pods too): LOOK lines of another
    pod's, then its notice of the job's pod, `+ POD › CONTAINER`: the pod's lines after it read
    as its node's, in blocks and line by line, as text and as bytes."""
    other = "".join(f"web-7d9f8-x2k4p nginx GET /healthz {i}\n" for i in range(LOOK + 10))
    late = "+ llama-8b-worker-2 \u203a pytorch\nllama-8b-worker-2 pytorch [default0]:step 4 loss 1.5 step_time_ms 20.0\n"
    block, by_line = blocks_and_lines((other + late).encode())
    assert [(r["rank"], r["step"]) for r in block] == [(3, 4)]
    assert by_line == block
    d = Dispatcher()
    assert [(r["rank"], r["step"]) for r in d.feed_chunk(other + late) + d.flush()] == [(3, 4)]


@pytest.mark.parametrize("coloured", [False, True])
def test_sterns_notices_teach_the_job_before_its_lines(coloured):
    """stern's `+ POD › CONTAINER` for each container (here 70 of them, more than the lines
    looked at) teaches the job's name; a pod's lines after them read as its node's."""
    def paint(text: str, code: int) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if coloured else text
    notices = "".join(f"{paint('+', '92;1')} {paint(f'llama-8b-worker-{n}', 96)} \u203a {paint('pytorch', 36)}\n"
                      for n in range(70))
    lines = "".join(f"{paint(f'llama-8b-worker-{n}', 96)} {paint('pytorch', 36)} [default0]:step 4 loss 1.5 "
                    f"step_time_ms 20.0\n" for n in (68, 2))
    block, by_line = blocks_and_lines((notices + lines).encode())
    assert [(r["rank"], r["step"]) for r in block] == [(69, 4), (3, 4)]    # worker N is node N + 1
    assert by_line == block
