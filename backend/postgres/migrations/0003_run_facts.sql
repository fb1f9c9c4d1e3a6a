-- Per-run facts the dashboard shows, as in the SQLite ledger's 0004: the
-- door and the upstream protocol, the client's Idempotency-Key and
-- X-Stainless-Retry-Count, the run it retries, and the cached input tokens
-- of its trusted usage. Older runs keep ''/0.
ALTER TABLE runs ADD COLUMN door text NOT NULL DEFAULT '' CHECK (door IN ('', 'chat', 'responses', 'messages'));
ALTER TABLE runs ADD COLUMN upstream_protocol text NOT NULL DEFAULT '' CHECK (upstream_protocol IN ('', 'chat', 'responses', 'messages'));
ALTER TABLE runs ADD COLUMN idempotency_key text NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN retry_count integer NOT NULL DEFAULT 0 CHECK (retry_count >= 0);
ALTER TABLE runs ADD COLUMN retry_of text NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN fingerprint text NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN cached_tokens bigint NOT NULL DEFAULT 0 CHECK (cached_tokens >= 0);
CREATE INDEX runs_idempotency ON runs (tenant_id, idempotency_key, created_at) WHERE idempotency_key <> '';
CREATE INDEX runs_fingerprint ON runs (tenant_id, fingerprint, created_at) WHERE fingerprint <> '';
