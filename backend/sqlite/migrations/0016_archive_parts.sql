-- A month leaves the ledger in parts, one writer transaction each (a few
-- thousand runs), so that admissions never wait for a whole month: the
-- summaries are kept per part. A month archived whole before is part 0.
CREATE TABLE archive_parts (
	month        TEXT NOT NULL,
	part         INTEGER NOT NULL CHECK (part >= 0),
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
	PRIMARY KEY (month, part, tenant_id, period)
) STRICT, WITHOUT ROWID;
INSERT INTO archive_parts (month, part, tenant_id, period, runs, rows, spent_units, spent_micros, net_units,
	settled_units, first_seq, last_seq, hash, file, audit_seq)
SELECT month, 0, tenant_id, period, runs, rows, spent_units, spent_micros, net_units,
	settled_units, first_seq, last_seq, hash, file, audit_seq FROM archive_summaries;
DROP TABLE archive_summaries;
ALTER TABLE archive_parts RENAME TO archive_summaries;
