-- Refusals are audited but bounded, so that a flood of them cannot fill
-- the disk (3,000 refusals wrote 4.4 MB), as in the SQLite
-- ledger's 0003: repeated refusals of one tenant with one code within a
-- RefusalInterval share one row with their count and first/last time.
ALTER TABLE audit ADD COLUMN count bigint NOT NULL DEFAULT 1 CHECK (count >= 1);
ALTER TABLE audit ADD COLUMN last_at bigint NOT NULL DEFAULT 0;
ALTER TABLE audit DISABLE TRIGGER audit_no_update;
UPDATE audit SET last_at = at;
ALTER TABLE audit ENABLE TRIGGER audit_no_update;
CREATE INDEX audit_refusal ON audit (tenant_id, reason, at) WHERE kind = 'reject';
-- Still append-only, but for one thing: a reject row counting one more
-- refusal (count + 1, a later last_at, everything else as it was).
CREATE OR REPLACE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'UPDATE' AND OLD.kind = 'reject' AND NEW.count = OLD.count + 1 AND NEW.last_at >= OLD.last_at
		AND (NEW.seq, NEW.at, NEW.kind, NEW.tenant_id, NEW.run_id, NEW.actor, NEW.reason, NEW.evidence, NEW.units,
			NEW.available_before, NEW.available_after, NEW.detail, NEW.balance, NEW.instance)
		IS NOT DISTINCT FROM (OLD.seq, OLD.at, OLD.kind, OLD.tenant_id, OLD.run_id, OLD.actor, OLD.reason, OLD.evidence,
			OLD.units, OLD.available_before, OLD.available_after, OLD.detail, OLD.balance, OLD.instance) THEN
		RETURN NEW;
	END IF;
	RAISE EXCEPTION 'audit is append-only';
END $$;
