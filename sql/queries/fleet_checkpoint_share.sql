-- Question: How much of the fleet's step time goes to checkpoints?
-- Param: tags Map(String, String) = {} — only jobs with all these tags
-- Param: since_days UInt32 = 0 — only the last N days (0: all)
-- Reads the job_day_rollup.
SELECT uniqExact(job) AS job_count,
       sum(steps) AS step_count,
       sum(duration_ms_sum) AS step_ms,
       sum(checkpoint_ms_sum) AS checkpoint_ms,
       checkpoint_ms / step_ms AS checkpoint_share
FROM job_day_rollup
WHERE (length(mapKeys({tags:Map(String, String)})) = 0
       OR job IN (SELECT job FROM jobs FINAL
                  WHERE arrayAll((k, v) -> tags[k] = v, mapKeys({tags:Map(String, String)}),
                                 mapValues({tags:Map(String, String)}))))
  AND ({since_days:UInt32} = 0 OR day >= toStartOfDay(now('UTC')) - toIntervalDay({since_days:UInt32}))
