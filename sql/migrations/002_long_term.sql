-- The store for the long run: partitions, codecs, retention, insert dedup and rollups.
--
-- Raw probe tables (progress, host_samples, gpu_samples) are rebuilt ordered from low to high
-- cardinality (job, host, rank, time), partitioned by UTC day and dropped after
-- ${raw_retention_days} days.  Derived tables (jobs, steps, step_rank, alerts) stay
-- ReplacingMergeTree on their natural key (read them with FINAL), are partitioned by month
-- (daily partitions over two years would mean ~730 partitions a table) and kept
-- ${derived_retention_days} days.  ${...} are migration parameters, see ridgescope.sql.store.
--
-- Every table fed by the sink, and every rollup, keeps the hashes of its last
-- ${dedup_window} insert blocks (non_replicated_deduplication_window), so a batch replayed with
-- the same insert_deduplication_token (built from Kafka offsets) is dropped, and the
-- materialized views do not see it twice.
--
-- PARTITION BY and ORDER BY cannot be altered in place, so each table is rebuilt: create
-- X__v2 with the new layout and exchange it with X (X is now the new, empty table), create the
-- rollups and their views, then copy the old rows in, which backfills the rollups through the
-- same views, and drop the old table.

CREATE TABLE IF NOT EXISTS store_settings
(
    name        LowCardinality(String),
    value       String,
    updated_ns  Int64
)
ENGINE = ReplacingMergeTree(updated_ns)
ORDER BY name;

-- progress ---------------------------------------------------------------------------------
CREATE TABLE progress__v2
(
    job        LowCardinality(String),
    host       LowCardinality(String),
    rank       Int32 CODEC(T64, ZSTD(1)),
    ts_ns      Int64 CODEC(Delta, ZSTD(1)),
    seq        UInt64 CODEC(Delta, ZSTD(1)),
    kind       LowCardinality(String),
    step       Int64 DEFAULT -1 CODEC(Delta, ZSTD(1)),
    stream     LowCardinality(String),
    record     String CODEC(ZSTD(3)),
    ts         DateTime64(3) MATERIALIZED fromUnixTimestamp64Nano(ts_ns)
)
ENGINE = ReplacingMergeTree
PARTITION BY toDate(fromUnixTimestamp64Nano(ts_ns, 'UTC'))
ORDER BY (job, host, rank, ts_ns, seq)
TTL toDateTime(intDiv(ts_ns, 1000000000)) + INTERVAL ${raw_retention_days} DAY
SETTINGS non_replicated_deduplication_window = ${dedup_window};

EXCHANGE TABLES progress AND progress__v2;

-- host_samples -----------------------------------------------------------------------------
CREATE TABLE host_samples__v2
(
    job          LowCardinality(String),
    host         LowCardinality(String),
    rank         Int32 CODEC(T64, ZSTD(1)),
    ts_ns        Int64 CODEC(DoubleDelta, ZSTD(1)),
    pid          UInt32 CODEC(T64, ZSTD(1)),
    cpu_s        Float64 CODEC(Gorilla, ZSTD(1)),
    read_bytes   UInt64 CODEC(Delta, ZSTD(1)),
    write_bytes  UInt64 CODEC(Delta, ZSTD(1)),
    rss_bytes    UInt64 CODEC(T64, ZSTD(1)),
    nprocs       UInt32 CODEC(T64, ZSTD(1)),
    ts           DateTime64(3) MATERIALIZED fromUnixTimestamp64Nano(ts_ns)
)
ENGINE = ReplacingMergeTree
PARTITION BY toDate(fromUnixTimestamp64Nano(ts_ns, 'UTC'))
ORDER BY (job, host, rank, ts_ns)
TTL toDateTime(intDiv(ts_ns, 1000000000)) + INTERVAL ${raw_retention_days} DAY
SETTINGS non_replicated_deduplication_window = ${dedup_window};

EXCHANGE TABLES host_samples AND host_samples__v2;

