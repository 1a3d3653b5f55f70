-- Question: When a job's collectives hung, how far had each rank got, and which ranks were behind?
-- Param: job String — the job
-- Reads the error records of PyTorch's NCCL watchdog in the events table (kept for the derived
-- retention, see migration 003): `nccl_dump`, which every rank the flight recorder's dump signal reaches
-- prints, and `nccl_watchdog`, a rank's own timeout.  Within a process group, a rank that
-- enqueued fewer collectives than the others never reached the one they wait in (`behind`: the
-- culprit, stuck on the host); one that enqueued as many but completed fewer is stuck on its GPU
-- or its link (`behind_completed`).  The ranks that timed out are the victims.
SELECT rank,
       pg_id,
       max(enqueued) AS last_enqueued,
       max(completed) AS last_completed,
       max(last_enqueued) OVER (PARTITION BY pg_id) - last_enqueued AS behind,
       max(last_completed) OVER (PARTITION BY pg_id) - last_completed AS behind_completed,
       countIf(error = 'nccl_watchdog') > 0 AS timed_out
FROM (
    SELECT rank,
           JSONExtractInt(record, 'pg_id') AS pg_id,
           JSONExtractInt(record, 'last_enqueued') AS enqueued,
           JSONExtractInt(record, 'last_completed') AS completed,
           JSONExtractString(record, 'error') AS error
    FROM events FINAL
    WHERE job = {job:String} AND kind = 'error'
      AND JSONExtractString(record, 'error') IN ('nccl_dump', 'nccl_watchdog')
)
GROUP BY rank, pg_id
ORDER BY behind DESC, behind_completed DESC, pg_id, rank
