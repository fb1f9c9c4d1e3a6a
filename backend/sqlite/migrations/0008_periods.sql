-- Budgets that renew. A tenant's calendar (budget_period none, day, week
-- or month; the IANA zone it is cut in, '' for the machine's; the weekday
-- its weeks start on, 0 Sunday … 6 Saturday) is kept with the tenant, so
-- that every reader of the file cuts its periods alike.
ALTER TABLE tenants ADD COLUMN budget_period TEXT NOT NULL DEFAULT 'none'
	CHECK (budget_period = 'none' OR budget_period = 'day' OR budget_period = 'week' OR budget_period = 'month');
ALTER TABLE tenants ADD COLUMN timezone TEXT NOT NULL DEFAULT '';
ALTER TABLE tenants ADD COLUMN week_starts INTEGER NOT NULL DEFAULT 1 CHECK (week_starts >= 0 AND week_starts <= 6);
-- A run belongs to the period it was admitted in ('' when its tenant's
-- budget never renewed): its hold, settlement and reconcile move that
-- period's books. An audit row names the period whose books its available
-- figures are, so that Verify chains each period on its own.
ALTER TABLE runs ADD COLUMN period TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN period TEXT NOT NULL DEFAULT '';
-- A tenant's books per period, kept in step with its runs of that period
-- as the tenant's row is with its runs without one (which stay on the
-- row). A period with no row has spent and held nothing. starts_at and
-- ends_at are the period's bounds (Unix nanoseconds; the end is exclusive),
-- for the history of spend.
CREATE TABLE tenant_periods (
	tenant_id    TEXT NOT NULL REFERENCES tenants (id),
	period       TEXT NOT NULL,
	starts_at    INTEGER NOT NULL,
	ends_at      INTEGER NOT NULL,
	spent_units  INTEGER NOT NULL DEFAULT 0 CHECK (spent_units >= 0),
	held_units   INTEGER NOT NULL DEFAULT 0 CHECK (held_units >= 0),
	spent_micros INTEGER NOT NULL DEFAULT 0 CHECK (spent_micros >= 0),
	held_micros  INTEGER NOT NULL DEFAULT 0 CHECK (held_micros >= 0),
	PRIMARY KEY (tenant_id, period)
) STRICT, WITHOUT ROWID;
CREATE INDEX tenant_periods_start ON tenant_periods (tenant_id, starts_at);
