"""Change the retention of an existing store (the TTLs that migration 002 set).

TTL expressions cannot read a settings table, so retention is a migration parameter
(RIDGESCOPE_RAW_RETENTION_DAYS / RIDGESCOPE_DERIVED_RETENTION_DAYS when the store is created or
upgraded) and, afterwards, an ``ALTER TABLE … MODIFY TTL`` issued here.  Both record the values
in ``store_settings``.
"""
from __future__ import annotations

import time

from ridgescope.sql.store import StoreError

# table → the DateTime expression its TTL counts from.
RAW_TABLES = {
    "progress": "toDateTime(intDiv(ts_ns, 1000000000))",
    "host_samples": "toDateTime(intDiv(ts_ns, 1000000000))",
    "gpu_samples": "toDateTime(intDiv(ts_ns, 1000000000))",
}
DERIVED_TABLES = {
    "jobs": "toDateTime(intDiv(updated_ns, 1000000000))",
    "step_rank": "toDateTime(intDiv(t1_ns, 1000000000))",
    "steps": "toDateTime(intDiv(ts_ns, 1000000000))",
    "alerts": "toDateTime(intDiv(ts_ns, 1000000000))",
    "events": "toDateTime(intDiv(ts_ns, 1000000000))",
    "job_hour_rollup": "hour",
    "job_day_rollup": "day",
    "host_day_rollup": "day",
}


def current(store) -> dict[str, str]:
    """The store's recorded settings (retention days, dedup window)."""
    _, rows = store.query("SELECT name, value FROM store_settings FINAL")
    return dict(rows)


def set_retention(store, raw_days: int | None = None, derived_days: int | None = None) -> None:
    """Apply new retention (days) to the raw and/or derived tables of a migrated store."""
    changes = []
    for days, tables, name in ((raw_days, RAW_TABLES, "raw_retention_days"),
                               (derived_days, DERIVED_TABLES, "derived_retention_days")):
        if days is None:
            continue
        if int(days) < 1:
            raise StoreError(f"{name} must be at least 1 day, got {days}")
        for table, expr in tables.items():
            store.command(f"ALTER TABLE {table} MODIFY TTL {expr} + INTERVAL {int(days)} DAY")
        changes.append([name, str(int(days)), time.time_ns()])
    if changes:
        store.insert("store_settings", changes, ["name", "value", "updated_ns"])
