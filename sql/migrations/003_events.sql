-- What happened to each job, for the long run: the progress rows that are events (errors,
-- checkpoints, restarts, evaluations; see parsers/events.py) are kept as long as the derived
-- tables (${derived_retention_days} days), where the raw progress rows go after
-- ${raw_retention_days}.  A job's failures (`first_failure`), hangs (`hang_progress`) and saves
-- then stay queryable across a fleet's years, not its last month.  A materialized view copies
-- each event as the sink inserts it (a batch the insert dedup drops never reaches the view);
-- the events already stored are copied once, here.  A few per step at most: progress lines
-- are the bulk of the raw table, and they stay out.  The columns are progress's (`AS progress`);
-- the partitions are monthly, as the derived tables'.

CREATE TABLE IF NOT EXISTS events AS progress
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(fromUnixTimestamp64Nano(ts_ns, 'UTC'))
ORDER BY (job, host, rank, ts_ns, seq)
TTL toDateTime(intDiv(ts_ns, 1000000000)) + INTERVAL ${derived_retention_days} DAY
SETTINGS non_replicated_deduplication_window = ${dedup_window};

CREATE MATERIALIZED VIEW IF NOT EXISTS events_mv TO events AS
SELECT job, host, rank, ts_ns, seq, kind, step, stream, record
FROM progress
WHERE kind IN ('error', 'checkpoint', 'restart', 'eval');

INSERT INTO events (job, host, rank, ts_ns, seq, kind, step, stream, record)
SELECT job, host, rank, ts_ns, seq, kind, step, stream, record
FROM progress
WHERE kind IN ('error', 'checkpoint', 'restart', 'eval');
