-- Fencing of gateways cut off from the ledger past their lease. Every lease
-- a gateway takes gets a fresh epoch from one sequence; every run records
-- the epoch of the lease it was admitted under. Another gateway that finds
-- a lease expired deletes its row, so a run whose epoch has no instances row
-- is an orphan (ended interrupted by whoever finds it), and the relaying
-- gateway's own writes for that run are refused in the statement that
-- would make them. 0 on runs admitted before epochs: they are judged by
-- their instance name, as before.
CREATE SEQUENCE lease_epochs;
ALTER TABLE instances ADD COLUMN epoch bigint NOT NULL DEFAULT nextval('lease_epochs');
CREATE UNIQUE INDEX instances_epoch ON instances (epoch);
ALTER TABLE runs ADD COLUMN lease_epoch bigint NOT NULL DEFAULT 0;
CREATE INDEX runs_open_epoch ON runs (lease_epoch) WHERE status IN ('queued', 'active');
