"""torchrun's agents' rendezvous results: the job's ranks of each node's workers."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ridgescope.parsers import rendezvous

from .test_captured import CAPTURED

AGENT = "I1207 07:52:39.958000 2395 torch/distributed/elastic/agent/server/api.py:552]   "


def test_each_agents_result_with_its_nodes_label():
    text = (CAPTURED / "slurm-22.05.8_torch-2.15_srun-label-torchrun-c10d_loglevel-info_"
                       "nodes-out-of-task-order_2x2rank.log").read_text()
    assert rendezvous.results(text) == [(0, [2, 3]), (1, [0, 1])]


def test_a_nodes_own_log_has_no_label():
    text = (CAPTURED / "torch-2.15_torchrun-c10d-tee3_loglevel-info_joined-second_2x2rank.log").read_text()
    assert rendezvous.results(text) == [(None, [2, 3])]


def test_forms_and_lists():
    assert rendezvous.results(f"  3: {AGENT}global_ranks=[24, 25, 26, 27, 28, 29, 30, 31]\n") == \
        [(3, list(range(24, 32)))]
    assert rendezvous.results("0:   global_ranks=[0, 1]\n1:   global_ranks=[2, 3]") == [(0, [0, 1]), (1, [2, 3])]
    assert rendezvous.ranks_listed("  role_ranks=[0, 1]") is None
    assert rendezvous.ranks_listed("  global_ranks=[0, x]") is None
    assert rendezvous.ranks_listed("  global_ranks=[0, -1]") is None
    assert rendezvous.ranks_listed("  global_ranks=[0, 1") is None
    assert rendezvous.node_base([4, 5, 6, 7]) == 4
    assert rendezvous.node_base([4, 6]) is None and rendezvous.node_base([]) is None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("0123456789 ,:[]\n-xglobal_ranks=")), max_size=200))
def test_any_text_gives_lists_of_ranks_or_nothing(text):
    for node, ranks in rendezvous.results(text):
        assert node is None or node >= 0
        assert all(isinstance(r, int) and r >= 0 for r in ranks)
