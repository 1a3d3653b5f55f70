-- Question: Which steps of a job had this rank as their culprit?
-- Param: job String — the job
-- Param: rank Int32 — the rank
-- Reads steps FINAL.
SELECT step, duration_ms, excess_ms, cause, culprit_host, skew_ms
FROM steps FINAL
WHERE job = {job:String} AND slow AND culprit_rank = {rank:Int32}
ORDER BY step
