-- Every read the dashboard makes costs what it returns, not what the ledger
-- holds.
--
-- The actor filter: nearly every row is a tenant's own call (actor
-- tenant:<its tenant id>), which the tenant's index serves; the rest (the
-- operator's changes, quotagate's own work, rows of older versions with a
-- bare actor) are few, and only they are indexed by actor.
CREATE INDEX audit_actor ON audit (actor) WHERE actor != 'tenant:' || tenant_id;

-- An index entry ends in its rowid, which in audit is seq: audit_tenant
-- (tenant_id, seq) held every seq twice for the same order.
DROP INDEX audit_tenant;
CREATE INDEX audit_tenant ON audit (tenant_id);

-- The Overview's spend chart: settled units and cost per hour of admission
-- (Unix seconds / 3600, so that any zone's days are sums of whole hours),
-- tenant and model, kept in step with runs by every transition that
-- spends, in its transaction. A chart reads a month of hours instead of
-- the month's runs.
CREATE TABLE spend_hours (
	hour        INTEGER NOT NULL,
	tenant_id   TEXT NOT NULL,
	upstream    TEXT NOT NULL,
	model       TEXT NOT NULL,
	spent_units INTEGER NOT NULL DEFAULT 0 CHECK (spent_units >= 0),
	cost_micros INTEGER NOT NULL DEFAULT 0 CHECK (cost_micros >= 0),
	PRIMARY KEY (hour, tenant_id, upstream, model)
) STRICT, WITHOUT ROWID;
INSERT INTO spend_hours (hour, tenant_id, upstream, model, spent_units, cost_micros)
	SELECT created_at / 3600000000000, tenant_id, upstream, model, sum(spent_units), sum(cost_micros)
	FROM runs GROUP BY 1, 2, 3, 4 HAVING sum(spent_units) > 0 OR sum(cost_micros) > 0;