-- gpu_samples ------------------------------------------------------------------------------
CREATE TABLE gpu_samples__v2
(
    job        LowCardinality(String),
    host       LowCardinality(String),
    rank       Int32 CODEC(T64, ZSTD(1)),
    gpu_uuid   LowCardinality(String),
    ts_ns      Int64 CODEC(DoubleDelta, ZSTD(1)),
    metrics    Map(LowCardinality(String), Float64) CODEC(ZSTD(3)),
    ts         DateTime64(3) MATERIALIZED fromUnixTimestamp64Nano(ts_ns)
)
ENGINE = ReplacingMergeTree
PARTITION BY toDate(fromUnixTimestamp64Nano(ts_ns, 'UTC'))
ORDER BY (job, host, gpu_uuid, ts_ns)
TTL toDateTime(intDiv(ts_ns, 1000000000)) + INTERVAL ${raw_retention_days} DAY
SETTINGS non_replicated_deduplication_window = ${dedup_window};

EXCHANGE TABLES gpu_samples AND gpu_samples__v2;

-- jobs: one row per job, the newest wins ---------------------------------------------------
CREATE TABLE jobs__v2
(
    job            LowCardinality(String),
    host           LowCardinality(String),
    world_size     UInt32,
    cmd            String CODEC(ZSTD(3)),
    tags           Map(LowCardinality(String), String),
    started_ns     Int64,
    ended_ns       Int64 DEFAULT 0,
    exit_code      Int32 DEFAULT -1,
    updated_ns     Int64,
    framework      LowCardinality(String) DEFAULT '',
    hosts          Array(LowCardinality(String)) DEFAULT [host],
    scheduler_ids  Map(LowCardinality(String), String) DEFAULT map()
)
ENGINE = ReplacingMergeTree(updated_ns)
ORDER BY job
TTL toDateTime(intDiv(updated_ns, 1000000000)) + INTERVAL ${derived_retention_days} DAY
SETTINGS non_replicated_deduplication_window = ${dedup_window};

EXCHANGE TABLES jobs AND jobs__v2;

-- step_rank: the lane summary of one rank for one step -------------------------------------
CREATE TABLE step_rank__v2
(
    job               LowCardinality(String),
    step              UInt32 CODEC(Delta, ZSTD(1)),
    rank              Int32 CODEC(T64, ZSTD(1)),
    host              LowCardinality(String),
    t0_ns             Int64 CODEC(Delta, ZSTD(1)),
    t1_ns             Int64 CODEC(Delta, ZSTD(1)),
    duration_ms       Float64 CODEC(ZSTD(1)),
    input_ms          Float64 CODEC(ZSTD(1)),
    transfer_ms       Float64 CODEC(ZSTD(1)),
    compute_ms        Float64 CODEC(ZSTD(1)),
    communication_ms  Float64 CODEC(ZSTD(1)),
    checkpoint_ms     Float64 CODEC(ZSTD(1)),
    idle_ms           Float64 CODEC(ZSTD(1)),
    comm_wait_ms      Float64 CODEC(ZSTD(1)),
    arrival_ns        Int64 CODEC(Delta, ZSTD(1)),
    source            LowCardinality(String),
    inserted_ns       Int64 CODEC(Delta, ZSTD(1))
)
ENGINE = ReplacingMergeTree(inserted_ns)
PARTITION BY toYYYYMM(fromUnixTimestamp64Nano(t1_ns, 'UTC'))
ORDER BY (job, step, rank)
TTL toDateTime(intDiv(t1_ns, 1000000000)) + INTERVAL ${derived_retention_days} DAY
SETTINGS non_replicated_deduplication_window = ${dedup_window};

EXCHANGE TABLES step_rank AND step_rank__v2;

