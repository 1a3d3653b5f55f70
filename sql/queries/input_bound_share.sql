-- Question: How input-bound is each job (share of step time waiting for data)?
-- Param: tags Map(String, String) = {} — only jobs with all these tags
-- Param: since_days UInt32 = 0 — only the last N days (0: all)
-- Reads the job_day_rollup.
SELECT job,
       sum(steps) AS step_count,
       sum(input_ms_sum) / sum(duration_ms_sum) AS input_share,
       sum(input_ms_sum) / step_count AS input_ms_per_step,
       sumMap(slow_by_cause)['input'] AS input_slow_steps,
       input_slow_steps / step_count AS input_slow_share
FROM job_day_rollup
WHERE (length(mapKeys({tags:Map(String, String)})) = 0
       OR job IN (SELECT job FROM jobs FINAL
                  WHERE arrayAll((k, v) -> tags[k] = v, mapKeys({tags:Map(String, String)}),
                                 mapValues({tags:Map(String, String)}))))
  AND ({since_days:UInt32} = 0 OR day >= toStartOfDay(now('UTC')) - toIntervalDay({since_days:UInt32}))
GROUP BY job
HAVING step_count > 0
ORDER BY input_share DESC, job
