-- Money beside units, as in the SQLite ledger's 0007: integer micros of the
-- gateway's currency. A tenant's money budget is NULL when it has none
-- (every tenant before this migration); spent and held money are kept for
-- every tenant. A run records the prices it was admitted at ('' for none),
-- its counted input, what it reserved and was charged (at most the
-- reserve), and the cost above the reserve, never charged; it holds
-- reserve_micros while its usage is pending or unknown.
ALTER TABLE tenants ADD COLUMN spent_micros bigint NOT NULL DEFAULT 0 CHECK (spent_micros >= 0);
ALTER TABLE tenants ADD COLUMN held_micros bigint NOT NULL DEFAULT 0 CHECK (held_micros >= 0);
ALTER TABLE tenants ADD COLUMN budget_micros bigint DEFAULT NULL;
ALTER TABLE tenants ADD CONSTRAINT tenants_money_available
	CHECK (budget_micros IS NULL OR budget_micros - spent_micros - held_micros >= 0);
ALTER TABLE runs ADD COLUMN prices text NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN input_units bigint NOT NULL DEFAULT 0 CHECK (input_units >= 0);
ALTER TABLE runs ADD COLUMN reserve_micros bigint NOT NULL DEFAULT 0 CHECK (reserve_micros >= 0);
ALTER TABLE runs ADD COLUMN cost_micros bigint NOT NULL DEFAULT 0 CHECK (cost_micros >= 0);
ALTER TABLE runs ADD COLUMN overrun_micros bigint NOT NULL DEFAULT 0 CHECK (overrun_micros >= 0);
ALTER TABLE runs ADD CONSTRAINT runs_cost_within_reserve CHECK (cost_micros <= reserve_micros);
ALTER TABLE audit ADD COLUMN micros bigint NOT NULL DEFAULT 0;
