"""An unlabelled log in which every rank prints its steps (torchrun without `--tee`): each print
of a step is kept as a rank of its own (`probes/print_order.py`)."""
from __future__ import annotations

from pathlib import Path

import pytest

from ridgescope.cli.cmd_ingest import Item, read_file, spread_repeated_steps
from ridgescope.cli.node_logs import NodeLog
from ridgescope.probes.print_order import WINDOW, PrintOrder

DATA = Path(__file__).resolve().parents[1] / "data"
UNLABELLED = DATA / "captured" / "torch-2.15_torchrun-unlabelled_every-rank-prints_2rank.log"


def progress(rank: int, step: int, **fields) -> Item:
    return Item(rank, {"kind": "progress", "step": step, "framework": "nanogpt", **fields}, None, False)


SRUN_UNLABELLED = DATA / "captured" / "slurm-22.05.8_srun-unlabelled_every-task-prints_2rank.log"


@pytest.mark.parametrize("log", [UNLABELLED, SRUN_UNLABELLED], ids=["torchrun", "srun"])
def test_each_print_of_a_step_is_a_rank_of_its_own(log):
    """Rank 1's step 10 slept 0.5 s and rank 0 ran on: rank 0's steps 10-16 come first, then
    rank 1's (torchrun without `--tee`, srun without `--label` alike).  The second print of each
    step is rank 1's, and step 10's 500.2 ms is kept (it was overwritten by rank 0's 50.2 ms)."""
    result = read_file(str(log), None)
    steps = [(it.rank, it.record["step"], it.record["step_time_ms"]) for it in result.items]
    assert len(steps) == 32 and all(it.record["rank_from_print_order"] for it in result.items)
    assert [(rank, ms) for rank, step, ms in steps if step == 10] == [(0, 50.2), (1, 500.2)]
    assert sorted(step for rank, step, _ in steps if rank == 1) == list(range(1, 17))


def test_a_restart_begins_the_count_again_and_other_shapes_are_no_repeat():
    items = [progress(0, 1, loss=2.0), progress(0, 1, loss=2.0), progress(0, 2, loss=1.0),
             Item(0, {"kind": "restart", "step": 1}, None, False), progress(0, 1, loss=2.0),
             progress(0, 1, it_per_s=3.0), Item(0, None, 5, True)]
    spread_repeated_steps(items, base=4)
    assert [it.rank for it in items] == [4, 5, 4, 0, 4, 4, 0]
    assert "rank_from_print_order" not in items[3].record


def test_a_step_printed_once_moves_nothing():
    items = [progress(3, step) for step in range(1, 5)]
    spread_repeated_steps(items, base=3)
    assert all(it.rank == 3 and "rank_from_print_order" not in it.record for it in items)


def test_only_unlabelled_logs_of_ranks_that_all_print_are_spread():
    """Over every log in the repository: the logs whose steps are printed again, by rank, with
    no line saying whose, and no other.  A log whose step lines name their rank, a Megatron log
    (its last rank prints), and a log whose path names its rank keep their ranks; so do those
    steps of a log whose lines name the rank of some steps only (BigScience's)."""
    spread = {}
    for log in sorted(DATA.glob("**/*.log")):
        ranks = {it.rank for it in read_file(str(log), None).items if it.record.get("rank_from_print_order")}
        if ranks:
            spread[log.name] = sorted(ranks)
    assert spread == {
        "torch-2.15_torchrun-tee3-prefix-hostname-rank_lines-in-two-writes_3rank.log": [0, 1, 2],
        "torch-2.15_torchrun-tee3-role-trainer_lines-in-two-writes_3rank.log": [0, 1, 2],
        "mpich-4.0.2_mpiexec-prepend-rank_lines-in-two-writes_3rank.log": [0, 1, 2],    # (its prefix unread here)
        UNLABELLED.name: [0, 1],
        SRUN_UNLABELLED.name: [0, 1],
        "torchtitan-0.3.0_llama3-debugmodel_2rank-unlabelled_cpu.log": [0, 1],
        "torch-2.15_torchrun-unlabelled_prints-glued-in-one-line_2x2rank.log": [0, 1],
        "torch-2.15_mnist-example-loop_torchrun-2rank.log": [0, 1],
        "mindspore-2.10.0_msrun-2-workers_join_stdout_cpu.log": [0, 1],
        "torch-2.15_torchrun-max-restarts-1_worker1-raises-at-5_2rank.log": [0, 1],
        # its stdout alone: the agent's word that a worker failed is on stderr, and the second
        # run's prints of steps 1-5 are taken for two more ranks (live, the probe shares it)
        "torch-2.15_torchrun-max-restarts-1_worker1-raises-at-5_two-pipes_stdout.log": [0, 1, 2, 3],
        BIGSCIENCE.name: list(range(16)),
    }


