-- Evidence from the provider, as in the SQLite ledger's 0012: a run keeps
-- the provider's own id of the call, which a usage lookup asks the provider
-- about, and the output it relayed to the client, below which a provider's
-- figure is a contradiction; an audit row keeps the run's provider id as
-- known when it was written. Older rows keep ''/0.
ALTER TABLE runs ADD COLUMN provider_id text NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN relayed_units bigint NOT NULL DEFAULT 0 CHECK (relayed_units >= 0);
ALTER TABLE audit ADD COLUMN provider_id text NOT NULL DEFAULT '';
