"""A replayed batch changes no answer; TTLs drop what is past retention and keep the rest."""
from __future__ import annotations

import dataclasses
import time

from ridgescope.pipeline.sink_rows import COLUMNS, dedup_token
from ridgescope.sql import library, retention, synthetic

from .conftest import DAY_NS, fleet_start_ns, seed

PARAMS = {"job": "job-03", "job_a": "job-11", "job_b": "job-12", "rank": 17}


def answers(store) -> dict:
    out = {}
    for name, query in library.all_queries().items():
        values = {k: v for k, v in PARAMS.items() if k in query.params}
        columns, rows = store.query(query.render(**values), max_rows=100_000)
        out[name] = (columns, [tuple(round(v, 6) if isinstance(v, float) else v for v in r)
                               for r in rows])
    return out


def test_replayed_batch_changes_no_answer(new_store):
    store = new_store("replay")
    store.migrate()
    specs = synthetic.fleet(n_jobs=12, steps=100, start_ns=fleet_start_ns())
    seed(store, synthetic.fleet_rows(specs, inserted_ns=1))
    before = answers(store)
    # The sink crashed before committing its offsets: the same offsets come again, mapped
    # again (a new inserted_ns), with the same dedup token.
    seed(store, synthetic.fleet_rows(specs, inserted_ns=2))
    assert answers(store) == before
    # Nothing doubled underneath either, FINAL or not.
    assert store.query("SELECT count() FROM steps")[1][0][0] == 1200
    assert store.query("SELECT sum(steps) FROM job_hour_rollup")[1][0][0] == 1200


def test_final_reads_dedup_derived_tables_without_a_token(new_store):
    """Without a token, ReplacingMergeTree still keeps one row per step for FINAL readers."""
    store = new_store("final")
    store.migrate()
    spec = synthetic.fleet(n_jobs=12, steps=50, start_ns=fleet_start_ns())[0]
    rows = synthetic.rows(spec, inserted_ns=1)
    store.insert("steps", rows["steps"], COLUMNS["steps"])
    top = library.render("top_slow_steps", job=spec.name)
    before = store.query(top)
    store.insert("steps", synthetic.rows(spec, inserted_ns=2)["steps"], COLUMNS["steps"])
    assert store.query("SELECT count() FROM steps")[1][0][0] == 100       # two copies stored
    assert store.query(top) == before                                      # one read
    assert store.query("SELECT count() FROM steps FINAL")[1][0][0] == 50


def _gpu_row(job, ts_ns):
    return [job, 0, "node-01", "GPU-0", ts_ns, {"gpu_util": 50.0}]


def _step_row(job, step, ts_ns):
    return [job, step, ts_ns, 8, 800.0, 800.0, False, "", -1, 0.0, 0.0, 1.0, "steady",
            20.0, 10.0, 600.0, 150.0, 0.0, 20.0, 1, ""]


