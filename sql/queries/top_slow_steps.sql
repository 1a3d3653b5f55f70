-- Question: What were the slowest steps of a job, and what caused them?
-- Param: job String — the job
-- Param: limit UInt32 = 20 — how many steps to list
-- Reads steps FINAL, so a step the sink wrote twice counts once.
SELECT step,
       duration_ms,
       baseline_ms,
       excess_ms,
       cause,
       culprit_rank,
       culprit_host,
       skew_ms,
       confidence
FROM steps FINAL
WHERE job = {job:String} AND slow
ORDER BY excess_ms DESC, step
LIMIT {limit:UInt32}
