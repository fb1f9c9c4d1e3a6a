-- Where the last clean verify left the books (ledger.Checkpoint as JSON):
-- the next verify replays only the audit rows after seq, and adds up only
-- the runs admitted after it. seq is a horizon, not merely the last row
-- read: no transaction could still commit an audit row at or below it when
-- verify read it. digest is SHA-256 over checkpoint as written, so that a
-- checkpoint edited afterwards is reported rather than trusted. Archiving
-- or restoring a month after seq sets a checkpoint aside (its chains change
-- under it), and the next verify replays everything.
CREATE TABLE verify_checkpoints (
	seq        bigint PRIMARY KEY,
	at         bigint NOT NULL,
	checkpoint text NOT NULL,
	digest     text NOT NULL
);
