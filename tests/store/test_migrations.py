"""Migrations: an empty store and an upgraded 001 store end at the same schema, data intact."""
from __future__ import annotations

import time

import pytest

from ridgescope.pipeline import sink_rows
from ridgescope.sql import store as store_mod
from ridgescope.sql.store import StoreError, migrations, split_statements

SCHEMA = """
SELECT name, engine, partition_key, sorting_key, primary_key,
       replaceAll(create_table_query, currentDatabase() || '.', '') AS ddl
FROM system.tables WHERE database = currentDatabase() AND name != 'schema_migrations'
ORDER BY name"""
COLUMNS = """
SELECT table, name, type, default_kind, default_expression, compression_codec
FROM system.columns WHERE database = currentDatabase() ORDER BY table, position"""


def schema(store):
    return store.query(SCHEMA, max_rows=10_000)[1], store.query(COLUMNS, max_rows=10_000)[1]


def apply_001_only(store):
    """A store as the spine left it: only 001 applied, by hand as the spine's migrate() did."""
    version, name, sql = migrations()[0]
    assert version == 1
    store.command("CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String, "
                  "applied_ns Int64) ENGINE = ReplacingMergeTree ORDER BY version")
    for statement in split_statements(sql):
        store.command(statement)
    store.insert("schema_migrations", [[version, name, time.time_ns()]],
                 ["version", "name", "applied_ns"])


OLD_STEPS = ["job", "step", "ts_ns", "rank_count", "duration_ms", "baseline_ms", "slow", "cause",
             "culprit_rank", "excess_ms", "skew_ms", "confidence", "phase", "input_ms",
             "transfer_ms", "compute_ms", "communication_ms", "checkpoint_ms", "idle_ms",
             "inserted_ns"]
OLD_JOBS = sink_rows.COLUMNS["jobs"][:9]


def test_empty_and_upgraded_store_end_at_the_same_schema(new_store, fleet_rows):
    fresh = new_store("fresh")
    assert fresh.migrate() == [name for _, name, _ in migrations()]
    assert fresh.migrate() == []                               # idempotent

    old = new_store("old")
    apply_001_only(old)
    # Rows written by the spine's sink (old column lists), to be carried over.
    steps = [row[:len(OLD_STEPS)] for row in fleet_rows["steps"] if row[0] == "job-01"]
    old.insert("steps", steps, OLD_STEPS)
    old.insert("jobs", [row[:9] for row in fleet_rows["jobs"]], OLD_JOBS)
    old.insert("gpu_samples", fleet_rows["gpu_samples"][:100], sink_rows.COLUMNS["gpu_samples"])
    now = time.time_ns()
    old.insert("progress", [["job-01", 3, "node-01", now, 1, "progress", 7, "stdout", '{"kind": "progress"}'],
                            ["job-01", 3, "node-01", now, 2, "error", 7, "stderr", '{"error": "cuda_oom"}']],
               sink_rows.COLUMNS["progress"])
    assert old.migrate() == [name for _, name, _ in migrations()[1:]]

    assert schema(old) == schema(fresh)
    count = old.query("SELECT count() FROM steps FINAL")[1][0][0]
    assert count == len(steps) == 200
    # The rollups were backfilled from the carried-over rows by the same views.
    assert old.query("SELECT sum(steps) FROM job_day_rollup WHERE job = 'job-01'")[1][0][0] == 200
    assert old.query("SELECT sum(gpu_samples) FROM job_hour_rollup")[1][0][0] == 100
    hosts = old.query("SELECT hosts, framework FROM jobs FINAL WHERE job = 'job-01'")[1][0]
    assert hosts == (["node-01"], "")                          # defaults for the new columns
    assert not old.query("SELECT name FROM system.tables WHERE database = currentDatabase() "
                         "AND name LIKE '%\\_\\_v2'")[1]
    # the events among the carried-over progress rows are copied to `events` (003), once
    assert old.query("SELECT rank, kind, step FROM events FINAL")[1] == [(3, "error", 7)]


def test_layout_of_the_tables(new_store):
    store = new_store("layout")
    store.migrate()
    info = {name: (engine, part, key) for name, engine, part, key, _pk, _ddl in schema(store)[0]}
    for raw in ("progress", "host_samples", "gpu_samples"):
        engine, part, key = info[raw]
        assert "MergeTree" in engine and part.startswith("toDate(")
        assert key.startswith("job, host")
    for derived in ("steps", "step_rank", "alerts", "events"):
        assert info[derived][0] == "ReplacingMergeTree" and "toYYYYMM" in info[derived][1]
    for rollup in ("job_hour_rollup", "job_day_rollup", "host_day_rollup"):
        assert info[rollup][0] == "AggregatingMergeTree"
    ddl = {name: d for name, *_rest, d in schema(store)[0]}
    assert "toIntervalDay(30)" in ddl["gpu_samples"] and "toIntervalDay(730)" in ddl["steps"]
    assert "toIntervalDay(730)" in ddl["events"] and "kind IN ('error', 'checkpoint', 'restart', 'eval')" in ddl["events_mv"]
    assert "DoubleDelta" in ddl["gpu_samples"] and "Gorilla" in ddl["host_samples"]
    assert "non_replicated_deduplication_window = 1000" in ddl["job_day_rollup"]


