-- The ledger: tenants with their denormalised balance row, runs with their
-- holds, the append-only audit log. Times are Unix nanoseconds (UTC).

CREATE TABLE tenants (
	id             TEXT PRIMARY KEY,
	budget_units   INTEGER NOT NULL CHECK (budget_units >= 0),
	max_concurrent INTEGER NOT NULL CHECK (max_concurrent >= 0),
	allowed_models TEXT NOT NULL DEFAULT '[]', -- JSON array; empty: every model
	per_minute     INTEGER NOT NULL DEFAULT 0,
	per_hour       INTEGER NOT NULL DEFAULT 0,
	-- The balance row, kept in step with runs by every transition so that
	-- admission is one conditional UPDATE; Verify recomputes it from runs.
	spent_units    INTEGER NOT NULL DEFAULT 0 CHECK (spent_units >= 0),
	held_units     INTEGER NOT NULL DEFAULT 0 CHECK (held_units >= 0),
	active         INTEGER NOT NULL DEFAULT 0 CHECK (active >= 0),
	created_at     INTEGER NOT NULL,
	updated_at     INTEGER NOT NULL,
	CHECK (budget_units - spent_units - held_units >= 0)
) STRICT;

-- Only hashes: the plaintext key never reaches the ledger. A hash belongs to
-- one tenant, so one key can never authenticate as two tenants.
CREATE TABLE tenant_keys (
	key_hash  TEXT PRIMARY KEY,
	tenant_id TEXT NOT NULL REFERENCES tenants (id)
) STRICT;
CREATE INDEX tenant_keys_tenant ON tenant_keys (tenant_id);

CREATE TABLE runs (
	id            TEXT PRIMARY KEY,
	tenant_id     TEXT NOT NULL REFERENCES tenants (id),
	upstream      TEXT NOT NULL,
	model         TEXT NOT NULL,
	quota_day     TEXT NOT NULL DEFAULT '',
	status        TEXT NOT NULL CHECK (status IN ('queued', 'active', 'completed', 'interrupted', 'cancelled', 'failed')),
	usage         TEXT NOT NULL CHECK (usage IN ('pending', 'trusted', 'unknown', 'reconciled', 'released')),
	reserve_units INTEGER NOT NULL CHECK (reserve_units >= 0),
	spent_units   INTEGER NOT NULL DEFAULT 0 CHECK (spent_units >= 0 AND spent_units <= reserve_units),
	held_units    INTEGER NOT NULL,
	evidence      TEXT NOT NULL DEFAULT '',
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL,
	-- A run holds its whole reserve exactly while its usage is pending or unknown.
	CHECK (held_units = CASE WHEN usage IN ('pending', 'unknown') THEN reserve_units ELSE 0 END),
	-- Pending usage only while the run is still queued or active.
	CHECK ((usage = 'pending') = (status IN ('queued', 'active')))
) STRICT;
CREATE INDEX runs_created ON runs (created_at);
CREATE INDEX runs_tenant_created ON runs (tenant_id, created_at);
CREATE INDEX runs_holding ON runs (created_at) WHERE usage IN ('pending', 'unknown');
CREATE INDEX runs_open ON runs (status) WHERE status IN ('queued', 'active');

-- A guarded model's day: settled usage and in-flight holds, kept in step with
-- runs (quota_day != '') so that the quota check is O(1) too.
CREATE TABLE quota_days (
	upstream    TEXT NOT NULL,
	model       TEXT NOT NULL,
	day         TEXT NOT NULL,
	usage_units INTEGER NOT NULL DEFAULT 0 CHECK (usage_units >= 0),
	held_units  INTEGER NOT NULL DEFAULT 0 CHECK (held_units >= 0),
	PRIMARY KEY (upstream, model, day)
) STRICT, WITHOUT ROWID;

-- Settled units per minute of a guarded model (seed 002 burst detection);
-- pruned after a few days.
CREATE TABLE usage_minutes (
	upstream TEXT NOT NULL,
	model    TEXT NOT NULL,
	minute   INTEGER NOT NULL, -- Unix seconds, truncated to the minute
	units    INTEGER NOT NULL CHECK (units >= 0),
	PRIMARY KEY (upstream, model, minute)
) STRICT, WITHOUT ROWID;

CREATE TABLE snapshots (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	upstream      TEXT NOT NULL,
	model         TEXT NOT NULL,
	day           TEXT NOT NULL,
	at            INTEGER NOT NULL,
	balance_units INTEGER NOT NULL,
	usage_at_sync INTEGER NOT NULL,
	limit_units   INTEGER NOT NULL,
	limit_v6      INTEGER NOT NULL,
	b0_units      INTEGER NOT NULL,
	lag_seconds   INTEGER NOT NULL,
	source        TEXT NOT NULL,
	detail        TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX snapshots_model_at ON snapshots (upstream, model, at);

CREATE TABLE audit (
	seq              INTEGER PRIMARY KEY AUTOINCREMENT,
	at               INTEGER NOT NULL,
	kind             TEXT NOT NULL,
	tenant_id        TEXT NOT NULL DEFAULT '',
	run_id           TEXT NOT NULL DEFAULT '',
	actor            TEXT NOT NULL DEFAULT '',
	reason           TEXT NOT NULL DEFAULT '',
	evidence         TEXT NOT NULL DEFAULT '',
	units            INTEGER NOT NULL DEFAULT 0,
	available_before INTEGER NOT NULL DEFAULT 0,
	available_after  INTEGER NOT NULL DEFAULT 0,
	detail           TEXT NOT NULL DEFAULT '',
	-- 1 when the store wrote available_before/after from the tenant's balance
	-- row in the same transaction; Verify replays only those rows.
	balance          INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX audit_at ON audit (at);
CREATE INDEX audit_tenant ON audit (tenant_id, seq);
CREATE INDEX audit_run ON audit (run_id, kind);

CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
