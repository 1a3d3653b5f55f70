-- Question: How often did fp16's loss scaler skip steps, in which jobs, and how low did the scale fall?
-- Param: tags Map(String, String) = {} — only jobs with all these tags
-- Param: since_days UInt32 = 0 — only the last N days (0: all)
-- Reads the events table: each `loss_scale_overflow` record is a step whose update the scaler
-- threw away (parsers/overflow.py).  A few at a run's start are the scaler finding its level;
-- many later, or a scale falling toward its minimum, say the loss is diverging.  Where every
-- rank prints its own overflow (DeepSpeed's fused optimizer), `overflows` counts each rank's,
-- and `ranks` says how many printed.  `first_step` is the first a record could name (those before
-- a job's first printed step name none).
SELECT job,
       count() AS overflows,
       uniqExact(rank) AS ranks,
       minIf(step, step >= 0) AS first_step,
       max(step) AS last_step,
       min(ts) AS first_at,
       max(ts) AS last_at,
       minIf(JSONExtractFloat(record, 'new_loss_scale'), JSONHas(record, 'new_loss_scale')) AS lowest_scale
FROM events FINAL
WHERE kind = 'error' AND JSONExtractString(record, 'error') = 'loss_scale_overflow'
  AND (length(mapKeys({tags:Map(String, String)})) = 0
       OR job IN (SELECT job FROM jobs FINAL
                  WHERE arrayAll((k, v) -> tags[k] = v, mapKeys({tags:Map(String, String)}),
                                 mapValues({tags:Map(String, String)}))))
  AND ({since_days:UInt32} = 0 OR ts >= now('UTC') - toIntervalDay({since_days:UInt32}))
GROUP BY job
ORDER BY overflows DESC, job
