-- Where the last clean verify left each chain of audit rows (JSON of
-- ledger.Checkpoint's chains): the next verify replays only the rows after
-- seq. Archiving or restoring a month deletes them (the chains change
-- under them), and the next verify replays everything.
CREATE TABLE verify_checkpoints (
	seq    INTEGER PRIMARY KEY,
	at     INTEGER NOT NULL,
	chains TEXT NOT NULL
) STRICT;

-- What stays in the ledger of a tenant's runs (of one budget period) that
-- were archived with one month: the figures Verify adds to the runs that
-- remain, and the hash `verify --archive` checks the file against. The
-- audit row at audit_seq (kind 'archive') records the same summary, so that
-- an edited summary no longer matches the append-only log.
CREATE TABLE archive_summaries (
	month        TEXT NOT NULL,
	tenant_id    TEXT NOT NULL,
	period       TEXT NOT NULL,
	runs         INTEGER NOT NULL CHECK (runs > 0),
	rows         INTEGER NOT NULL CHECK (rows >= 0),
	spent_units  INTEGER NOT NULL CHECK (spent_units >= 0),
	spent_micros INTEGER NOT NULL CHECK (spent_micros >= 0),
	net_units    INTEGER NOT NULL,
	settled_units INTEGER NOT NULL,
	first_seq    INTEGER NOT NULL,
	last_seq     INTEGER NOT NULL,
	hash         TEXT NOT NULL,
	file         TEXT NOT NULL,
	audit_seq    INTEGER NOT NULL,
	PRIMARY KEY (month, tenant_id, period)
) STRICT, WITHOUT ROWID;

-- A guarded model's day's usage that left with archived runs, which
-- Verify adds to the runs that remain.
CREATE TABLE archive_quota_days (
	month       TEXT NOT NULL,
	upstream    TEXT NOT NULL,
	model       TEXT NOT NULL,
	day         TEXT NOT NULL,
	usage_units INTEGER NOT NULL CHECK (usage_units >= 0),
	PRIMARY KEY (month, upstream, model, day)
) STRICT, WITHOUT ROWID;

-- Audit rows stay append-only but for one thing: the archive transaction
-- deletes the rows of the runs it moved into a file, while (and only
-- while) it holds the one row of archive_unlock; it empties it before it
-- commits.
CREATE TABLE archive_unlock (month TEXT PRIMARY KEY) STRICT, WITHOUT ROWID;
DROP TRIGGER audit_no_delete;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
WHEN NOT EXISTS (SELECT 1 FROM archive_unlock)
BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
