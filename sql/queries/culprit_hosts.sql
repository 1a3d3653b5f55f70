-- Question: Which hosts keep producing stragglers (the culprits of slow steps)?
-- Param: since_days UInt32 = 0 — only the last N days (0: all)
-- Param: limit UInt32 = 20 — how many hosts
-- Reads the host_day_rollup.
SELECT host,
       sum(culprit_steps) AS culprit_step_count,
       uniqMerge(jobs) AS jobs_on_host,
       sum(culprit_excess_ms) AS culprit_excess_ms,
       sumMap(culprit_by_cause) AS culprit_by_cause,
       culprit_step_count / greatest(sum(rank_steps), 1) AS culprit_share_of_rank_steps
FROM host_day_rollup
WHERE {since_days:UInt32} = 0 OR day >= today() - {since_days:UInt32}
GROUP BY host
HAVING culprit_step_count > 0
ORDER BY culprit_step_count DESC, host
LIMIT {limit:UInt32}