BIGSCIENCE = DATA / "corpus" / "hf_trainer" / "bigscience_hf-trainer-deepspeed-zero3_gpt2_16node_slurm_cr-progress.log"


def test_a_line_that_names_its_rank_on_another_step_is_no_clash():
    """BigScience's 16-node HF Trainer job: each node draws the Trainer's bar, unlabelled, and
    DeepSpeed logs `[Rank 0] step=0` once.  Before, that one line kept all 16 bars on rank 0,
    each print of a step replacing the one before; now each node's bar is a rank of its own,
    timed by its elapsed time, and DeepSpeed's step 0 stays rank 0's."""
    items = [it for it in read_file(str(BIGSCIENCE), None).items if it.record["kind"] == "progress"
             and isinstance(it.record["step"], int)]
    assert [(it.rank, it.record["framework"]) for it in items if it.record["step"] == 0] == [(0, "deepspeed")]
    bars = {(it.rank, it.record["step"]) for it in items if it.record.get("rank_from_print_order")}
    assert bars == {(rank, step) for rank in range(16) for step in range(1, 5)}
    assert [(it.record["step"], it.record.get("step_time_ms")) for it in items if it.rank == 0 and it.record.get("rank_from_print_order")] == [
        (1, None), (2, 210_000.0), (3, 215_000.0), (4, 221_000.0)]


def test_prints_that_would_fall_on_a_named_ranks_step_stay_where_they_are():
    named = Item(0, {"kind": "progress", "step": 2, "framework": "deepspeed", "rank": 0}, None, False)
    items = [progress(0, 1), progress(0, 1), progress(0, 2), progress(0, 2), named]
    spread_repeated_steps(items, base=0)
    assert [it.rank for it in items] == [0] * 5
    assert not any(it.record.get("rank_from_print_order") for it in items)
    items[-1] = Item(0, {"kind": "progress", "step": 0, "framework": "deepspeed", "rank": 0}, None, False)
    spread_repeated_steps(items, base=0)
    assert [it.rank for it in items] == [0, 1, 0, 1, 0] and "rank_from_print_order" not in items[-1].record


def test_a_steps_timing_prints_go_to_ranks_of_their_order_up_to_the_ranks_that_print():
    """Each worker's timing record of a step is placed as its progress is (MindSpore's
    TimeMonitor under `msrun --join`); a timing record printed more times than any step's
    progress (Megatron's one printing rank, its timers twice a step) is placed on no rank."""
    order = PrintOrder()
    timing = {"kind": "timing", "step": 6, "framework": "mindspore", "mean_step_time_ms": 1.0}
    assert [order.place(r) for r in (timing, timing)] == [None, None]     # (no step's progress yet)
    steps = [{"kind": "progress", "step": 7, "loss": 1.0}] * 2
    assert [order.place(r) for r in steps + [dict(timing, step=7)] * 3] == [0, 1, 0, 1, None]
    assert order.repeated and order.printers == 2
    items = [progress(0, 1), progress(0, 1), Item(0, dict(timing, step=1), None, False),
             Item(0, dict(timing, step=1), None, False), Item(0, dict(timing, step=1), None, False)]
    spread_repeated_steps(items, base=2)
    assert [it.rank for it in items] == [2, 3, 2, 3, 0]
    assert "rank_from_print_order" not in items[-1].record


