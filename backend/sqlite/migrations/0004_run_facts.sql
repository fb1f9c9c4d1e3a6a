-- Per-run facts the dashboard shows, so that an operator can tell a
-- client's retries and idempotent repeats from new calls: the door a
-- call came in by and the protocol it was relayed to the upstream in, the
-- client's Idempotency-Key and X-Stainless-Retry-Count, the run it retries,
-- and the cached input tokens of its trusted usage. Older runs keep ''/0.
ALTER TABLE runs ADD COLUMN door TEXT NOT NULL DEFAULT '' CHECK (door IN ('', 'chat', 'responses', 'messages'));
ALTER TABLE runs ADD COLUMN upstream_protocol TEXT NOT NULL DEFAULT '' CHECK (upstream_protocol IN ('', 'chat', 'responses', 'messages'));
ALTER TABLE runs ADD COLUMN idempotency_key TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN retry_count INTEGER NOT NULL DEFAULT 0 CHECK (retry_count >= 0);
ALTER TABLE runs ADD COLUMN retry_of TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN fingerprint TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0 CHECK (cached_tokens >= 0);
-- Admission looks a key up among the tenant's runs of the last 24 h, and an
-- SDK retry without a key its previous attempt by fingerprint: both in O(log n).
CREATE INDEX runs_idempotency ON runs (tenant_id, idempotency_key, created_at) WHERE idempotency_key != '';
CREATE INDEX runs_fingerprint ON runs (tenant_id, fingerprint, created_at) WHERE fingerprint != '';