def test_migration_parameters(new_store, monkeypatch):
    monkeypatch.setenv("RIDGESCOPE_RAW_RETENTION_DAYS", "14")
    assert store_mod.migration_params()["raw_retention_days"] == 14
    assert store_mod.migration_params({"raw_retention_days": 7})["raw_retention_days"] == 7
    with pytest.raises(StoreError):
        store_mod.migration_params({"raw_retention_days": 0})
    with pytest.raises(StoreError):
        store_mod.migration_params({"nope": 1})
    with pytest.raises(StoreError):
        store_mod.render_migration("TTL x + INTERVAL ${missing} DAY", {})
    store = new_store("params")
    store.migrate({"derived_retention_days": 365})
    settings = dict(store.query("SELECT name, value FROM store_settings FINAL")[1])
    assert settings == {"raw_retention_days": "14", "derived_retention_days": "365",
                        "dedup_window": "1000"}
    ddl = store.query("SELECT create_table_query FROM system.tables WHERE "
                      "database = currentDatabase() AND name = 'steps'")[1][0][0]
    assert "toIntervalDay(365)" in ddl


def test_sink_rows_still_insert(new_store):
    """Every kind the sink maps lands in the migrated store with sink_rows.COLUMNS."""
    store = new_store("sink")
    store.migrate()
    now = time.time_ns()
    lanes = {"input": 1.0, "transfer": 1.0, "compute": 5.0, "communication": 2.0,
             "checkpoint": 0.0, "idle": 1.0}
    base = {"v": 1, "job": "j", "rank": 0, "host": "h0", "ts_ns": now, "seq": 1}
    ranks = [{"step": 1, "rank": r, "host": f"h{r}", "t0_ns": now - 10**7, "t1_ns": now,
              "duration_ms": 10.0, "lanes_ms": lanes, "arrival_ns": now, "source": "hooks"}
             for r in range(2)]
    messages = [
        dict(base, kind="job_start", p={"world_size": 2, "cmd": ["torchrun", "x.py"],
                                         "tags": {"team": "llm"}, "framework": "megatron",
                                         "hosts": ["h0", "h1"], "scheduler": {"slurm_job_id": "7"}}),
        dict(base, kind="step", p={"step": 1, "rank_count": 2, "duration_ms": 10.0,
                                    "baseline_ms": 5.0, "slow": True, "cause": "compute",
                                    "culprit_rank": 1, "excess_ms": 5.0, "skew_ms": 4.0,
                                    "confidence": 0.9, "phase": "steady", "lanes_ms": lanes,
                                    "ranks": ranks}),
        dict(base, kind="alert", p={"step": 1, "cause": "compute", "culprit_rank": 1,
                                     "excess_ms": 5.0, "message": "slow"}),
        dict(base, kind="progress", p={"record": {"kind": "step", "step": 1}, "stream": "stdout"}),
        dict(base, kind="host_sample", p={"pid": 1, "cpu_s": 1.5, "read_bytes": 1,
                                           "write_bytes": 2, "rss_bytes": 3, "nprocs": 1}),
        dict(base, kind="gpu_sample", p={"gpu_uuid": "GPU-0", "metrics": {"gpu_util": 77}}),
        dict(base, kind="job_end", ts_ns=now + 1,
             p={"exit_code": 0, "world_size": 2, "started_ns": now, "framework": "megatron"}),
    ]
    tables: dict[str, list] = {}
    for message in messages:
        sink_rows.add(tables, message)
    for table, rows in tables.items():
        store.insert(table, rows, sink_rows.COLUMNS[table])
    assert store.query("SELECT culprit_host FROM steps FINAL")[1] == [("h1",)]
    # The newest row (job_end) wins; it carries what its payload carries.
    assert store.query("SELECT framework, hosts, exit_code, ended_ns FROM jobs FINAL"
                       )[1] == [("megatron", ["h0"], 0, now + 1)]
    assert store.query("SELECT sum(culprit_steps) FROM host_day_rollup WHERE host = 'h1'"
                       )[1] == [(1,)]
    assert store.query("SELECT count() FROM progress")[1] == [(1,)]
    start = {"world_size": 2, "cmd": ["x"], "framework": "megatron", "hosts": ["h0", "h1"],
             "scheduler": {"slurm_job_id": "7"}}
    tables = {}
    sink_rows.add(tables, dict(base, kind="job_start", job="k", ts_ns=now + 5, p=start))
    store.insert("jobs", tables["jobs"], sink_rows.COLUMNS["jobs"])
    assert store.query("SELECT framework, hosts, scheduler_ids FROM jobs FINAL WHERE job = 'k'"
                       )[1] == [("megatron", ["h0", "h1"], {"slurm_job_id": "7"})]
