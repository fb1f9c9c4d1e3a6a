-- What stays in the ledger of a tenant's runs (of one budget period) that
-- were archived with one month, in one part (one transaction of a few
-- thousand runs): the figures Verify adds to the runs that remain, and the
-- hash `verify --archive` checks the file against. The audit row at
-- audit_seq (kind 'archive') records the same summary, so that an edited
-- summary no longer matches the append-only log.
CREATE TABLE archive_summaries (
	month         text NOT NULL,
	part          bigint NOT NULL CHECK (part >= 0),
	tenant_id     text NOT NULL,
	period        text NOT NULL,
	runs          bigint NOT NULL CHECK (runs > 0),
	rows          bigint NOT NULL CHECK (rows >= 0),
	spent_units   bigint NOT NULL CHECK (spent_units >= 0),
	spent_micros  bigint NOT NULL CHECK (spent_micros >= 0),
	net_units     bigint NOT NULL,
	settled_units bigint NOT NULL,
	first_seq     bigint NOT NULL,
	last_seq      bigint NOT NULL,
	hash          text NOT NULL,
	file          text NOT NULL,
	audit_seq     bigint NOT NULL,
	PRIMARY KEY (month, part, tenant_id, period)
);

-- A guarded model's day's usage that left with archived runs, which
-- Verify adds to the runs that remain.
CREATE TABLE archive_quota_days (
	month       text NOT NULL,
	upstream    text NOT NULL,
	model       text NOT NULL,
	day         text NOT NULL,
	usage_units bigint NOT NULL CHECK (usage_units >= 0),
	PRIMARY KEY (month, upstream, model, day)
);

-- Audit rows stay append-only but for two things: a reject row counting
-- one more refusal, and the archive's transaction deleting the rows of the
-- runs it moved into a file — which it says by setting quotagate.archive
-- for itself alone (SET LOCAL), so that no other statement deletes by
-- mistake.
CREATE OR REPLACE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'DELETE' AND current_setting('quotagate.archive', true) = 'on' THEN
		RETURN OLD;
	END IF;
	IF TG_OP = 'UPDATE' AND OLD.kind = 'reject' AND NEW.count = OLD.count + 1 AND NEW.last_at >= OLD.last_at
		AND (NEW.seq, NEW.at, NEW.kind, NEW.tenant_id, NEW.run_id, NEW.actor, NEW.reason, NEW.evidence, NEW.units,
			NEW.available_before, NEW.available_after, NEW.detail, NEW.balance, NEW.instance)
		IS NOT DISTINCT FROM (OLD.seq, OLD.at, OLD.kind, OLD.tenant_id, OLD.run_id, OLD.actor, OLD.reason, OLD.evidence,
			OLD.units, OLD.available_before, OLD.available_after, OLD.detail, OLD.balance, OLD.instance) THEN
		RETURN NEW;
	END IF;
	RAISE EXCEPTION 'audit is append-only';
END $$;
