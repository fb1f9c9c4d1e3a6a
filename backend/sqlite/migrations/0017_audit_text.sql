-- The audit page's text filter through an index: a text that matches
-- rarely was found by reading the whole trail, newest first.
--
-- audit_text is an FTS5 trigram index over each row's searched text (the
-- fields ledger.AuditMatches reads, joined by a unit separator, as
-- PostgreSQL's audit_text), kept by triggers in the transaction that
-- writes or deletes the row, whatever writes it (the writer, archive,
-- restore). Its content is audit itself, through audit_text_rows, so the
-- index stores no text (detail=none: trigrams and rowids only; columnsize=0:
-- no sizes, which only ranking reads) and one expression says what a row's
-- text is: the triggers read it from the view.
-- The index finds every row holding the text's trigrams, in any order;
-- the query keeps those that hold the text.
CREATE VIEW audit_text_rows AS
	SELECT seq, reason || char(31) || evidence || char(31) || detail || char(31) || actor || char(31) || run_id AS body
	FROM audit;
CREATE VIRTUAL TABLE audit_text USING fts5(body, content='audit_text_rows', content_rowid='seq',
	tokenize='trigram', detail='none', columnsize=0);
INSERT INTO audit_text (audit_text) VALUES ('rebuild');
-- Every INSERT of the writer's transaction makes FTS5 write a segment, and
-- with the default automerge (4 segments a level) merging them cost each
-- call more as the index grew: admission CPU 1.75-1.84x of an empty
-- ledger's at 800,000 runs, 0.98-1.18x with 16 (fewer, larger merges).
INSERT INTO audit_text (audit_text, rank) VALUES ('automerge', 16);

-- A row's text never changes (audit_no_update lets a refusal's count and
-- last_at move, nothing else), so inserts and deletes are all it needs.
CREATE TRIGGER audit_text_insert AFTER INSERT ON audit BEGIN
	INSERT INTO audit_text (rowid, body) SELECT seq, body FROM audit_text_rows WHERE seq = new.seq;
END;
CREATE TRIGGER audit_text_delete BEFORE DELETE ON audit BEGIN
	INSERT INTO audit_text (audit_text, rowid, body) SELECT 'delete', seq, body FROM audit_text_rows WHERE seq = old.seq;
END;
