-- audit_text is written after commit, in batches, not by the transaction
-- that appends the row: each small write of the index in the writer's
-- transactions (a segment a statement, merged as the index grew) made a
-- call cost more CPU the bigger the ledger.
--
-- audit_text_mark holds the highest seq the index holds: every audit row
-- at or below it is indexed, none above. The writer indexes the rows above
-- it in batches of their own, each moving the mark in the same transaction
-- (audit_text.go); a text search reads the index for the rows at or below
-- it and the few above it one by one. It starts at the newest row, all of
-- which 0017's trigger indexed.
CREATE TABLE audit_text_mark (
	one INTEGER PRIMARY KEY CHECK (one = 1),
	seq INTEGER NOT NULL
);
INSERT INTO audit_text_mark (one, seq) VALUES (1, coalesce((SELECT max(seq) FROM audit), 0));

-- The index's content is the rows at or below the mark, so that FTS5's
-- check against its content, and the delete trigger (a row above the mark
-- was never indexed), see what it holds.
DROP VIEW audit_text_rows;
CREATE VIEW audit_text_rows AS
	SELECT seq, reason || char(31) || evidence || char(31) || detail || char(31) || actor || char(31) || run_id AS body
	FROM audit WHERE seq <= (SELECT seq FROM audit_text_mark);

-- The writer's rows are above the mark and wait for their batch; a row
-- written at or below it (a restored archive's) is indexed at once.
DROP TRIGGER audit_text_insert;
CREATE TRIGGER audit_text_insert AFTER INSERT ON audit WHEN new.seq <= (SELECT seq FROM audit_text_mark) BEGIN
	INSERT INTO audit_text (rowid, body) SELECT seq, body FROM audit_text_rows WHERE seq = new.seq;
END;
