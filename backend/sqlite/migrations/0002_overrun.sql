-- Units a provider reported beyond a run's reserve (a reasoning model that
-- outran its floor). The tenant is charged at most the reserve (available
-- never goes negative), but the guarded model's quota day counts them: the
-- provider did consume them from the free quota.
ALTER TABLE runs ADD COLUMN overrun_units INTEGER NOT NULL DEFAULT 0 CHECK (overrun_units >= 0);
