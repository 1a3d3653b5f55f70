-- Question: Which ranks were the culprits of a job's slow steps, and when (rank × step heatmap)?
-- Param: job String — the job
-- Param: bucket_steps UInt32 = 100 — steps per column of the heatmap
-- Reads steps FINAL; one row per (step bucket, culprit rank) that has slow steps.
SELECT intDiv(step - 1, {bucket_steps:UInt32}) * {bucket_steps:UInt32} + 1 AS first_step,
       culprit_rank AS rank,
       any(culprit_host) AS host,
       count() AS slow_steps,
       sum(excess_ms) AS excess_ms
FROM steps FINAL
WHERE job = {job:String} AND slow AND culprit_rank >= 0
GROUP BY first_step, rank
ORDER BY first_step, rank
