package ledgersql

// The ends of Verify's replay of the audit chain: what each tenant's
// balance row and each of its period's books leave available and spent
// (ledger.Verification's TenantEnd and PeriodEnd).
const (
	TenantEnds = `SELECT id, budget_units - spent_units - held_units, spent_units FROM tenants ORDER BY id`
	PeriodEnds = `SELECT p.tenant_id, p.period, t.budget_units - p.spent_units - p.held_units, p.spent_units
		FROM tenant_periods p JOIN tenants t ON t.id = p.tenant_id ORDER BY p.tenant_id, p.period`
)
