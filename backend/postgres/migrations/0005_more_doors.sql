-- Three more doors, as in the SQLite ledger's 0008: the Gemini API
-- (gemini), legacy completions with fill-in-the-middle (completions) and
-- embeddings (embeddings). A run's door and upstream protocol may now name
-- them; the checks keep their names.
ALTER TABLE runs DROP CONSTRAINT runs_door_check;
ALTER TABLE runs ADD CONSTRAINT runs_door_check
	CHECK (door IN ('', 'chat', 'responses', 'messages', 'gemini', 'completions', 'embeddings'));
ALTER TABLE runs DROP CONSTRAINT runs_upstream_protocol_check;
ALTER TABLE runs ADD CONSTRAINT runs_upstream_protocol_check
	CHECK (upstream_protocol IN ('', 'chat', 'responses', 'messages', 'gemini', 'completions', 'embeddings'));