def test_retention_is_honoured(new_store):
    store = new_store("ttl")
    store.migrate()
    now = time.time_ns()
    ages = {"fresh": 1, "29d": 29, "31d": 31, "700d": 700, "740d": 740}
    store.insert("gpu_samples", [_gpu_row(j, now - d * DAY_NS) for j, d in ages.items()],
                 COLUMNS["gpu_samples"])
    store.insert("steps", [_step_row(j, 1, now - d * DAY_NS) for j, d in ages.items()],
                 COLUMNS["steps"])
    for table in ("gpu_samples", "steps", "job_day_rollup", "job_hour_rollup"):
        store.command(f"OPTIMIZE TABLE {table} FINAL")
    gpu = {r[0] for r in store.query("SELECT DISTINCT job FROM gpu_samples")[1]}
    steps = {r[0] for r in store.query("SELECT DISTINCT job FROM steps")[1]}
    assert gpu == {"fresh", "29d"}                           # raw: 30 days
    assert steps == {"fresh", "29d", "31d", "700d"}          # derived: 730 days
    rolled = {r[0] for r in store.query("SELECT DISTINCT job FROM job_day_rollup")[1]}
    assert rolled == {"fresh", "29d", "31d", "700d"}         # rollups outlive the raw rows
    gpu_rolled = store.query("SELECT job FROM job_day_rollup WHERE gpu_samples > 0 "
                             "ORDER BY job")[1]
    assert [r[0] for r in gpu_rolled] == ["29d", "31d", "700d", "fresh"]

    # Shorter retention on a live store: ALTER … MODIFY TTL, then a merge enforces it.
    retention.set_retention(store, raw_days=10, derived_days=365)
    assert retention.current(store)["raw_retention_days"] == "10"
    for table in ("gpu_samples", "steps", "job_day_rollup"):
        store.command(f"OPTIMIZE TABLE {table} FINAL")
    assert {r[0] for r in store.query("SELECT DISTINCT job FROM gpu_samples")[1]} == {"fresh"}
    assert {r[0] for r in store.query("SELECT DISTINCT job FROM steps")[1]} == {
        "fresh", "29d", "31d"}
    assert {r[0] for r in store.query("SELECT DISTINCT job FROM job_day_rollup")[1]} == {
        "fresh", "29d", "31d"}


def test_same_offsets_in_another_life_of_the_topics_are_not_a_replay(new_store):
    """The embedded broker starts every `up` at offset 0, and the store outlives it: a new
    job's batch at the offsets of an old one is stored; a true replay still is not."""
    store = new_store("lives")
    store.migrate()
    old = synthetic.fleet(n_jobs=1, steps=20, start_ns=fleet_start_ns())
    new = [dataclasses.replace(old[0], name="job-next")]
    offsets = {("rs.steps", 0): (0, 19)}

    def insert(specs, digest):
        for table, rows in synthetic.fleet_rows(specs).items():
            if rows:
                store.insert(table, rows, COLUMNS[table],
                             dedup_token=dedup_token(table, offsets, digest))

    insert(old, "a1")
    insert(new, "b2")       # the next life of the topics: same offsets, other messages
    insert(old, "a1")       # a replay of the first batch
    counts = store.query("SELECT job, count() FROM steps GROUP BY job ORDER BY job")[1]
    assert [tuple(r) for r in counts] == [("job-01", 20), ("job-next", 20)]


def test_events_outlive_the_raw_progress_rows(new_store):
    """An error, a checkpoint, a restart or an evaluation the sink writes to `progress` is copied
    to `events` as it lands (migration 003), and stays for the derived retention; the progress
    lines themselves do not go there, and go with the raw rows."""
    store = new_store("events_ttl")
    store.migrate()
    now = time.time_ns()
    rows = []
    for job, days in {"fresh": 1, "31d": 31, "740d": 740}.items():
        for seq, (kind, record) in enumerate((("progress", '{"kind": "progress", "step": 5}'),
                                              ("error", '{"kind": "error", "error": "cuda_oom"}'),
                                              ("checkpoint", '{"kind": "checkpoint", "action": "save"}'))):
            rows.append([job, 0, "node-01", now - days * DAY_NS, seq, kind, 5, "stdout", record])
    store.insert("progress", rows, COLUMNS["progress"])
    for table in ("progress", "events"):
        store.command(f"OPTIMIZE TABLE {table} FINAL")
    kept = store.query("SELECT job, kind FROM events FINAL ORDER BY job, kind")[1]
    assert kept == [("31d", "checkpoint"), ("31d", "error"), ("fresh", "checkpoint"), ("fresh", "error")]
    assert {r[0] for r in store.query("SELECT DISTINCT job FROM progress")[1]} == {"fresh"}
    retention.set_retention(store, derived_days=10)
    store.command("OPTIMIZE TABLE events FINAL")
    assert {r[0] for r in store.query("SELECT DISTINCT job FROM events")[1]} == {"fresh"}