def test_torchruns_workers_started_again_are_the_same_ranks():
    """`torchrun --max-restarts 1`, no `--tee`: both workers print every step, rank 1 raises at
    step 5, and torchrun starts both again.  The second run's prints of steps 1-5 are no third
    and fourth rank (a 2-rank job was stored as 4): the restart begins the count again, and rank
    1's slow step 7 (550.8 ms) of the second run is kept."""
    result = read_file(str(DATA / "captured" / "torch-2.15_torchrun-max-restarts-1_worker1-raises-at-5_2rank.log"),
                       None)
    steps = [(it.rank, it.record["step"], it.record["step_time_ms"]) for it in result.items
             if it.record["kind"] == "progress"]
    assert sorted({rank for rank, _, _ in steps}) == [0, 1]
    restart = next(i for i, it in enumerate(result.items) if it.record["kind"] == "restart")
    second = [(rank, step, ms) for rank, step, ms in steps[-20:]]
    assert sorted((rank, step) for rank, step, _ in second) == [(r, s) for r in (0, 1) for s in range(1, 11)]
    assert result.items[restart + 1].record["step"] == 1 and len(steps) == 29
    assert max(ms for _, step, ms in second if step == 7) == 550.8


def test_a_run_printed_again_long_after_is_no_other_rank():
    """Steps more than WINDOW behind the latest are forgotten: a job started afresh into the
    same file, with no resume message, is not taken for a second rank; a rank's block of
    buffered lines within the window is."""
    order = PrintOrder()
    last = 3 * WINDOW
    assert [order.place({"kind": "progress", "step": s}) for s in range(1, last + 1)] == [0] * last
    assert order.place({"kind": "progress", "step": 1}) == 0 and not order.repeated
    assert order.place({"kind": "progress", "step": last - 10}) == 1 and order.repeated


def test_a_nodes_unlabelled_log_spreads_within_the_nodes_ranks():
    """Two nodes' torchrun, no `--tee`, one log each (`--node-logs`), every worker printing its
    steps: with 2 workers a node, node 1's prints are ranks 2 and 3, and rank 3's slow step 10
    (500.1 ms) is kept.  Told 1 worker a node, more prints than workers spread nothing."""
    logs = [DATA / "captured" / f"torch-2.15_torchrun-unlabelled_node-rank-{k}-of-2_2x2rank.log" for k in (0, 1)]
    node1 = read_file(str(logs[1]), None, node=NodeLog(2, False, 2))
    assert sorted({it.rank for it in node1.items}) == [2, 3]
    assert [(it.rank, it.record["step_time_ms"]) for it in node1.items if it.record["step"] == 10] == [
        (2, 50.1), (3, 500.1)]
    assert sorted({it.rank for it in read_file(str(logs[0]), None, node=NodeLog(0, False, 2)).items}) == [0, 1]
    alone = read_file(str(logs[1]), None, node=NodeLog(1, False, 1))
    assert {it.rank for it in alone.items} == {1} and not any("rank_from_print_order" in it.record for it in alone.items)


def test_an_ingested_log_with_prints_run_into_one_line_has_every_steps_ranks():
    """`ingest` of a node's unlabelled log where six steps' two prints ran into one line: each
    step has both ranks, as in a log whose prints came apart."""
    items = read_file(str(DATA / "captured" / "torch-2.15_torchrun-unlabelled_prints-glued-in-one-line_2x2rank.log"),
                      None).items
    steps: dict = {}
    for it in items:
        if it.record.get("kind") == "progress":
            steps.setdefault(it.record["step"], []).append(it.rank)
    assert {step: sorted(ranks) for step, ranks in steps.items()} == {step: [0, 1] for step in range(1, 17)}
