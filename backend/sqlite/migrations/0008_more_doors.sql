-- Three more doors: the Gemini API (gemini), legacy completions with
-- fill-in-the-middle (completions) and embeddings (embeddings). A run's door
-- and upstream protocol may now name them. A CHECK cannot be altered, so
-- runs is rebuilt as in 0006 (nothing references runs, no trigger or view
-- reads it), with the same columns in the same order, the same other
-- constraints and the same indexes.
CREATE TABLE runs_rebuilt (
	id                TEXT PRIMARY KEY,
	tenant_id         TEXT NOT NULL REFERENCES tenants (id),
	upstream          TEXT NOT NULL,
	model             TEXT NOT NULL,
	quota_day         TEXT NOT NULL DEFAULT '',
	status            TEXT NOT NULL CHECK (status = 'queued' OR status = 'active' OR status = 'completed'
		OR status = 'interrupted' OR status = 'cancelled' OR status = 'failed'),
	usage             TEXT NOT NULL CHECK (usage = 'pending' OR usage = 'trusted' OR usage = 'unknown'
		OR usage = 'reconciled' OR usage = 'released'),
	reserve_units     INTEGER NOT NULL CHECK (reserve_units >= 0),
	spent_units       INTEGER NOT NULL DEFAULT 0 CHECK (spent_units >= 0 AND spent_units <= reserve_units),
	held_units        INTEGER NOT NULL,
	evidence          TEXT NOT NULL DEFAULT '',
	created_at        INTEGER NOT NULL,
	updated_at        INTEGER NOT NULL,
	overrun_units     INTEGER NOT NULL DEFAULT 0 CHECK (overrun_units >= 0),
	door              TEXT NOT NULL DEFAULT '' CHECK (door = '' OR door = 'chat' OR door = 'responses' OR door = 'messages'
		OR door = 'gemini' OR door = 'completions' OR door = 'embeddings'),
	upstream_protocol TEXT NOT NULL DEFAULT '' CHECK (upstream_protocol = '' OR upstream_protocol = 'chat'
		OR upstream_protocol = 'responses' OR upstream_protocol = 'messages' OR upstream_protocol = 'gemini'
		OR upstream_protocol = 'completions' OR upstream_protocol = 'embeddings'),
	idempotency_key   TEXT NOT NULL DEFAULT '',
	retry_count       INTEGER NOT NULL DEFAULT 0 CHECK (retry_count >= 0),
	retry_of          TEXT NOT NULL DEFAULT '',
	fingerprint       TEXT NOT NULL DEFAULT '',
	cached_tokens     INTEGER NOT NULL DEFAULT 0 CHECK (cached_tokens >= 0),
	prices            TEXT NOT NULL DEFAULT '',
	input_units       INTEGER NOT NULL DEFAULT 0 CHECK (input_units >= 0),
	reserve_micros    INTEGER NOT NULL DEFAULT 0 CHECK (reserve_micros >= 0),
	cost_micros       INTEGER NOT NULL DEFAULT 0 CHECK (cost_micros >= 0 AND cost_micros <= reserve_micros),
	overrun_micros    INTEGER NOT NULL DEFAULT 0 CHECK (overrun_micros >= 0),
	-- A run holds its whole reserve exactly while its usage is pending or unknown.
	CHECK (held_units = CASE WHEN usage = 'pending' OR usage = 'unknown' THEN reserve_units ELSE 0 END),
	-- Pending usage only while the run is still queued or active.
	CHECK ((usage = 'pending') = (status = 'queued' OR status = 'active'))
) STRICT;
INSERT INTO runs_rebuilt (id, tenant_id, upstream, model, quota_day, status, usage, reserve_units, spent_units,
	held_units, evidence, created_at, updated_at, overrun_units, door, upstream_protocol, idempotency_key,
	retry_count, retry_of, fingerprint, cached_tokens, prices, input_units, reserve_micros, cost_micros,
	overrun_micros)
SELECT id, tenant_id, upstream, model, quota_day, status, usage, reserve_units, spent_units,
	held_units, evidence, created_at, updated_at, overrun_units, door, upstream_protocol, idempotency_key,
	retry_count, retry_of, fingerprint, cached_tokens, prices, input_units, reserve_micros, cost_micros,
	overrun_micros
FROM runs;
DROP TABLE runs;
ALTER TABLE runs_rebuilt RENAME TO runs;
CREATE INDEX runs_created ON runs (created_at);
CREATE INDEX runs_tenant_created ON runs (tenant_id, created_at);
CREATE INDEX runs_holding ON runs (created_at) WHERE usage IN ('pending', 'unknown');
CREATE INDEX runs_idempotency ON runs (tenant_id, idempotency_key, created_at) WHERE idempotency_key != '';
CREATE INDEX runs_fingerprint ON runs (tenant_id, fingerprint, created_at) WHERE fingerprint != '';
