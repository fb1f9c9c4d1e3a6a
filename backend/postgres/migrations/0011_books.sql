-- Every read the dashboard makes costs what it returns, not what the ledger
-- holds.
--
-- The audit page's text filter (a case-insensitive substring of a row's
-- reason, evidence, detail, actor or run id) is an ILIKE on those fields
-- joined by a unit separator, which a trigram index of pg_trgm serves. The
-- extension is trusted (PostgreSQL 13 and later), so the database's owner
-- may create it without being a superuser; where it cannot be created (no
-- CREATE right on the database, the contrib package missing) the ledger
-- works without the index, and the filter reads rows in order instead —
-- the notice says so. It goes in public, so that one database shared by
-- several schemas has it once.
DO $$
BEGIN
	CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
EXCEPTION WHEN insufficient_privilege OR undefined_file OR feature_not_supported OR invalid_schema_name THEN
	RAISE NOTICE 'quotagate: pg_trgm could not be created (%); the audit text filter reads rows in order', SQLERRM;
END $$;
DO $$
DECLARE
	ns text;
BEGIN
	SELECT n.nspname INTO ns FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
	IF ns IS NOT NULL THEN
		EXECUTE format('CREATE INDEX audit_text ON audit USING gin ('
			'(reason || chr(31) || evidence || chr(31) || detail || chr(31) || actor || chr(31) || run_id) %I.gin_trgm_ops)', ns);
	END IF;
END $$;

-- The actor filter: nearly every row is a tenant's own call (actor
-- tenant:<its tenant id>), which audit_tenant serves; the rest (the
-- operator's changes, quotagate's own work, rows of older versions with a
-- bare actor) are few, and only they are indexed by actor.
CREATE INDEX audit_actor ON audit (actor, seq) WHERE actor != 'tenant:' || tenant_id;

-- The Overview's spend chart: settled units and cost per hour of admission
-- (Unix seconds / 3600, so that any zone's days are sums of whole hours),
-- tenant and model, kept in step with runs by every transition that
-- spends, in its transaction. A chart reads a month of hours instead of
-- the month's runs.
CREATE TABLE spend_hours (
	hour        bigint NOT NULL,
	tenant_id   text NOT NULL,
	upstream    text NOT NULL,
	model       text NOT NULL,
	spent_units bigint NOT NULL DEFAULT 0 CHECK (spent_units >= 0),
	cost_micros bigint NOT NULL DEFAULT 0 CHECK (cost_micros >= 0),
	PRIMARY KEY (hour, tenant_id, upstream, model)
);
INSERT INTO spend_hours (hour, tenant_id, upstream, model, spent_units, cost_micros)
	SELECT created_at / 3600000000000, tenant_id, upstream, model, sum(spent_units), sum(cost_micros)
	FROM runs GROUP BY 1, 2, 3, 4 HAVING sum(spent_units) > 0 OR sum(cost_micros) > 0;
