-- Question: How does a metric trend day by day, over the jobs that share a tag?
-- Param: metric String = 'step_ms' — step_ms | step_p50_ms | step_p90_ms | slow_share | gpu_util | checkpoint_share | lane:input | lane:transfer | lane:compute | lane:communication | lane:checkpoint | lane:idle
-- Param: tags Map(String, String) = {} — only jobs with all these tags
-- Param: since_days UInt32 = 0 — only the last N days (0: all)
-- Reads the job_day_rollup.  step_ms and lane:* are mean ms per step, slow_share the share of
-- steps that were slow, gpu_util the median GPU utilisation (%) of the samples.
SELECT day,
       uniqExact(job) AS job_count,
       sum(steps) AS step_count,
       multiIf({metric:String} = 'step_ms', sum(duration_ms_sum) / step_count,
               {metric:String} = 'step_p50_ms', quantilesTDigestMerge(0.5, 0.9, 0.99)(step_ms_q)[1],
               {metric:String} = 'step_p90_ms', quantilesTDigestMerge(0.5, 0.9, 0.99)(step_ms_q)[2],
               {metric:String} = 'slow_share', sum(slow_steps) / step_count,
               {metric:String} = 'gpu_util', quantilesTDigestMerge(0.5, 0.9, 0.99)(gpu_util_q)[1],
               {metric:String} = 'checkpoint_share', sum(checkpoint_ms_sum) / sum(duration_ms_sum),
               startsWith({metric:String}, 'lane:'),
               map('input', sum(input_ms_sum), 'transfer', sum(transfer_ms_sum),
                   'compute', sum(compute_ms_sum), 'communication', sum(communication_ms_sum),
                   'checkpoint', sum(checkpoint_ms_sum), 'idle', sum(idle_ms_sum))
                   [substring({metric:String}, 6)] / step_count,
               nan) AS value
FROM job_day_rollup
WHERE (length(mapKeys({tags:Map(String, String)})) = 0
       OR job IN (SELECT job FROM jobs FINAL
                  WHERE arrayAll((k, v) -> tags[k] = v, mapKeys({tags:Map(String, String)}),
                                 mapValues({tags:Map(String, String)}))))
  AND ({since_days:UInt32} = 0 OR day >= toStartOfDay(now('UTC')) - toIntervalDay({since_days:UInt32}))
GROUP BY day
HAVING step_count > 0
ORDER BY day
