-- Question: Which rank's failure brought the job down: across every node's torchrun report (or srun's first failed task), whose error was its own and whose a victim's of another rank's failure?
-- Param: job String — the job
-- Each node's torchrun reports the first of its own ranks that failed (`child_failed`, `first`):
-- a job of N nodes has N reports, and all but one name a rank that failed only because another
-- did.  The rank's own error (its traceback's exception, or the report's under torch's @record)
-- tells them apart: a victim's says that a peer closed its connection, timed out or aborted the
-- communicator (`victim`, see parsers/victims.py).  The culprit comes first: errors of their own
-- before victims', then by the time the report gives (to the second), then by rank.  Where every
-- report's rank is a victim, no rank raised: the job hung (`hang_progress` says who was behind).
-- A job that srun started without torchrun has no report: srun's first failed task is read as
-- the rank (srun's task is the job's rank where srun starts each rank itself), at its line's time.
-- Reads the events table (kept for the derived retention, see migration 003).
WITH
    failures AS (
        SELECT rank,
               ts,
               JSONExtractString(record, 'launcher') AS launcher,
               JSONExtract(record, 'tasks', 'Array(Int64)') AS tasks,
               JSONExtractString(record, 'host') AS host,
               JSONExtractString(record, 'at') AS at,
               JSONExtractInt(record, 'exitcode') AS exitcode,
               JSONExtractString(record, 'signal') AS signal,
               JSONExtractString(record, 'exception') AS reported,
               JSONExtractBool(record, 'victim') AS reported_victim,
               length(JSONExtractArrayRaw(record, 'failed_ranks')) AS node_failed_ranks
        FROM events FINAL
        WHERE job = {job:String} AND kind = 'error'
          AND JSONExtractString(record, 'error') = 'child_failed' AND JSONExtractBool(record, 'first')
    ),
    reports AS (
        SELECT if(launcher = 'srun', toInt32(tasks[1]), rank) AS rank,
               host,
               if(at = '', formatDateTime(ts, '%Y-%m-%d_%H:%i:%S'), at) AS failed_at,
               exitcode, signal, reported, reported_victim,
               if(launcher = 'srun', 1, node_failed_ranks) AS node_failed_ranks
        FROM failures
        WHERE launcher != 'srun'
           OR (length(tasks) = 1 AND (SELECT countIf(launcher != 'srun') FROM failures) = 0)
    ),
    raised AS (
        SELECT rank,
               argMin(if(JSONExtractString(record, 'exception') = '', JSONExtractString(record, 'message'),
                         concat(JSONExtractString(record, 'exception'), ': ', JSONExtractString(record, 'message'))),
                      (ts_ns, seq)) AS error,
               max(JSONExtractBool(record, 'victim')) AS victim
        FROM events FINAL
        WHERE job = {job:String} AND kind = 'error'
          AND (JSONExtractBool(record, 'traceback') OR JSONExtractBool(record, 'victim'))
          AND NOT endsWith(JSONExtractString(record, 'exception'), 'ChildFailedError')
        GROUP BY rank
    )
SELECT reports.rank AS rank,
       host,
       failed_at,
       reported_victim OR raised.victim AS victim,
       exitcode,
       signal,
       node_failed_ranks,
       if(reported != '', reported, raised.error) AS error
FROM reports
LEFT JOIN raised ON raised.rank = reports.rank
ORDER BY victim, failed_at, rank
