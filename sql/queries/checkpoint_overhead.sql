-- Question: What does checkpointing cost each job, amortised per step?
-- Param: tags Map(String, String) = {} — only jobs with all these tags
-- Param: since_days UInt32 = 0 — only the last N days (0: all)
-- Reads the job_day_rollup.
SELECT job,
       sum(steps) AS step_count,
       sum(checkpoint_steps) AS checkpoint_step_count,
       sum(checkpoint_ms_sum) AS checkpoint_ms,
       checkpoint_ms / step_count AS amortised_ms_per_step,
       checkpoint_ms / sum(duration_ms_sum) AS share_of_step_time
FROM job_day_rollup
WHERE (length(mapKeys({tags:Map(String, String)})) = 0
       OR job IN (SELECT job FROM jobs FINAL
                  WHERE arrayAll((k, v) -> tags[k] = v, mapKeys({tags:Map(String, String)}),
                                 mapValues({tags:Map(String, String)}))))
  AND ({since_days:UInt32} = 0 OR day >= toStartOfDay(now('UTC')) - toIntervalDay({since_days:UInt32}))
GROUP BY job
HAVING step_count > 0
ORDER BY amortised_ms_per_step DESC, job
