-- Question: What changed between two jobs, lane by lane (the regression finder)?
-- Param: job_a String — the reference job
-- Param: job_b String — the job to compare with it
-- Reads the job_day_rollup.  One row per lane (and `step` for the whole step): mean ms per
-- step in each job, the difference and the relative change.  The lane with the largest
-- |delta_ms| is the one that changed.
SELECT lane,
       a AS a_ms_per_step,
       b AS b_ms_per_step,
       b - a AS delta_ms,
       if(a > 0, (b - a) / a * 100, nan) AS delta_pct,
       steps_a,
       steps_b
FROM
(
    SELECT ['step', 'input', 'transfer', 'compute', 'communication', 'checkpoint', 'idle']
               AS lanes,
           sumIf(steps, job = {job_a:String}) AS steps_a,
           sumIf(steps, job = {job_b:String}) AS steps_b,
           arrayMap(x -> x / steps_a,
                    [sumIf(duration_ms_sum, job = {job_a:String}),
                     sumIf(input_ms_sum, job = {job_a:String}),
                     sumIf(transfer_ms_sum, job = {job_a:String}),
                     sumIf(compute_ms_sum, job = {job_a:String}),
                     sumIf(communication_ms_sum, job = {job_a:String}),
                     sumIf(checkpoint_ms_sum, job = {job_a:String}),
                     sumIf(idle_ms_sum, job = {job_a:String})]) AS per_step_a,
           arrayMap(x -> x / steps_b,
                    [sumIf(duration_ms_sum, job = {job_b:String}),
                     sumIf(input_ms_sum, job = {job_b:String}),
                     sumIf(transfer_ms_sum, job = {job_b:String}),
                     sumIf(compute_ms_sum, job = {job_b:String}),
                     sumIf(communication_ms_sum, job = {job_b:String}),
                     sumIf(checkpoint_ms_sum, job = {job_b:String}),
                     sumIf(idle_ms_sum, job = {job_b:String})]) AS per_step_b
    FROM job_day_rollup
    WHERE job IN ({job_a:String}, {job_b:String})
)
ARRAY JOIN lanes AS lane, per_step_a AS a, per_step_b AS b
