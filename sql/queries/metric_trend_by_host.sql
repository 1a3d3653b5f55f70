-- Question: How does a metric compare host by host (every job's ranks on that host)?
-- Param: metric String = 'step_ms' — step_ms | step_p50_ms | step_p90_ms | slow_share | gpu_util | checkpoint_share | lane:input | lane:transfer | lane:compute | lane:communication | lane:checkpoint | lane:idle
-- Param: since_days UInt32 = 0 — only the last N days (0: all)
-- Reads the host_day_rollup, which has no job key, so it cannot filter by tag.  step_ms and
-- lane:* are mean ms per rank-step on the host; slow_share is the share of the host's
-- rank-steps that were the culprit of a slow step; gpu_util the median GPU utilisation (%).
SELECT host,
       sum(rank_steps) AS rank_step_count,
       sum(culprit_steps) AS culprit_step_count,
       multiIf({metric:String} = 'step_ms', sum(duration_ms_sum) / rank_step_count,
               {metric:String} = 'step_p50_ms', quantilesTDigestMerge(0.5, 0.9, 0.99)(rank_step_ms_q)[1],
               {metric:String} = 'step_p90_ms', quantilesTDigestMerge(0.5, 0.9, 0.99)(rank_step_ms_q)[2],
               {metric:String} = 'slow_share', culprit_step_count / rank_step_count,
               {metric:String} = 'gpu_util', quantilesTDigestMerge(0.5, 0.9, 0.99)(gpu_util_q)[1],
               {metric:String} = 'checkpoint_share', sum(checkpoint_ms_sum) / sum(duration_ms_sum),
               startsWith({metric:String}, 'lane:'),
               map('input', sum(input_ms_sum), 'transfer', sum(transfer_ms_sum),
                   'compute', sum(compute_ms_sum), 'communication', sum(communication_ms_sum),
                   'checkpoint', sum(checkpoint_ms_sum), 'idle', sum(idle_ms_sum))
                   [substring({metric:String}, 6)] / rank_step_count,
               nan) AS value
FROM host_day_rollup
WHERE {since_days:UInt32} = 0 OR day >= today() - {since_days:UInt32}
GROUP BY host
ORDER BY host