-- steps: one row per step of a job, with its verdict ---------------------------------------
CREATE TABLE steps__v2
(
    job               LowCardinality(String),
    step              UInt32 CODEC(Delta, ZSTD(1)),
    ts_ns             Int64 CODEC(Delta, ZSTD(1)),
    rank_count        UInt32 CODEC(T64, ZSTD(1)),
    duration_ms       Float64 CODEC(ZSTD(1)),
    baseline_ms       Float64 CODEC(ZSTD(1)),
    slow              Bool,
    cause             LowCardinality(String),
    culprit_rank      Int32 CODEC(T64, ZSTD(1)),
    excess_ms         Float64 CODEC(ZSTD(1)),
    skew_ms           Float64 CODEC(ZSTD(1)),
    confidence        Float32 CODEC(ZSTD(1)),
    phase             LowCardinality(String),
    input_ms          Float64 CODEC(ZSTD(1)),
    transfer_ms       Float64 CODEC(ZSTD(1)),
    compute_ms        Float64 CODEC(ZSTD(1)),
    communication_ms  Float64 CODEC(ZSTD(1)),
    checkpoint_ms     Float64 CODEC(ZSTD(1)),
    idle_ms           Float64 CODEC(ZSTD(1)),
    inserted_ns       Int64 CODEC(Delta, ZSTD(1)),
    culprit_host      LowCardinality(String) DEFAULT ''
)
ENGINE = ReplacingMergeTree(inserted_ns)
PARTITION BY toYYYYMM(fromUnixTimestamp64Nano(ts_ns, 'UTC'))
ORDER BY (job, step)
TTL toDateTime(intDiv(ts_ns, 1000000000)) + INTERVAL ${derived_retention_days} DAY
SETTINGS non_replicated_deduplication_window = ${dedup_window};

EXCHANGE TABLES steps AND steps__v2;

-- alerts -------------------------------------------------------------------------------------
CREATE TABLE alerts__v2
(
    job           LowCardinality(String),
    step          UInt32,
    ts_ns         Int64 CODEC(Delta, ZSTD(1)),
    cause         LowCardinality(String),
    culprit_rank  Int32,
    excess_ms     Float64,
    message       String CODEC(ZSTD(3)),
    inserted_ns   Int64
)
ENGINE = ReplacingMergeTree(inserted_ns)
PARTITION BY toYYYYMM(fromUnixTimestamp64Nano(ts_ns, 'UTC'))
ORDER BY (job, step)
TTL toDateTime(intDiv(ts_ns, 1000000000)) + INTERVAL ${derived_retention_days} DAY
SETTINGS non_replicated_deduplication_window = ${dedup_window};

EXCHANGE TABLES alerts AND alerts__v2;

-- Rollups ------------------------------------------------------------------------------------
-- Written only by the materialized views below; trend queries read these, never raw rows.
-- Several views feed one rollup (steps and gpu_samples → job rollups); the columns a view
-- does not write hold empty states, which merge as no-ops (both write first_ns/last_ns, as a
-- default 0 would win min()).
-- `*_ms_sum` columns are sums of ms over the bucket's steps; divide by `steps` (`rank_steps`)
-- for ms per step.
-- `culprits_by_rank/host` and `slow_by_cause` count slow steps only.

