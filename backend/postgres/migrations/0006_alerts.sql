-- The alert outbox, as in the SQLite ledger's 0009: one row per alert,
-- written with its audit row, kept until its webhook answered 2xx; the key
-- makes it one alert however many gateways record it. Several gateways may
-- deliver: one claims an alert for a while (lease_owner, lease_until) before
-- sending it, so that no two send it at once, and a claim that runs out
-- (its gateway died) lets another take it over.
CREATE TABLE alert_outbox (
	id              bigserial PRIMARY KEY,
	key             text NOT NULL UNIQUE,
	tenant_id       text NOT NULL,
	kind            text NOT NULL,
	body            bytea NOT NULL,
	at              bigint NOT NULL,
	delivered_at    bigint,           -- NULL until delivered
	attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
	last_error      text NOT NULL DEFAULT '',
	last_attempt_at bigint NOT NULL DEFAULT 0,
	next_try        bigint NOT NULL DEFAULT 0,
	lease_owner     text NOT NULL DEFAULT '',
	lease_until     bigint NOT NULL DEFAULT 0
);
CREATE INDEX alert_outbox_pending ON alert_outbox (tenant_id, id) WHERE delivered_at IS NULL;
CREATE INDEX alert_outbox_attempts ON alert_outbox (last_attempt_at);
