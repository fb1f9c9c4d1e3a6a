-- The alert outbox: every alert (a threshold reached, a run held, a model
-- evicted or restored) is a row here, written in the same transaction as
-- its audit row, and kept until its webhook answered 2xx. The key makes it
-- one alert: a second recording of the same key writes nothing. Alerts of
-- one tenant (tenant_id '' for a model's) are delivered in id order; the
-- body is rendered once, so every retry sends the same bytes.
CREATE TABLE alert_outbox (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	key             TEXT NOT NULL UNIQUE,
	tenant_id       TEXT NOT NULL,
	kind            TEXT NOT NULL,
	body            BLOB NOT NULL,
	at              INTEGER NOT NULL,
	delivered_at    INTEGER,          -- NULL until delivered
	attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
	last_error      TEXT NOT NULL DEFAULT '',
	last_attempt_at INTEGER NOT NULL DEFAULT 0,
	next_try        INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX alert_outbox_pending ON alert_outbox (tenant_id, id) WHERE delivered_at IS NULL;
CREATE INDEX alert_outbox_attempts ON alert_outbox (last_attempt_at);
