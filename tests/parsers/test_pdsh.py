"""pdsh's `host: ` prefix (DeepSpeed's multi-node launcher): once the launcher's `WORLD INFO
DICT` (or its `pdsh ... -w` command) has named the hosts in order, each host's lines are its
node's, as srun's label would make them.  The capture: two torchruns of a real two-node job
(`torch-2.15_torchrun-2node_rank3-raises_node*.log`) passed on by pdsh 2.34 itself."""
from __future__ import annotations

import re
from pathlib import Path

from ridgescope.parsers.pdsh import PdshHosts

from .conftest import blocks_and_lines, feed_all

CAPTURED = Path(__file__).resolve().parents[1] / "data" / "captured"
NAME = "pdsh-2.34_exec_2-hosts_torch-2.15_torchrun-2node_rank3-raises.log"


def test_each_hosts_lines_are_its_nodes():
    data = (CAPTURED / NAME).read_bytes()
    labelled = re.sub(rb"(?m)^algo-([12]): ", lambda m: b"%d: " % (int(m.group(1)) - 1), data)
    pdsh_block, pdsh_lines = blocks_and_lines(data)
    srun_block, _ = blocks_and_lines(labelled)
    assert pdsh_block == srun_block and pdsh_lines == pdsh_block
    steps = {(r["rank"], r["step"]) for r in pdsh_block if r["kind"] == "progress"}
    assert steps == {(node, step) for node in (0, 1) for step in (1, 2, 3)}
    # torchrun's own report names the rank that failed first: the job's rank 3, on node 1
    (first,) = [r for r in pdsh_block if r.get("message", "").startswith("torchrun: rank 3 failed first")]
    assert first["rank"] == 3
    # torch's `[rankN]:` inside the host's prefix names the job's rank: the culprit's traceback
    # is rank 3's (it was node 1's), its victims' ranks 0-2's, all at the step the job reached
    tracebacks = {(r["rank"], r["step"], bool(r.get("victim"))) for r in pdsh_block
                  if r.get("error") == "traceback" and r["message"]}
    assert tracebacks == {(3, 3, False), (0, 3, True), (1, 3, True), (2, 3, True)}


def test_before_the_hosts_are_named_the_lines_are_read_as_they_are():
    data = b"".join(line for line in (CAPTURED / NAME).read_bytes().splitlines(keepends=True)
                    if b"WORLD INFO DICT" not in line)
    block, _ = blocks_and_lines(data)
    assert not any(r["rank"] in (0, 1) for r in block if r["kind"] == "progress")


def test_the_runners_pdsh_command_names_the_hosts_too():
    hosts = PdshHosts()
    runner = ("[2024-05-01 10:00:00,000] [INFO] [multinode_runner.py:80:get_cmd] cmd = pdsh -S -f 1024 "
              "-w worker-1,worker-2,worker-10 export NCCL_DEBUG=WARN; cd /job; python -u -m deepspeed.launcher.launch\n")
    assert hosts.relabel(runner, True, True) == runner
    assert hosts.relabel(b"worker-10: step 5\nworker-1: step 5\nworker-3: step 5\n", True, True) == (
        b"2: step 5\n0: step 5\nworker-3: step 5\n")


def test_a_single_nodes_world_info_names_no_pdsh_host():
    """A launcher that pdsh did not start (one node) prints its `WORLD INFO DICT` bare: no
    line is a host's, and nothing is rewritten after it."""
    hosts = PdshHosts()
    world = "[2022-10-28 22:56:14,607] [INFO] [launch.py:136:main] WORLD INFO DICT: {'worker-0': [0, 1, 2, 3]}\n"
    assert hosts.relabel(world + "worker-0: not a prefix here\n", True, True) == world + "worker-0: not a prefix here\n"
    assert not hosts.nodes


def test_a_hosts_line_with_torchs_rank_is_that_ranks_known_host_or_not():
    """`pdsh -w ... torchrun ...` run by hand prints no `WORLD INFO DICT`: the hosts stay
    unknown, but torch's `[rankN]:` inside names the job's rank."""
    lines = ["gpu-node-07.cluster: [rank11]:step 5 loss 2.0", "gpu-node-01.cluster: [rank3]:step 5 loss 2.0",
             "gpu-node-07.cluster: step 6 loss 1.9"]
    for recs in (feed_all(lines)[0], blocks_and_lines("\n".join(lines).encode() + b"\n")[0]):
        assert [(r["rank"], r["step"]) for r in recs] == [(11, 5), (3, 5), (None, 6)]
