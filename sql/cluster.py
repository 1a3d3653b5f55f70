"""The cluster variant of the schema, generated from the migrations (never kept by hand).

The single-node schema is what ``sql/migrations`` build; this module reads the final DDL of a
migrated store (``system.tables``) and rewrites it for a ClickHouse cluster:

- every table becomes ``<name>_local`` with the Replicated form of its engine
  (``/clickhouse/tables/{shard}/{database}/<name>_local``, ``{replica}``);
- a ``Distributed`` table named like the single-node table sits in front of it, sharded by
  ``cityHash64(job)`` (or ``host`` for the per-host rollup), so every row of one job lives on
  one shard: ReplacingMergeTree ``FINAL`` and per-job queries stay shard-local and correct;
- the materialized views read and write the local tables, so each shard rolls up its own jobs;
  the rollups' aggregate states merge across shards when read through the Distributed tables;
- ``non_replicated_deduplication_window`` becomes ``replicated_deduplication_window``.

So the sink, the query library and the CLI use the same table names on both.  Inserts into a
Distributed table keep their insert_deduplication_token only when they are forwarded
synchronously: set ``distributed_foreground_insert = 1`` for the sink's user.

Run ``python -m ridgescope.sql.cluster > cluster.sql`` to render it (it migrates a scratch chDB
store in a temporary directory; run it in a process that has no other chDB store open).
"""
from __future__ import annotations

import sys
import tempfile

import regex

CLUSTER = "{cluster}"
SKIP = {"schema_migrations"}
_CREATE = regex.compile(
    r"^CREATE (TABLE|MATERIALIZED VIEW) (?:`?(\w+)`?\.)?`?(\w+)`?\s", regex.IGNORECASE)
_ENGINE = regex.compile(r"ENGINE = (\w*)MergeTree(?:\(([^()]*)\))?")


def schema_statements(store) -> list[str]:
    """CREATE statements of a migrated store's tables, then its materialized views."""
    db = store.query("SELECT currentDatabase()")[1][0][0]
    _, rows = store.query(
        "SELECT name, engine, create_table_query FROM system.tables "
        f"WHERE database = '{db}' AND NOT is_temporary "
        "ORDER BY engine = 'MaterializedView', name", max_rows=100_000)
    return [query for name, _engine, query in rows if name not in SKIP]


def _sharding_key(body: str) -> str:
    if regex.search(r"`job` ", body):
        return "cityHash64(job)"
    if regex.search(r"`host` ", body):
        return "cityHash64(host)"
    return "rand()"


def render_cluster(statements: list[str], cluster: str = CLUSTER) -> list[str]:
    """The cluster DDL for single-node CREATE statements (see the module docstring)."""
    tables = {}
    for statement in statements:
        match = _CREATE.match(statement)
        if not match:
            raise ValueError(f"not a CREATE TABLE / MATERIALIZED VIEW: {statement[:80]}")
        if match.group(1).upper() == "TABLE":
            tables[match.group(3)] = statement
    on_cluster = f"ON CLUSTER '{cluster}'"

    def local_names(text: str, db: str | None) -> str:
        # system.tables qualifies every table reference with its database (db.table), which
        # tells them apart from columns of the same name (the rollups have a `steps` column).
        if not db:
            raise ValueError("expected database-qualified table names in the view's DDL")
        return regex.sub(rf"`?\b{regex.escape(db)}`?\.`?(\w+)`?",
                         lambda m: f"{m.group(1)}_local" if m.group(1) in tables else m.group(0),
                         text)

    out = []
    for name, statement in tables.items():
        body = statement[_CREATE.match(statement).end():]
        engine = _ENGINE.search(body)
        if not engine:
            raise ValueError(f"{name}: no MergeTree engine to replicate")
        args = [f"'/clickhouse/tables/{{shard}}/{{database}}/{name}_local'", "'{replica}'"]
        if engine.group(2):
            args.append(engine.group(2))
        replicated = f"ENGINE = Replicated{engine.group(1)}MergeTree({', '.join(args)})"
        body = body[:engine.start()] + replicated + body[engine.end():]
        body = body.replace("non_replicated_deduplication_window",
                            "replicated_deduplication_window")
        out.append(f"CREATE TABLE IF NOT EXISTS {name}_local {on_cluster} {body}")
        out.append(
            f"CREATE TABLE IF NOT EXISTS {name} {on_cluster} AS {name}_local "
            f"ENGINE = Distributed('{cluster}', currentDatabase(), '{name}_local', "
            f"{_sharding_key(body)})")
    for statement in statements:
        match = _CREATE.match(statement)
        if match.group(1).upper() != "TABLE":
            name = match.group(3)
            body = local_names(statement[match.end():], match.group(2))
            out.append(f"CREATE MATERIALIZED VIEW IF NOT EXISTS {name} {on_cluster} {body}")
    return out


def render_from_migrations(cluster: str = CLUSTER) -> list[str]:
    """Migrate a scratch chDB store and render its schema for a cluster."""
    from ridgescope.sql.store import Store
    with tempfile.TemporaryDirectory(prefix="ridgescope-schema-") as tmp:
        store = Store(f"chdb://{tmp}/store")
        try:
            store.migrate()
            return render_cluster(schema_statements(store), cluster)
        finally:
            store.close()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    cluster = argv[0] if argv else CLUSTER
    for statement in render_from_migrations(cluster):
        print(statement.rstrip() + ";\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