CREATE TABLE job_hour_rollup
(
    job                 LowCardinality(String),
    hour                DateTime('UTC'),
    steps               SimpleAggregateFunction(sum, UInt64),
    first_ns            SimpleAggregateFunction(min, Int64),
    last_ns             SimpleAggregateFunction(max, Int64),
    duration_ms_sum     SimpleAggregateFunction(sum, Float64),
    step_ms_q           AggregateFunction(quantilesTDigest(0.5, 0.9, 0.99), Float64),
    input_ms_sum        SimpleAggregateFunction(sum, Float64),
    transfer_ms_sum     SimpleAggregateFunction(sum, Float64),
    compute_ms_sum      SimpleAggregateFunction(sum, Float64),
    communication_ms_sum SimpleAggregateFunction(sum, Float64),
    checkpoint_ms_sum   SimpleAggregateFunction(sum, Float64),
    idle_ms_sum         SimpleAggregateFunction(sum, Float64),
    checkpoint_steps    SimpleAggregateFunction(sum, UInt64),
    slow_steps          SimpleAggregateFunction(sum, UInt64),
    slow_excess_ms      SimpleAggregateFunction(sum, Float64),
    slow_by_cause       SimpleAggregateFunction(sumMap, Map(String, UInt64)),
    culprits_by_rank    SimpleAggregateFunction(sumMap, Map(Int32, UInt64)),
    culprits_by_host    SimpleAggregateFunction(sumMap, Map(String, UInt64)),
    gpu_samples         SimpleAggregateFunction(sum, UInt64),
    gpu_util_q          AggregateFunction(quantilesTDigest(0.5, 0.9, 0.99), Float64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (job, hour)
TTL hour + INTERVAL ${derived_retention_days} DAY
SETTINGS non_replicated_deduplication_window = ${dedup_window};

CREATE TABLE job_day_rollup
(
    job                 LowCardinality(String),
    day                 DateTime('UTC'),
    steps               SimpleAggregateFunction(sum, UInt64),
    first_ns            SimpleAggregateFunction(min, Int64),
    last_ns             SimpleAggregateFunction(max, Int64),
    duration_ms_sum     SimpleAggregateFunction(sum, Float64),
    step_ms_q           AggregateFunction(quantilesTDigest(0.5, 0.9, 0.99), Float64),
    input_ms_sum        SimpleAggregateFunction(sum, Float64),
    transfer_ms_sum     SimpleAggregateFunction(sum, Float64),
    compute_ms_sum      SimpleAggregateFunction(sum, Float64),
    communication_ms_sum SimpleAggregateFunction(sum, Float64),
    checkpoint_ms_sum   SimpleAggregateFunction(sum, Float64),
    idle_ms_sum         SimpleAggregateFunction(sum, Float64),
    checkpoint_steps    SimpleAggregateFunction(sum, UInt64),
    slow_steps          SimpleAggregateFunction(sum, UInt64),
    slow_excess_ms      SimpleAggregateFunction(sum, Float64),
    slow_by_cause       SimpleAggregateFunction(sumMap, Map(String, UInt64)),
    culprits_by_rank    SimpleAggregateFunction(sumMap, Map(Int32, UInt64)),
    culprits_by_host    SimpleAggregateFunction(sumMap, Map(String, UInt64)),
    gpu_samples         SimpleAggregateFunction(sum, UInt64),
    gpu_util_q          AggregateFunction(quantilesTDigest(0.5, 0.9, 0.99), Float64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (job, day)
TTL day + INTERVAL ${derived_retention_days} DAY
SETTINGS non_replicated_deduplication_window = ${dedup_window};

CREATE TABLE host_day_rollup
(
    host                LowCardinality(String),
    day                 Date,
    jobs                AggregateFunction(uniq, String),
    rank_steps          SimpleAggregateFunction(sum, UInt64),
    duration_ms_sum     SimpleAggregateFunction(sum, Float64),
    rank_step_ms_q      AggregateFunction(quantilesTDigest(0.5, 0.9, 0.99), Float64),
    input_ms_sum        SimpleAggregateFunction(sum, Float64),
    transfer_ms_sum     SimpleAggregateFunction(sum, Float64),
    compute_ms_sum      SimpleAggregateFunction(sum, Float64),
    communication_ms_sum SimpleAggregateFunction(sum, Float64),
    checkpoint_ms_sum   SimpleAggregateFunction(sum, Float64),
    idle_ms_sum         SimpleAggregateFunction(sum, Float64),
    comm_wait_ms_sum    SimpleAggregateFunction(sum, Float64),
    culprit_steps       SimpleAggregateFunction(sum, UInt64),
    culprit_by_cause    SimpleAggregateFunction(sumMap, Map(String, UInt64)),
    culprit_excess_ms   SimpleAggregateFunction(sum, Float64),
    gpu_samples         SimpleAggregateFunction(sum, UInt64),
    gpu_util_q          AggregateFunction(quantilesTDigest(0.5, 0.9, 0.99), Float64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (host, day)
TTL day + INTERVAL ${derived_retention_days} DAY
SETTINGS non_replicated_deduplication_window = ${dedup_window};

CREATE MATERIALIZED VIEW job_hour_steps_mv TO job_hour_rollup AS
SELECT job,
       toStartOfHour(fromUnixTimestamp64Nano(ts_ns, 'UTC')) AS hour,
       count() AS steps,
       min(ts_ns) AS first_ns,
       max(ts_ns) AS last_ns,
       sum(duration_ms) AS duration_ms_sum,
       quantilesTDigestState(0.5, 0.9, 0.99)(duration_ms) AS step_ms_q,
       sum(input_ms) AS input_ms_sum,
       sum(transfer_ms) AS transfer_ms_sum,
       sum(compute_ms) AS compute_ms_sum,
       sum(communication_ms) AS communication_ms_sum,
       sum(checkpoint_ms) AS checkpoint_ms_sum,
       sum(idle_ms) AS idle_ms_sum,
       countIf(checkpoint_ms > 0) AS checkpoint_steps,
       countIf(slow) AS slow_steps,
       sumIf(excess_ms, slow) AS slow_excess_ms,
       sumMapIf(map(toString(cause), toUInt64(1)), slow) AS slow_by_cause,
       sumMapIf(map(culprit_rank, toUInt64(1)), slow AND culprit_rank >= 0) AS culprits_by_rank,
       sumMapIf(map(toString(culprit_host), toUInt64(1)), slow AND culprit_host != '')
           AS culprits_by_host
FROM steps
GROUP BY job, hour;

CREATE MATERIALIZED VIEW job_hour_gpu_mv TO job_hour_rollup AS
SELECT job,
       toStartOfHour(fromUnixTimestamp64Nano(ts_ns, 'UTC')) AS hour,
       min(ts_ns) AS first_ns,
       max(ts_ns) AS last_ns,
       count() AS gpu_samples,
       quantilesTDigestState(0.5, 0.9, 0.99)(metrics['gpu_util']) AS gpu_util_q
FROM gpu_samples
WHERE mapContains(metrics, 'gpu_util')
GROUP BY job, hour;

CREATE MATERIALIZED VIEW job_day_steps_mv TO job_day_rollup AS
SELECT job,
       toStartOfDay(fromUnixTimestamp64Nano(ts_ns, 'UTC')) AS day,
       count() AS steps,
       min(ts_ns) AS first_ns,
       max(ts_ns) AS last_ns,
       sum(duration_ms) AS duration_ms_sum,
       quantilesTDigestState(0.5, 0.9, 0.99)(duration_ms) AS step_ms_q,
       sum(input_ms) AS input_ms_sum,
       sum(transfer_ms) AS transfer_ms_sum,
       sum(compute_ms) AS compute_ms_sum,
       sum(communication_ms) AS communication_ms_sum,
       sum(checkpoint_ms) AS checkpoint_ms_sum,
       sum(idle_ms) AS idle_ms_sum,
       countIf(checkpoint_ms > 0) AS checkpoint_steps,
       countIf(slow) AS slow_steps,
       sumIf(excess_ms, slow) AS slow_excess_ms,
       sumMapIf(map(toString(cause), toUInt64(1)), slow) AS slow_by_cause,
       sumMapIf(map(culprit_rank, toUInt64(1)), slow AND culprit_rank >= 0) AS culprits_by_rank,
       sumMapIf(map(toString(culprit_host), toUInt64(1)), slow AND culprit_host != '')
           AS culprits_by_host
FROM steps
GROUP BY job, day;

CREATE MATERIALIZED VIEW job_day_gpu_mv TO job_day_rollup AS
SELECT job,
       toStartOfDay(fromUnixTimestamp64Nano(ts_ns, 'UTC')) AS day,
       min(ts_ns) AS first_ns,
       max(ts_ns) AS last_ns,
       count() AS gpu_samples,
       quantilesTDigestState(0.5, 0.9, 0.99)(metrics['gpu_util']) AS gpu_util_q
FROM gpu_samples
WHERE mapContains(metrics, 'gpu_util')
GROUP BY job, day;

CREATE MATERIALIZED VIEW host_day_ranks_mv TO host_day_rollup AS
SELECT host,
       toDate(fromUnixTimestamp64Nano(t1_ns, 'UTC')) AS day,
       uniqState(toString(job)) AS jobs,
       count() AS rank_steps,
       sum(duration_ms) AS duration_ms_sum,
       quantilesTDigestState(0.5, 0.9, 0.99)(duration_ms) AS rank_step_ms_q,
       sum(input_ms) AS input_ms_sum,
       sum(transfer_ms) AS transfer_ms_sum,
       sum(compute_ms) AS compute_ms_sum,
       sum(communication_ms) AS communication_ms_sum,
       sum(checkpoint_ms) AS checkpoint_ms_sum,
       sum(idle_ms) AS idle_ms_sum,
       sum(comm_wait_ms) AS comm_wait_ms_sum
FROM step_rank
GROUP BY host, day;

CREATE MATERIALIZED VIEW host_day_culprits_mv TO host_day_rollup AS
SELECT culprit_host AS host,
       toDate(fromUnixTimestamp64Nano(ts_ns, 'UTC')) AS day,
       count() AS culprit_steps,
       sumMap(map(toString(cause), toUInt64(1))) AS culprit_by_cause,
       sum(excess_ms) AS culprit_excess_ms
FROM steps
WHERE slow AND culprit_host != ''
GROUP BY host, day;

CREATE MATERIALIZED VIEW host_day_gpu_mv TO host_day_rollup AS
SELECT host,
       toDate(fromUnixTimestamp64Nano(ts_ns, 'UTC')) AS day,
       count() AS gpu_samples,
       quantilesTDigestState(0.5, 0.9, 0.99)(metrics['gpu_util']) AS gpu_util_q
FROM gpu_samples
WHERE mapContains(metrics, 'gpu_util')
GROUP BY host, day;

-- Copy the old rows into the rebuilt tables now that the views exist, so the rollups are
-- backfilled by the same views; rows past their retention are dropped on the way.

INSERT INTO progress (job, host, rank, ts_ns, seq, kind, step, stream, record)
SELECT job, host, rank, ts_ns, seq, kind, step, stream, record FROM progress__v2;

DROP TABLE progress__v2;

INSERT INTO host_samples (job, host, rank, ts_ns, pid, cpu_s, read_bytes, write_bytes,
                              rss_bytes, nprocs)
SELECT job, host, rank, ts_ns, pid, cpu_s, read_bytes, write_bytes, rss_bytes, nprocs
FROM host_samples__v2;

DROP TABLE host_samples__v2;

INSERT INTO gpu_samples (job, host, rank, gpu_uuid, ts_ns, metrics)
SELECT job, host, rank, gpu_uuid, ts_ns, metrics FROM gpu_samples__v2;

DROP TABLE gpu_samples__v2;

INSERT INTO jobs (job, host, world_size, cmd, tags, started_ns, ended_ns, exit_code,
                      updated_ns)
SELECT job, host, world_size, cmd, tags, started_ns, ended_ns, exit_code, updated_ns FROM jobs__v2;

DROP TABLE jobs__v2;

INSERT INTO step_rank
SELECT * FROM step_rank__v2;

DROP TABLE step_rank__v2;

INSERT INTO steps (job, step, ts_ns, rank_count, duration_ms, baseline_ms, slow, cause,
                       culprit_rank, excess_ms, skew_ms, confidence, phase, input_ms,
                       transfer_ms, compute_ms, communication_ms, checkpoint_ms, idle_ms,
                       inserted_ns)
SELECT job, step, ts_ns, rank_count, duration_ms, baseline_ms, slow, cause, culprit_rank,
       excess_ms, skew_ms, confidence, phase, input_ms, transfer_ms, compute_ms,
       communication_ms, checkpoint_ms, idle_ms, inserted_ns
FROM steps__v2;

DROP TABLE steps__v2;

INSERT INTO alerts
SELECT * FROM alerts__v2;

DROP TABLE alerts__v2;
