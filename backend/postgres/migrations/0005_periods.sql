-- Budgets that renew, as in the SQLite ledger's 0008. A tenant's calendar
-- (budget_period none, day, week or month; its IANA zone, '' for the
-- machine's; the weekday its weeks start on, 0 Sunday … 6 Saturday) is
-- kept with the tenant, so that every gateway sharing the database cuts
-- its periods alike.
ALTER TABLE tenants ADD COLUMN budget_period text NOT NULL DEFAULT 'none'
	CHECK (budget_period IN ('none', 'day', 'week', 'month'));
ALTER TABLE tenants ADD COLUMN timezone text NOT NULL DEFAULT '';
ALTER TABLE tenants ADD COLUMN week_starts integer NOT NULL DEFAULT 1 CHECK (week_starts BETWEEN 0 AND 6);
-- A run belongs to the period it was admitted in ('' when its tenant's
-- budget never renewed); an audit row names the period whose books its
-- available figures are.
ALTER TABLE runs ADD COLUMN period text NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN period text NOT NULL DEFAULT '';
-- A tenant's books per period, kept in step with its runs of that period
-- as the tenant's row is with its runs without one. A period with no row
-- has spent and held nothing. Admission locks the tenant's row first, so
-- every change of a tenant's periods is serialised by that lock.
CREATE TABLE tenant_periods (
	tenant_id    text NOT NULL REFERENCES tenants (id),
	period       text NOT NULL,
	starts_at    bigint NOT NULL,
	ends_at      bigint NOT NULL,
	spent_units  bigint NOT NULL DEFAULT 0 CHECK (spent_units >= 0),
	held_units   bigint NOT NULL DEFAULT 0 CHECK (held_units >= 0),
	spent_micros bigint NOT NULL DEFAULT 0 CHECK (spent_micros >= 0),
	held_micros  bigint NOT NULL DEFAULT 0 CHECK (held_micros >= 0),
	PRIMARY KEY (tenant_id, period)
);
CREATE INDEX tenant_periods_start ON tenant_periods (tenant_id, starts_at);
