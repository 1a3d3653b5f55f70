"""Every query of the library answers its question on the seeded store of 30 synthetic jobs."""
from __future__ import annotations

import math
import time

import pytest

from ridgescope.sql import library, synthetic

from . import expected as ex

JOB_NAMES = [f"job-{i:02d}" for i in range(1, 31)]


def run(store, name, **params):
    columns, rows = store.query(library.render(name, **params), max_rows=100_000)
    return [dict(zip(columns, row)) for row in rows]


def test_every_query_has_a_question_and_declared_params():
    queries = library.all_queries()
    assert len(queries) >= 8
    for query in queries.values():
        assert query.question.endswith("?"), query.name
        for param in query.params.values():
            assert param.doc, f"{query.name}: {param.name} has no description"


def test_render_refuses_bad_values():
    with pytest.raises(library.LibraryError):
        library.render("top_slow_steps")                       # job is required
    with pytest.raises(library.LibraryError):
        library.render("top_slow_steps", job="x", limit="ten")
    with pytest.raises(library.LibraryError):
        library.render("top_slow_steps", job="x", nope=1)
    sql = library.render("top_slow_steps", job="it's'; DROP TABLE steps --")
    assert "'it\\'s\\'; DROP TABLE steps --'" in sql


def test_parse_helpers():
    assert library.parse_tags(["team=llm", "model=7b"]) == {"team": "llm", "model": "7b"}
    assert library.parse_since("7d") == 7 and library.parse_since("2w") == 14
    assert library.parse_since("36h") == 2 and library.parse_since(None) == 0
    with pytest.raises(library.LibraryError):
        library.parse_tags(["team"])
    with pytest.raises(library.LibraryError):
        library.parse_since("yesterday")


def test_top_slow_steps(seeded):
    rows = run(seeded, "top_slow_steps", job="job-01", limit=3)
    assert [(r["step"], r["cause"], r["excess_ms"]) for r in rows] == [
        (10, "input", 900.0), (20, "communication", 700.0), (30, "compute", 500.0)]
    assert rows[0]["culprit_rank"] == 2 and rows[0]["culprit_host"] == "node-01"


def test_culprit_steps_of_rank(seeded, fleet):
    job3 = next(s for s in fleet if s.name == "job-03")
    rows = run(seeded, "culprit_steps_of_rank", job="job-03", rank=17)
    assert [r["step"] for r in rows] == sorted(s.step for s in job3.slow if s.culprit_rank == 17)
    assert {33, 77, 120, 181} <= {r["step"] for r in rows}


def test_lane_breakdown_over_time(seeded, fleet_rows):
    rows = run(seeded, "lane_breakdown_over_time", job="job-05")
    assert sum(r["step_count"] for r in rows) == 200
    total = sum(r["checkpoint_ms"] * r["step_count"] for r in rows) / 200
    assert total == pytest.approx(160.0)                      # 4 × 8,000 ms over 200 steps
    means = ex.per_job_means(fleet_rows, "communication_ms")
    comm = sum(r["communication_ms"] * r["step_count"] for r in rows) / 200
    assert comm == pytest.approx(means["job-05"])


