"""The cluster DDL is rendered from the migrations and parses."""
from __future__ import annotations

import regex

from ridgescope.sql import cluster
from ridgescope.sql.library import literal


def test_cluster_ddl_renders_and_parses(seeded):
    statements = cluster.schema_statements(seeded)
    rendered = cluster.render_cluster(statements)
    assert rendered == cluster.render_cluster(cluster.schema_statements(seeded))
    names = [regex.match(r"CREATE \w+(?: VIEW)? IF NOT EXISTS (\w+)", s).group(1)
             for s in rendered]
    tables = {n[:-len("_local")] for n in names if n.endswith("_local")}
    assert {"steps", "step_rank", "alerts", "jobs", "gpu_samples", "progress", "host_samples",
            "job_hour_rollup", "job_day_rollup", "host_day_rollup"} <= tables
    for table in tables:
        assert table in names                                  # its Distributed front
    for statement in rendered:
        # Parses as ClickHouse SQL (formatQuery parses without executing).
        formatted = seeded.query(f"SELECT formatQuery({literal(statement, 'String')})")[1][0][0]
        assert formatted.startswith("CREATE")
        assert "ON CLUSTER `{cluster}`" in formatted or "ON CLUSTER '{cluster}'" in formatted
        assert "non_replicated" not in statement
        if "_local ON CLUSTER" in statement:
            assert "ENGINE = Replicated" in statement and "'{replica}'" in statement
        elif "MATERIALIZED VIEW" in statement:
            refs = regex.findall(r"(?:TO|FROM) (\w+)", statement)
            assert refs and all(r.endswith("_local") for r in refs), refs
        else:
            assert "ENGINE = Distributed('{cluster}'" in statement
    steps = next(s for s in rendered if s.startswith("CREATE TABLE IF NOT EXISTS steps "))
    assert steps.rstrip().endswith("cityHash64(job))")
    local = next(s for s in rendered if s.startswith("CREATE TABLE IF NOT EXISTS steps_local"))
    assert "ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/steps_local', " \
           "'{replica}', inserted_ns)" in local
