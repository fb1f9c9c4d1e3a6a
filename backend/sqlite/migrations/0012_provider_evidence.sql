-- Evidence from the provider. A run keeps the provider's own id of the
-- call (the chat chunk id, the Responses response id, the Messages message
-- id, Gemini's responseId), which a usage lookup asks the provider about,
-- and the output it relayed to the client, below which a provider's figure
-- is a contradiction. An audit row keeps the run's provider id as known
-- when it was written, for the CSV. Older rows keep ''/0.
ALTER TABLE runs ADD COLUMN provider_id TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN relayed_units INTEGER NOT NULL DEFAULT 0 CHECK (relayed_units >= 0);
ALTER TABLE audit ADD COLUMN provider_id TEXT NOT NULL DEFAULT '';
