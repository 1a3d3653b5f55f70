"""The one client code path to ClickHouse: chDB in-process (``chdb:///path``) or a server.

chDB allows one engine per process and path, so in embedded mode only the pipeline worker
opens the store; the CLI reaches it through the worker (see ridgescope.pipeline.query_api).
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import clickhouse_connect
import regex

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_MIGRATION_NAME = regex.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")
_WRITE_STATEMENT = regex.compile(
    r"^\s*(?:insert|create|drop|alter|truncate|rename|delete|update|optimize|attach|detach|"
    r"grant|revoke|kill|system|set|use|exchange|undrop|replace|backup|restore)\b",
    regex.IGNORECASE)


# Parameters of the migrations (``${name}`` in their text).  Retention is a migration parameter,
# not a row in a settings table, because a TTL expression cannot read a table; the values applied
# are recorded in ``store_settings`` and can be changed later with ridgescope.sql.retention.
MIGRATION_DEFAULTS = {
    "raw_retention_days": 30,
    "derived_retention_days": 730,
    "dedup_window": 1000,
}
_PARAM_ENV = {
    "raw_retention_days": "RIDGESCOPE_RAW_RETENTION_DAYS",
    "derived_retention_days": "RIDGESCOPE_DERIVED_RETENTION_DAYS",
}
_LEADING_COMMENTS = regex.compile(r"^(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", regex.DOTALL)
_PLACEHOLDER = regex.compile(r"\$\{([a-z_]+)\}")


def _statement_count(sql: str) -> int:
    """How many statements ``sql`` holds: ';' outside quotes and comments separates them."""
    count, i, n, pending = 0, 0, len(sql), False
    while i < n:
        c = sql[i]
        if c in "'\"`":
            i += 1
            while i < n and sql[i] != c:
                i += 2 if sql[i] == "\\" else 1
        elif sql.startswith("--", i):
            i = sql.find("\n", i) if "\n" in sql[i:] else n
        elif sql.startswith("/*", i):
            i = sql.find("*/", i + 2) + 1 if "*/" in sql[i + 2:] else n
        elif c == ";":
            count += pending
            pending = False
        elif not c.isspace():
            pending = True
        i += 1
    return count + pending


class StoreError(RuntimeError):
    """A store operation failed; the message is meant for the user."""


class ReadOnlyViolation(StoreError):
    pass


def migrations() -> list[tuple[int, str, str]]:
    """(version, name, sql) of every migration file, in order."""
    found = []
    for path in sorted(MIGRATIONS_DIR.glob("*.sql")):
        match = _MIGRATION_NAME.match(path.name)
        if match:
            found.append((int(match.group(1)), path.stem, path.read_text()))
    return found


def migration_params(overrides: dict | None = None) -> dict[str, int]:
    """Migration parameters: defaults, then RIDGESCOPE_*_RETENTION_DAYS, then ``overrides``."""
    params = dict(MIGRATION_DEFAULTS)
    for name, var in _PARAM_ENV.items():
        if os.environ.get(var):
            params[name] = os.environ[var]
    params.update(overrides or {})
    for name, value in params.items():
        if name not in MIGRATION_DEFAULTS:
            raise StoreError(f"unknown migration parameter {name!r}")
        try:
            params[name] = int(value)
        except (TypeError, ValueError):
            raise StoreError(f"migration parameter {name} must be a whole number, "
                             f"got {value!r}") from None
        if params[name] < 1:
            raise StoreError(f"migration parameter {name} must be at least 1, got {value!r}")
    return params


def render_migration(sql: str, params: dict) -> str:
    """Substitute ``${name}`` placeholders (comments included) with whole-number parameters."""
    def value(match):
        if match.group(1) not in params:
            raise StoreError(f"migration uses unknown parameter ${{{match.group(1)}}}")
        return str(int(params[match.group(1)]))
    return _PLACEHOLDER.sub(value, sql)


def split_statements(sql: str) -> list[str]:
    """Split a migration file on ';' at line ends, dropping comment-only chunks."""
    chunks = regex.split(r";\s*(?:\n|$)", sql)
    out = []
    for chunk in chunks:
        body = "\n".join(line for line in chunk.splitlines() if not line.strip().startswith("--"))
        if body.strip():
            out.append(body.strip())
    return out


class Store:
    """Thread-safe facade over a clickhouse-connect client."""

    def __init__(self, dsn: str, database: str | None = None):
        """``database``: use (and create) this database instead of the DSN's default one."""
        self.dsn = dsn
        self.database = database
        self.embedded = dsn.startswith("chdb://")
        if self.embedded:
            Path(dsn[len("chdb://"):]).mkdir(parents=True, exist_ok=True)
        if database is not None and not regex.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", database):
            raise StoreError(f"invalid database name {database!r}")
        try:
            self._client = clickhouse_connect.get_client(dsn=dsn)
            if database is not None:
                self._client.command(f"CREATE DATABASE IF NOT EXISTS {database}")
                self._client.close()
                self._client = clickhouse_connect.get_client(dsn=dsn, database=database)
        except Exception as exc:
            raise StoreError(f"cannot open store {dsn}: {exc}") from exc
        self._lock = threading.Lock()

    def migrate(self, params: dict | None = None) -> list[str]:
        """Apply the migrations not yet applied; returns their names.

        ``params`` override the migration parameters (see MIGRATION_DEFAULTS); they only
        matter for migrations not applied yet.
        """
        values = migration_params(params)
        with self._lock:
            self._client.command(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String, "
                "applied_ns Int64) ENGINE = ReplacingMergeTree ORDER BY version")
            done = {row[0] for row in
                    self._client.query("SELECT version FROM schema_migrations FINAL").result_rows}
            applied = []
            for version, name, sql in migrations():
                if version in done:
                    continue
                for statement in split_statements(render_migration(sql, values)):
                    self._client.command(statement)
                self._client.insert("schema_migrations", [[version, name, time.time_ns()]],
                                    column_names=["version", "name", "applied_ns"])
                if "${" in sql:
                    self._record_settings(values)
                applied.append(name)
            return applied

    def _record_settings(self, values: dict) -> None:
        now = time.time_ns()
        self._client.insert("store_settings", [[k, str(v), now] for k, v in values.items()],
                            column_names=["name", "value", "updated_ns"])

    def command(self, sql: str) -> None:
        """Run one statement that changes the store (DDL, OPTIMIZE); never for user input."""
        with self._lock:
            try:
                self._client.command(sql)
            except Exception as exc:
                raise StoreError(str(exc).splitlines()[0]) from exc

    def insert(self, table: str, rows: list[list], columns: list[str],
               dedup_token: str | None = None) -> None:
        """Insert rows.  With ``dedup_token`` (built from the Kafka offsets of the batch, see
        sink_rows.dedup_token) a replayed batch is dropped by the table and by every
        materialized view it feeds, within the last ``dedup_window`` inserts."""
        if not rows:
            return
        # The sink batches already; a server-side async insert buffer (chDB's default) would only
        # add its flush delay to every insert, and would deduplicate by other rules.
        settings = {"async_insert": 0}
        if dedup_token:
            settings["insert_deduplication_token"] = dedup_token
        with self._lock:
            self._client.insert(table, rows, column_names=columns, settings=settings)

    def query(self, sql: str, params: dict | None = None, *, read_only: bool = True,
              max_rows: int = 10_000, timeout_s: int = 30) -> tuple[list[str], list[tuple]]:
        """Run a query and return (column names, rows).

        Read-only queries refuse writes twice: by statement shape here, and by ClickHouse's
        ``readonly=1`` setting, so nothing that slips past the first check can write.
        """
        if read_only and _WRITE_STATEMENT.match(_LEADING_COMMENTS.sub("", sql, count=1)):
            raise ReadOnlyViolation(
                "ridgescope sql is read-only: this statement would change the store "
                f"({_LEADING_COMMENTS.sub('', sql, count=1).split()[0].upper()}); "
                "use SELECT, SHOW, DESCRIBE or EXPLAIN")
        if read_only and _statement_count(sql) > 1:
            raise ReadOnlyViolation("ridgescope sql runs one statement at a time; "
                                    "remove the ';' between statements")
        settings = {"max_execution_time": timeout_s, "max_result_rows": max_rows,
                    "result_overflow_mode": "break"}
        if read_only:
            settings["readonly"] = 1
        with self._lock:
            try:
                result = self._client.query(sql, parameters=params, settings=settings)
            except Exception as exc:
                message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                if "READONLY" in str(exc):
                    raise ReadOnlyViolation(f"refused in read-only mode: {message}") from exc
                raise StoreError(message) from exc
        # result_overflow_mode=break stops at a block boundary, so cut to the limit here.
        return list(result.column_names), [tuple(r) for r in result.result_rows[:max_rows]]

    def close(self) -> None:
        with self._lock:
            self._client.close()
