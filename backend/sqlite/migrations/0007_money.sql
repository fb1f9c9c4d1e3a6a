-- Money beside units, in integer micros of the gateway's currency. A
-- tenant's money budget is NULL when it has none (every tenant before this
-- migration); spent and held money are kept for every tenant, since a priced
-- run costs money whatever its tenant budgets in. Admission checks a money
-- budget in the same step as the units one, so it can never go negative.
ALTER TABLE tenants ADD COLUMN spent_micros INTEGER NOT NULL DEFAULT 0 CHECK (spent_micros >= 0);
ALTER TABLE tenants ADD COLUMN held_micros INTEGER NOT NULL DEFAULT 0 CHECK (held_micros >= 0);
ALTER TABLE tenants ADD COLUMN budget_micros INTEGER DEFAULT NULL
	CHECK (budget_micros IS NULL OR budget_micros - spent_micros - held_micros >= 0);
-- A run records the prices it was admitted at ('' for none: it costs
-- nothing), so a held run is charged at them across a price change; its
-- counted input, which a reconcile without a cost prices first; what it
-- reserved and was charged (at most the reserve), and the cost above the
-- reserve, never charged. What it holds is reserve_micros while its usage
-- is pending or unknown, as held_units is reserve_units.
ALTER TABLE runs ADD COLUMN prices TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN input_units INTEGER NOT NULL DEFAULT 0 CHECK (input_units >= 0);
ALTER TABLE runs ADD COLUMN reserve_micros INTEGER NOT NULL DEFAULT 0 CHECK (reserve_micros >= 0);
ALTER TABLE runs ADD COLUMN cost_micros INTEGER NOT NULL DEFAULT 0 CHECK (cost_micros >= 0 AND cost_micros <= reserve_micros);
ALTER TABLE runs ADD COLUMN overrun_micros INTEGER NOT NULL DEFAULT 0 CHECK (overrun_micros >= 0);
-- The money an audit row's change moved, as units does units.
ALTER TABLE audit ADD COLUMN micros INTEGER NOT NULL DEFAULT 0;
