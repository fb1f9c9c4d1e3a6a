-- A call may fail over from one target of its model's route to the next
-- before its first byte: each attempt is a run. attempts counts the call's
-- attempts up to this run (1 for a first attempt, and for every older run);
-- failover_of names the attempt before it, whose hold was released first.
ALTER TABLE runs ADD COLUMN attempts integer NOT NULL DEFAULT 1 CHECK (attempts >= 1),
	ADD COLUMN failover_of text NOT NULL DEFAULT '';
