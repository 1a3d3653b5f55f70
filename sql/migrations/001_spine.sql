-- The spine's tables.  Derived tables are ReplacingMergeTree on their natural key, so a batch
-- that the at-least-once sink replays never doubles a row; read them with FINAL.
-- Timestamps are nanoseconds since the epoch (Int64), with a DateTime64 view column for SQL.

CREATE TABLE IF NOT EXISTS jobs
(
    job         LowCardinality(String),
    host        LowCardinality(String),
    world_size  UInt32,
    cmd         String,
    tags        Map(LowCardinality(String), String),
    started_ns  Int64,
    ended_ns    Int64 DEFAULT 0,
    exit_code   Int32 DEFAULT -1,
    updated_ns  Int64
)
ENGINE = ReplacingMergeTree(updated_ns)
ORDER BY job;

CREATE TABLE IF NOT EXISTS progress
(
    job        LowCardinality(String),
    rank       Int32,
    host       LowCardinality(String),
    ts_ns      Int64 CODEC(Delta, ZSTD),
    seq        UInt64,
    kind       LowCardinality(String),
    step       Int64 DEFAULT -1,
    stream     LowCardinality(String),
    record     String CODEC(ZSTD),
    ts         DateTime64(3) MATERIALIZED fromUnixTimestamp64Nano(ts_ns)
)
ENGINE = ReplacingMergeTree
ORDER BY (job, rank, ts_ns, seq);

CREATE TABLE IF NOT EXISTS host_samples
(
    job          LowCardinality(String),
    rank         Int32,
    host         LowCardinality(String),
    ts_ns        Int64 CODEC(Delta, ZSTD),
    pid          UInt32,
    cpu_s        Float64 CODEC(Gorilla),
    read_bytes   UInt64 CODEC(Delta, ZSTD),
    write_bytes  UInt64 CODEC(Delta, ZSTD),
    rss_bytes    UInt64 CODEC(ZSTD),
    nprocs       UInt32,
    ts           DateTime64(3) MATERIALIZED fromUnixTimestamp64Nano(ts_ns)
)
ENGINE = ReplacingMergeTree
ORDER BY (job, rank, ts_ns);

CREATE TABLE IF NOT EXISTS gpu_samples
(
    job        LowCardinality(String),
    rank       Int32,
    host       LowCardinality(String),
    gpu_uuid   LowCardinality(String),
    ts_ns      Int64 CODEC(Delta, ZSTD),
    metrics    Map(LowCardinality(String), Float64),
    ts         DateTime64(3) MATERIALIZED fromUnixTimestamp64Nano(ts_ns)
)
ENGINE = ReplacingMergeTree
ORDER BY (job, host, gpu_uuid, ts_ns);

CREATE TABLE IF NOT EXISTS step_rank
(
    job               LowCardinality(String),
    step              UInt32,
    rank              Int32,
    host              LowCardinality(String),
    t0_ns             Int64,
    t1_ns             Int64,
    duration_ms       Float64,
    input_ms          Float64,
    transfer_ms       Float64,
    compute_ms        Float64,
    communication_ms  Float64,
    checkpoint_ms     Float64,
    idle_ms           Float64,
    comm_wait_ms      Float64,
    arrival_ns        Int64,
    source            LowCardinality(String),
    inserted_ns       Int64
)
ENGINE = ReplacingMergeTree(inserted_ns)
ORDER BY (job, step, rank);

CREATE TABLE IF NOT EXISTS steps
(
    job               LowCardinality(String),
    step              UInt32,
    ts_ns             Int64,
    rank_count        UInt32,
    duration_ms       Float64,
    baseline_ms       Float64,
    slow              Bool,
    cause             LowCardinality(String),
    culprit_rank      Int32,
    excess_ms         Float64,
    skew_ms           Float64,
    confidence        Float32,
    phase             LowCardinality(String),
    input_ms          Float64,
    transfer_ms       Float64,
    compute_ms        Float64,
    communication_ms  Float64,
    checkpoint_ms     Float64,
    idle_ms           Float64,
    inserted_ns       Int64
)
ENGINE = ReplacingMergeTree(inserted_ns)
ORDER BY (job, step);

CREATE TABLE IF NOT EXISTS alerts
(
    job           LowCardinality(String),
    step          UInt32,
    ts_ns         Int64,
    cause         LowCardinality(String),
    culprit_rank  Int32,
    excess_ms     Float64,
    message       String,
    inserted_ns   Int64
)
ENGINE = ReplacingMergeTree(inserted_ns)
ORDER BY (job, step);
