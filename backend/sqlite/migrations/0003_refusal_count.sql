-- Refusals are audited but bounded, so that a flood of them cannot fill
-- the disk (3,000 refusals wrote 4.4 MB): repeated refusals of
-- one tenant with one code within a RefusalInterval share one row, whose
-- count says how many there were and whose at/last_at are the first and
-- the last. Every other row (admissions, every change of money) has count 1.
ALTER TABLE audit ADD COLUMN count INTEGER NOT NULL DEFAULT 1 CHECK (count >= 1);
ALTER TABLE audit ADD COLUMN last_at INTEGER NOT NULL DEFAULT 0;
DROP TRIGGER audit_no_update;
UPDATE audit SET last_at = at;
CREATE INDEX audit_refusal ON audit (tenant_id, reason, at) WHERE kind = 'reject';
-- Still append-only, but for one thing: a reject row counting one more
-- refusal (count + 1, a later last_at, everything else as it was).
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
WHEN NOT (OLD.kind = 'reject' AND NEW.count = OLD.count + 1 AND NEW.last_at >= OLD.last_at
	AND NEW.seq IS OLD.seq AND NEW.at IS OLD.at AND NEW.kind IS OLD.kind AND NEW.tenant_id IS OLD.tenant_id
	AND NEW.run_id IS OLD.run_id AND NEW.actor IS OLD.actor AND NEW.reason IS OLD.reason
	AND NEW.evidence IS OLD.evidence AND NEW.units IS OLD.units AND NEW.available_before IS OLD.available_before
	AND NEW.available_after IS OLD.available_after AND NEW.detail IS OLD.detail AND NEW.balance IS OLD.balance)
BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
