-- Question: How did a job's step time split across the lanes, hour by hour?
-- Param: job String — the job
-- Reads the job_hour_rollup; lanes are ms per step, averaged over the hour.
SELECT hour,
       sum(steps) AS step_count,
       sum(duration_ms_sum) / step_count AS step_ms,
       sum(input_ms_sum) / step_count AS input_ms,
       sum(transfer_ms_sum) / step_count AS transfer_ms,
       sum(compute_ms_sum) / step_count AS compute_ms,
       sum(communication_ms_sum) / step_count AS communication_ms,
       sum(checkpoint_ms_sum) / step_count AS checkpoint_ms,
       sum(idle_ms_sum) / step_count AS idle_ms,
       sum(slow_steps) AS slow_steps
FROM job_hour_rollup
WHERE job = {job:String}
GROUP BY hour
HAVING step_count > 0
ORDER BY hour
