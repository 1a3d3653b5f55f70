"""The one client code path to ClickHouse: chDB in-process (``chdb:///path``) or a server.

chDB allows one engine per process and path, so in embedded mode only the pipeline worker
opens the store; the CLI reaches it through the worker (see ridgescope.pipeline.query_api).
"""
from __future__ import annotations

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

    def __init__(self, dsn: str):
        self.dsn = dsn
        self.embedded = dsn.startswith("chdb://")
        if self.embedded:
            Path(dsn[len("chdb://"):]).mkdir(parents=True, exist_ok=True)
        try:
            self._client = clickhouse_connect.get_client(dsn=dsn)
        except Exception as exc:
            raise StoreError(f"cannot open store {dsn}: {exc}") from exc
        self._lock = threading.Lock()

    def migrate(self) -> list[str]:
        """Apply the migrations not yet applied; returns their names."""
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
                for statement in split_statements(sql):
                    self._client.command(statement)
                self._client.insert("schema_migrations", [[version, name, time.time_ns()]],
                                    column_names=["version", "name", "applied_ns"])
                applied.append(name)
            return applied

    def insert(self, table: str, rows: list[list], columns: list[str]) -> None:
        if not rows:
            return
        with self._lock:
            self._client.insert(table, rows, column_names=columns)

    def query(self, sql: str, params: dict | None = None, *, read_only: bool = True,
              max_rows: int = 10_000, timeout_s: int = 30) -> tuple[list[str], list[tuple]]:
        """Run a query and return (column names, rows).

        Read-only queries refuse writes twice: by statement shape here, and by ClickHouse's
        ``readonly=1`` setting, so nothing that slips past the first check can write.
        """
        if read_only and _WRITE_STATEMENT.match(sql):
            raise ReadOnlyViolation(
                "ridgescope sql is read-only: this statement would change the store "
                f"({sql.split()[0].upper()}); use SELECT, SHOW, DESCRIBE or EXPLAIN")
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
        return list(result.column_names), [tuple(r) for r in result.result_rows]

    def close(self) -> None:
        with self._lock:
            self._client.close()
