"""Fixtures of the store tests.

chDB opens one engine per process, at one path: every test here shares one session path and
gets its own database (Store(dsn, database=...)), so the tests stay independent.
"""
from __future__ import annotations

import time

import pytest

from ridgescope.pipeline.sink_rows import COLUMNS
from ridgescope.sql import synthetic
from ridgescope.sql.store import Store

DAY_NS = 86400 * 10**9


@pytest.fixture(scope="session")
def chdb_dsn(tmp_path_factory) -> str:
    return f"chdb://{tmp_path_factory.mktemp('chdb') / 'store'}"


_counter = iter(range(10**6))


@pytest.fixture(scope="session")
def new_store(chdb_dsn):
    """A factory of fresh, unmigrated stores (one database each) on the session's engine."""
    opened = []

    def make(prefix: str = "t") -> Store:
        store = Store(chdb_dsn, database=f"{prefix}_{next(_counter)}")
        opened.append(store)
        return store
    yield make
    for store in opened:
        store.close()


def fleet_start_ns() -> int:
    """Midnight UTC, 20 days ago: the fleet's 15 days sit inside every retention window."""
    return (time.time_ns() - 20 * DAY_NS) // DAY_NS * DAY_NS


def seed(store: Store, table_rows: dict[str, list], batch: str = "seed") -> None:
    """Insert like the sink does: one batch per table, its dedup token from the 'offsets'."""
    for table, rows in table_rows.items():
        store.insert(table, rows, COLUMNS[table], dedup_token=f"{table}:{batch}")


@pytest.fixture(scope="session")
def fleet():
    return synthetic.fleet(start_ns=fleet_start_ns())


@pytest.fixture(scope="session")
def fleet_rows(fleet):
    return synthetic.fleet_rows(fleet)


@pytest.fixture(scope="session")
def seeded(new_store, fleet_rows) -> Store:
    """A migrated store holding the 30 synthetic jobs (read-only use: do not write to it)."""
    store = new_store("seeded")
    store.migrate()
    seed(store, fleet_rows)
    return store
