package config

import (
	"fmt"
	"time"

	"github.com/quotagate/quotagate/backend/period"
)

// validatePeriods refuses a budget_period, timezone or week_starts the
// calendar cannot read, naming the field: the gateway's own timezone, then
// each tenant's keys.
func (c *Config) validatePeriods() error {
	if _, err := period.LoadZone("timezone", c.Timezone); err != nil {
		return err
	}
	for i, t := range c.Tenants {
		if _, err := t.calendar(fmt.Sprintf("tenants[%d]", i), nil); err != nil {
			return err
		}
	}
	return nil
}

// calendar is the tenant's budget calendar: its budget_period, in its
// timezone, else gateway (the top-level timezone, nil when unset), else
// the machine's; its weeks starting on week_starts (Monday when unset).
// where names the tenant in errors ("tenants[1]").
func (t Tenant) calendar(where string, gateway *time.Location) (period.Calendar, error) {
	kind, err := period.ParseKind(where+".budget_period", t.BudgetPeriod)
	if err != nil {
		return period.Calendar{}, err
	}
	zone, err := period.LoadZone(where+".timezone", t.Timezone)
	if err != nil {
		return period.Calendar{}, err
	}
	day, err := period.ParseWeekday(where+".week_starts", t.WeekStarts)
	if err != nil {
		return period.Calendar{}, err
	}
	return period.Calendar{Kind: kind, Zone: period.PickZone(zone, gateway), WeekStarts: day}, nil
}

// calendars are the configured tenants' calendars, in order (checked by
// Validate: an unreadable one is the zero Calendar, which never renews).
func (c *Config) calendars() []period.Calendar {
	gateway, _ := period.LoadZone("timezone", c.Timezone)
	out := make([]period.Calendar, len(c.Tenants))
	for i, t := range c.Tenants {
		out[i], _ = t.calendar(fmt.Sprintf("tenants[%d]", i), gateway)
	}
	return out
}
