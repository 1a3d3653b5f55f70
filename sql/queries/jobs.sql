-- Question: Which jobs ran, with what, where, and how did they go?
-- Param: tags Map(String, String) = {} — only jobs with all these tags
-- Param: since_days UInt32 = 0 — only jobs started in the last N days (0: all)
-- Param: limit UInt32 = 100 — how many jobs, newest first
-- Reads jobs FINAL (the newest row per job) and the job_day_rollup for the step summary.
SELECT j.job AS job,
       j.framework AS framework,
       j.world_size AS world_size,
       j.hosts AS hosts,
       j.scheduler_ids AS scheduler_ids,
       j.started_ns AS started_ns,
       j.ended_ns AS ended_ns,
       j.exit_code AS exit_code,
       j.tags AS tags,
       j.cmd AS cmd,
       r.step_count AS step_count,
       r.step_ms AS step_ms,
       r.slow_share AS slow_share
FROM jobs AS j FINAL
LEFT JOIN
(
    SELECT job,
           sum(steps) AS step_count,
           sum(duration_ms_sum) / step_count AS step_ms,
           sum(slow_steps) / step_count AS slow_share
    FROM job_day_rollup
    GROUP BY job
) AS r ON r.job = j.job
WHERE arrayAll((k, v) -> j.tags[k] = v, mapKeys({tags:Map(String, String)}),
               mapValues({tags:Map(String, String)}))
  AND ({since_days:UInt32} = 0
       OR j.started_ns >= toUnixTimestamp64Nano(now64(9, 'UTC') - toIntervalDay({since_days:UInt32})))
ORDER BY j.started_ns DESC, j.job
LIMIT {limit:UInt32}