def test_culprit_heatmap(seeded, fleet):
    job3 = next(s for s in fleet if s.name == "job-03")
    rows = run(seeded, "culprit_heatmap", job="job-03", bucket_steps=100)
    cells = {(r["first_step"], r["rank"]): r["slow_steps"] for r in rows}
    want = {}
    for s in job3.slow:
        key = ((s.step - 1) // 100 * 100 + 1, s.culprit_rank)
        want[key] = want.get(key, 0) + 1
    assert cells == want
    assert cells[(1, 17)] >= 2 and cells[(101, 17)] >= 2


def test_culprit_hosts(seeded, fleet_rows):
    rows = run(seeded, "culprit_hosts", limit=100)
    want = ex.culprit_hosts(fleet_rows)
    assert rows[0]["host"] == synthetic.STRAGGLER_HOST
    assert {r["host"]: r["culprit_step_count"] for r in rows} == dict(want)


def test_compare_jobs_names_the_communication_lane(seeded):
    rows = {r["lane"]: r for r in run(seeded, "compare_jobs", job_a="job-11", job_b="job-12")}
    assert rows["communication"]["delta_pct"] == pytest.approx(10.0)
    for lane in ("input", "transfer", "compute", "checkpoint", "idle"):
        assert rows[lane]["delta_ms"] == pytest.approx(0.0, abs=1e-9)
    changed = max((r for k, r in rows.items() if k != "step"), key=lambda r: abs(r["delta_ms"]))
    assert changed["lane"] == "communication"
    assert rows["step"]["delta_ms"] == pytest.approx(rows["communication"]["delta_ms"])


def test_metric_trend_by_job_with_tag(seeded, fleet_rows):
    rows = run(seeded, "metric_trend_by_job", metric="step_ms", tags={"team": "vision"})
    assert [r["job"] for r in rows] == JOB_NAMES[20:]
    means = ex.per_job_means(fleet_rows, "duration_ms")
    for r in rows:
        assert r["value"] == pytest.approx(means[r["job"]])
    two = run(seeded, "metric_trend_by_job", metric="lane:communication",
              tags={"team": "llm", "model": "7b"})
    assert [r["job"] for r in two] == JOB_NAMES[1:20:2]


def test_metric_trend_gpu_util_and_slow_share(seeded):
    gpu = {r["job"]: r["value"] for r in run(seeded, "metric_trend_by_job", metric="gpu_util")}
    assert gpu["job-08"] == pytest.approx(40.0, abs=3.5)
    assert all(v == pytest.approx(90.0, abs=3.5) for j, v in gpu.items() if j != "job-08")
    slow = {r["job"]: r["value"] for r in run(seeded, "metric_trend_by_job", metric="slow_share")}
    assert slow["job-01"] == pytest.approx(5 / 200)            # 3 named + 2 input steps


def test_metric_trend_by_day(seeded):
    rows = run(seeded, "metric_trend_by_day", metric="step_ms")
    assert len(rows) == 15
    assert all(r["job_count"] == 2 and r["step_count"] == 400 for r in rows)


def test_metric_trend_by_host(seeded, fleet_rows):
    rows = run(seeded, "metric_trend_by_host", metric="lane:input")
    want = ex.per_host_means(fleet_rows, "input_ms")
    assert {r["host"]: round(r["value"], 6) for r in rows} == {
        h: round(v, 6) for h, v in want.items()}


def test_checkpoint_overhead(seeded):
    rows = run(seeded, "checkpoint_overhead")
    assert rows[0]["job"] == "job-05"
    assert rows[0]["amortised_ms_per_step"] == pytest.approx(160.0)
    assert rows[0]["checkpoint_step_count"] == 4
    assert all(r["amortised_ms_per_step"] == pytest.approx(10.0) for r in rows[1:])


def test_fleet_checkpoint_share(seeded, fleet_rows):
    (row,) = run(seeded, "fleet_checkpoint_share")
    steps = ex.records(fleet_rows, "steps")
    want = sum(r["checkpoint_ms"] for r in steps) / sum(r["duration_ms"] for r in steps)
    assert row["job_count"] == 30 and row["checkpoint_share"] == pytest.approx(want)


def test_input_bound_share(seeded, fleet_rows):
    rows = run(seeded, "input_bound_share")
    assert rows[0]["job"] == "job-08"
    want = ex.per_job_share(fleet_rows, "input_ms")
    for r in rows:
        assert r["input_share"] == pytest.approx(want[r["job"]])
    assert rows[0]["input_slow_steps"] == 2 + 0                # job-08 has no node-07
    assert rows[0]["input_share"] > 0.3 > max(r["input_share"] for r in rows[1:])


def test_jobs(seeded, fleet):
    rows = run(seeded, "jobs")
    assert sorted(r["job"] for r in rows) == JOB_NAMES
    job3 = next(r for r in rows if r["job"] == "job-03")
    assert job3["world_size"] == 32 and len(job3["hosts"]) == 4
    assert job3["scheduler_ids"] == {"slurm_job_id": "100003"} and job3["step_count"] == 200
    tagged = run(seeded, "jobs", tags={"team": "vision", "model": "7b"})
    assert sorted(r["job"] for r in tagged) == ["job-22", "job-24", "job-26", "job-28", "job-30"]
    cutoff = time.time_ns() - 7 * 86400 * 10**9
    recent = run(seeded, "jobs", since_days=7)
    assert sorted(r["job"] for r in recent) == sorted(s.name for s in fleet
                                                      if s.start_ns >= cutoff)
    assert 0 < len(recent) < 30


def test_no_query_returns_nan_for_the_fleet(seeded):
    params = {"job": "job-01", "job_a": "job-11", "job_b": "job-12", "rank": 2}
    for name, query in library.all_queries().items():
        values = {k: v for k, v in params.items() if k in query.params}
        for row in run(seeded, name, **values):
            for key, value in row.items():
                assert not (isinstance(value, float) and math.isnan(value)), (name, key)


def test_hang_progress_names_the_rank_behind(new_store):
    """Four ranks hang in collective 13 of the default process group: rank 1 times out, ranks 0
    and 3 are told by the dump signal, rank 2 had enqueued only 12 (it never reached 13).  The
    lines as recent PyTorch releases print them, read by the parsers, stored as the sink stores them."""
    from ridgescope.parsers import Dispatcher
    from ridgescope.pipeline import sink_rows

    from .conftest import seed

    def dump(rank, enqueued):
        return (f"[rank{rank}]:[E1201 10:00:00.123456789 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) "
                f"Rank {rank}] Received a dump signal due to a collective timeout from  rank 1 and we will try our "
                f"best to dump the debug info. Last enqueued NCCL work: {enqueued}, last completed NCCL work: 12.")
    lines = [dump(0, 13), dump(3, 13), dump(2, 12),
             "[rank1]:[E1201 09:59:59.123456789 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank 1]  "
             "failure detected by watchdog at work sequence id: 13 PG status: last enqueued work: 13, last completed "
             "work: 12"]
    d = Dispatcher()
    records = [r for line in lines for r in d.feed(line)] + d.flush()
    tables: dict = {}
    for i, r in enumerate(records):
        sink_rows.add(tables, {"kind": "progress", "job": "hang", "rank": r["rank"], "host": "node-01",
                               "ts_ns": time.time_ns(), "seq": i, "p": {"record": r, "stream": "stderr"}})
    store = new_store("hang")
    store.migrate()
    seed(store, tables)
    got = run(store, "hang_progress", job="hang")
    assert [(r["rank"], r["last_enqueued"], r["behind"], bool(r["timed_out"])) for r in got] == [
        (2, 12, 1, False), (0, 13, 0, False), (1, 13, 0, True), (3, 13, 0, False)]


def test_first_failure_tells_the_culprit_from_the_other_nodes_victims(new_store):
    """A real job of two nodes (torchrun each, two ranks a node, gloo): rank 3 on the second node
    raises; the ranks of the first node fail after it (`Connection closed by peer`), and each
    node's torchrun reports its own first failure.  Read as `ingest` reads two files (one
    stream each), stored as the sink stores them."""
    from pathlib import Path

    from ridgescope.parsers import Dispatcher
    from ridgescope.pipeline import sink_rows

    from .conftest import seed

    captured = Path(__file__).resolve().parents[1] / "data" / "captured"
    tables: dict = {}
    seq = 0
    for node in (0, 1):
        d = Dispatcher()
        lines = (captured / f"torch-2.15_torchrun-2node_rank3-raises_node{node}.log").read_bytes().splitlines()
        records = [r for raw in lines for r in d.feed(raw.decode())] + d.flush()
        for r in records:
            seq += 1
            rank = r["rank"] if r["rank"] is not None else 0      # ingest's fallback, unnamed
            sink_rows.add(tables, {"kind": "progress", "job": "two-nodes", "rank": rank, "host": f"node-{node}",
                                   "ts_ns": time.time_ns(), "seq": seq, "p": {"record": r, "stream": "stderr"}})
            if r.get("first") and node == 0:
                same_second = dict(r, at="2026-12-02_21:11:39")
                sink_rows.add(tables, {"kind": "progress", "job": "same-second", "rank": rank, "host": "node-0",
                                       "ts_ns": time.time_ns(), "seq": seq, "p": {"record": same_second}})
            elif r.get("first") or r.get("traceback"):
                sink_rows.add(tables, {"kind": "progress", "job": "same-second", "rank": rank, "host": f"node-{node}",
                                       "ts_ns": time.time_ns(), "seq": seq, "p": {"record": r}})
    store = new_store("first_failure")
    store.migrate()
    seed(store, tables)
    got = run(store, "first_failure", job="two-nodes")
    assert [(r["rank"], bool(r["victim"]), r["failed_at"], r["exitcode"]) for r in got] == [
        (3, False, "2026-12-02_21:11:39", 1), (0, True, "2026-12-02_21:11:40", 1)]
    assert got[0]["error"] == "RuntimeError: shape mismatch in batch 3 (user bug)"
    assert "Connection closed by peer" in got[1]["error"] and got[1]["node_failed_ranks"] == 2
    # the two reports within one second, as they most often are: the victim still comes second
    got = run(store, "first_failure", job="same-second")
    assert [(r["rank"], bool(r["victim"])) for r in got] == [(3, False), (0, True)]


def test_first_failure_of_a_job_srun_started_is_srun_first_failed_task(new_store):
    """A real job whose two ranks srun started itself (gloo, no torchrun): rank 1 raises, rank 0
    fails after it; srun tells task 1's end first.  No report: srun's first task is the rank."""
    from pathlib import Path

    from ridgescope.parsers import Dispatcher
    from ridgescope.pipeline import sink_rows

    from .conftest import seed

    log = Path(__file__).resolve().parents[1] / "data" / "captured" / "slurm-22.05.8_torch-2.15_srun-label_rank1-raises_2task.log"
    d = Dispatcher()
    records = [r for raw in log.read_bytes().splitlines() for r in d.feed(raw.decode())] + d.flush()
    tables: dict = {}
    for i, r in enumerate(records):
        sink_rows.add(tables, {"kind": "progress", "job": "srun", "rank": r["rank"] if r["rank"] is not None else 0,
                               "host": "vm", "ts_ns": time.time_ns(), "seq": i, "p": {"record": r}})
    store = new_store("first_failure_srun")
    store.migrate()
    seed(store, tables)
    (got,) = run(store, "first_failure", job="srun")
    assert (got["rank"], bool(got["victim"]), got["host"], got["exitcode"]) == (1, False, "vm", 1)
    assert got["error"] == "RuntimeError: shape mismatch in batch 3 (user bug)"


def test_loss_scale_overflows_count_the_skipped_steps(new_store):
    """The corpus's DeepSpeed-Chat SFT log, parsed and stored as the sink stores it: its 139
    skipped steps (DeepSpeed's own count at the end), and the scale's lowest point."""
    from pathlib import Path

    from ridgescope.parsers import Dispatcher
    from ridgescope.pipeline import sink_rows

    from .conftest import seed

    log = Path(__file__).resolve().parents[1] / "data" / "corpus" / "deepspeed" / "dschat_step1_sft_opt-1.3b_16proc.log"
    d = Dispatcher()
    records = [r for raw in log.read_bytes().splitlines() for r in d.feed(raw.decode("utf-8", "replace"))] + d.flush()
    lowest = min(r["new_loss_scale"] for r in records if r.get("error") == "loss_scale_overflow")
    tables: dict = {}
    now = time.time_ns()
    for i, r in enumerate(records):
        sink_rows.add(tables, {"kind": "progress", "job": "sft", "rank": r["rank"] if r["rank"] is not None else 0,
                               "host": "node-01", "ts_ns": now + i, "seq": i, "p": {"record": r}})
    store = new_store("overflows")
    store.migrate()
    seed(store, tables)
    (got,) = run(store, "loss_scale_overflows")
    assert (got["job"], got["overflows"], got["ranks"], got["lowest_scale"]) == ("sft", 139, 1, lowest)
    steps = [r["step"] for r in records if r.get("error") == "loss_scale_overflow" and r["step"] is not None]
    assert (got["first_step"], got["last_step"]) == (min(steps), max(steps)) == (500, 7330)
