-- The ledger, as backend/sqlite/migrations has it: tenants with their
-- denormalised balance row, runs with their holds, guarded models' days, the
-- append-only audit log. Times are Unix nanoseconds (UTC) in bigint.

CREATE TABLE tenants (
	id             text PRIMARY KEY,
	budget_units   bigint NOT NULL CHECK (budget_units >= 0),
	max_concurrent integer NOT NULL CHECK (max_concurrent >= 0),
	allowed_models text NOT NULL DEFAULT '[]', -- JSON array; empty: every model
	per_minute     integer NOT NULL DEFAULT 0,
	per_hour       integer NOT NULL DEFAULT 0,
	-- The balance row, kept in step with runs by every transition so that
	-- admission is one conditional UPDATE; Verify recomputes it from runs.
	spent_units    bigint NOT NULL DEFAULT 0 CHECK (spent_units >= 0),
	held_units     bigint NOT NULL DEFAULT 0 CHECK (held_units >= 0),
	active         integer NOT NULL DEFAULT 0 CHECK (active >= 0),
	created_at     bigint NOT NULL,
	updated_at     bigint NOT NULL,
	-- The backstop of the conditional UPDATE: spent + held ≤ budget.
	CHECK (budget_units - spent_units - held_units >= 0)
);

-- Only hashes; a hash belongs to one tenant.
CREATE TABLE tenant_keys (
	key_hash  text PRIMARY KEY,
	tenant_id text NOT NULL REFERENCES tenants (id)
);
CREATE INDEX tenant_keys_tenant ON tenant_keys (tenant_id);

CREATE TABLE runs (
	id            text PRIMARY KEY,
	seq           bigint GENERATED ALWAYS AS IDENTITY UNIQUE, -- insertion order (SQLite's rowid)
	tenant_id     text NOT NULL REFERENCES tenants (id),
	upstream      text NOT NULL,
	model         text NOT NULL,
	quota_day     text NOT NULL DEFAULT '',
	status        text NOT NULL CHECK (status IN ('queued', 'active', 'completed', 'interrupted', 'cancelled', 'failed')),
	usage         text NOT NULL CHECK (usage IN ('pending', 'trusted', 'unknown', 'reconciled', 'released')),
	reserve_units bigint NOT NULL CHECK (reserve_units >= 0),
	spent_units   bigint NOT NULL DEFAULT 0 CHECK (spent_units >= 0 AND spent_units <= reserve_units),
	held_units    bigint NOT NULL,
	overrun_units bigint NOT NULL DEFAULT 0 CHECK (overrun_units >= 0),
	evidence      text NOT NULL DEFAULT '',
	-- The gateway instance that admitted the run and relays it.
	instance      text NOT NULL DEFAULT '',
	created_at    bigint NOT NULL,
	updated_at    bigint NOT NULL,
	CHECK (held_units = CASE WHEN usage IN ('pending', 'unknown') THEN reserve_units ELSE 0 END),
	CHECK ((usage = 'pending') = (status IN ('queued', 'active')))
);
CREATE INDEX runs_created ON runs (created_at);
CREATE INDEX runs_tenant_created ON runs (tenant_id, created_at);
CREATE INDEX runs_holding ON runs (created_at) WHERE usage IN ('pending', 'unknown');
CREATE INDEX runs_open ON runs (instance, status) WHERE status IN ('queued', 'active');

CREATE TABLE quota_days (
	upstream    text NOT NULL,
	model       text NOT NULL,
	day         text NOT NULL,
	usage_units bigint NOT NULL DEFAULT 0 CHECK (usage_units >= 0),
	held_units  bigint NOT NULL DEFAULT 0 CHECK (held_units >= 0),
	PRIMARY KEY (upstream, model, day)
);

CREATE TABLE usage_minutes (
	upstream text NOT NULL,
	model    text NOT NULL,
	minute   bigint NOT NULL, -- Unix seconds, truncated to the minute
	units    bigint NOT NULL CHECK (units >= 0),
	PRIMARY KEY (upstream, model, minute)
);

CREATE TABLE snapshots (
	id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	upstream      text NOT NULL,
	model         text NOT NULL,
	day           text NOT NULL,
	at            bigint NOT NULL,
	balance_units bigint NOT NULL,
	usage_at_sync bigint NOT NULL,
	limit_units   bigint NOT NULL,
	limit_v6      bigint NOT NULL,
	b0_units      bigint NOT NULL,
	lag_seconds   bigint NOT NULL,
	source        text NOT NULL,
	detail        text NOT NULL DEFAULT ''
);
CREATE INDEX snapshots_model_at ON snapshots (upstream, model, at);

CREATE TABLE audit (
	seq              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	at               bigint NOT NULL,
	kind             text NOT NULL,
	tenant_id        text NOT NULL DEFAULT '',
	run_id           text NOT NULL DEFAULT '',
	actor            text NOT NULL DEFAULT '',
	reason           text NOT NULL DEFAULT '',
	evidence         text NOT NULL DEFAULT '',
	units            bigint NOT NULL DEFAULT 0,
	available_before bigint NOT NULL DEFAULT 0,
	available_after  bigint NOT NULL DEFAULT 0,
	detail           text NOT NULL DEFAULT '',
	-- true when the store wrote available_before/after from the tenant's
	-- balance row, holding its row lock, in the same transaction: such rows
	-- of one tenant are numbered in commit order, and Verify replays them.
	balance          boolean NOT NULL DEFAULT false,
	instance         text NOT NULL DEFAULT ''
);
CREATE INDEX audit_at ON audit (at);
CREATE INDEX audit_tenant ON audit (tenant_id, seq);
CREATE INDEX audit_run ON audit (run_id, kind);

CREATE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'audit is append-only';
END $$;
CREATE TRIGGER audit_no_update BEFORE UPDATE OR DELETE ON audit
	FOR EACH ROW EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
	FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();

-- Gateway instances sharing this ledger: each holds a lease it renews; a
-- lease past its expiry belongs to a dead instance, whose open runs another
-- instance ends interrupted (slots freed, money held).
CREATE TABLE instances (
	name         text PRIMARY KEY,
	addr         text NOT NULL DEFAULT '',
	started_at   bigint NOT NULL,
	heartbeat_at bigint NOT NULL,
	expires_at   bigint NOT NULL
);

-- The tenants and upstreams definitions the gateways sharing this database
-- agreed on: the highest ledger.version any of them brought, its digest and
-- who brought it. A gateway whose definitions differ at the same or a lower
-- version refuses to start.
CREATE TABLE config_version (
	id          boolean PRIMARY KEY DEFAULT true CHECK (id),
	version     bigint NOT NULL,
	fingerprint text NOT NULL,
	instance    text NOT NULL,
	applied_at  bigint NOT NULL
);
-- (instances: token tells this incarnation's lease from a twin's)
ALTER TABLE instances ADD COLUMN token text NOT NULL DEFAULT '';
