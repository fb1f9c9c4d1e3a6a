-- Every index is written on every admission and settlement, which the
-- writer's CPU per call pays for: only the indexes a query uses are kept. runs_open served one query, the
-- recovery at start, which now reads the held runs through runs_holding
-- (a run left open still holds: its usage is pending). audit_run served
-- only Verify's joins of runs to their audit rows, for which SQLite builds
-- an automatic index when it runs.
DROP INDEX runs_open;
DROP INDEX audit_run;
