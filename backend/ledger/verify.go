package ledger

import "fmt"

// Verification is what Store.Verify checks, fed with the rows a store
// reads in one snapshot; Problems holds one line per difference. Every
// store asks the same questions (their SQL differs only in dialect), so
// they say the same lines:
//   - each tenant's balance row equals the sums over its runs (spent, held,
//     queued+active count) and has no negative figure (Tenant);
//   - replaying the tenant's audit rows in seq order chains
//     available_before to the previous available_after and ends at the
//     current available; its settle and reconcile rows add up to its spent
//     (AuditRow, then TenantEnd);
//   - every run has exactly one admit row carrying its reserve, every admit
//     row has its run, and every settled or reconciled run has exactly one
//     row carrying its spent units (AdmitRows, MissingRun, SettleRows);
//   - each guarded model's day equals the sums over its runs (QuotaDay).
type Verification struct {
	Problems []string
	chain    map[string]*chainState
}

type chainState struct{ last, spent Units }

// Addf adds a problem line.
func (v *Verification) Addf(format string, args ...any) {
	v.Problems = append(v.Problems, fmt.Sprintf(format, args...))
}

// Tenant checks a tenant's balance row b against the sums over its runs.
func (v *Verification) Tenant(b Balance, runsSpent, runsHeld Units, runsOpen int) {
	b.AvailableUnits, b.AvailableMicros = b.Available(), b.AvailableMoney()
	if err := b.Check(); err != nil {
		v.Addf("%v", err)
	}
	if b.SpentUnits != runsSpent {
		v.Addf("tenant %s: spent %d but its runs spent %d", b.TenantID, b.SpentUnits, runsSpent)
	}
	if b.HeldUnits != runsHeld {
		v.Addf("tenant %s: held %d but its runs hold %d", b.TenantID, b.HeldUnits, runsHeld)
	}
	if b.Active != runsOpen {
		v.Addf("tenant %s: active %d but %d of its runs are queued or active", b.TenantID, b.Active, runsOpen)
	}
}

// AuditRow replays one audit row that moves a tenant's balance; rows come
// in seq order per tenant.
func (v *Verification) AuditRow(seq int64, tenant string, kind AuditKind, units, before, after Units) {
	if v.chain == nil {
		v.chain = map[string]*chainState{}
	}
	st := v.chain[tenant]
	if st == nil {
		st = &chainState{}
		v.chain[tenant] = st
	}
	if st.last != before {
		v.Addf("tenant %s: audit row %d starts at available %d but the previous row left %d", tenant, seq, before, st.last)
	}
	st.last = after
	switch kind {
	case AuditSettle, AuditReconcile:
		st.spent += units
	}
}

// TenantEnd checks where the replayed audit rows of tenant end against its
// balance row's available and spent, after every AuditRow.
func (v *Verification) TenantEnd(tenant string, available, spent Units) {
	st := v.chain[tenant]
	if st == nil {
		v.Addf("tenant %s: no audit row records its creation", tenant)
		return
	}
	if st.last != available {
		v.Addf("tenant %s: available %d but replaying its audit rows gives %d", tenant, available, st.last)
	}
	if st.spent != spent {
		v.Addf("tenant %s: spent %d but its settle and reconcile audit rows add up to %d", tenant, spent, st.spent)
	}
}

// AdmitRows reports a run whose admit rows are not exactly one carrying
// its reserve (n rows, units lo..hi).
func (v *Verification) AdmitRows(run string, reserve Units, n int, lo, hi Units) {
	v.Addf("run %s: reserve %d but %d admit audit rows (units %d..%d)", run, reserve, n, lo, hi)
}

// MissingRun reports an admit row whose run is missing.
func (v *Verification) MissingRun(seq int64, run string) {
	v.Addf("audit row %d admitted run %s, which is missing", seq, run)
}

// SettleRows reports a run whose settle/reconcile rows do not match its
// usage and spent units.
func (v *Verification) SettleRows(run, usage string, spent Units, n int, units Units) {
	v.Addf("run %s: usage %s, spent %d, but %d settle/reconcile audit rows (units %d)", run, usage, spent, n, units)
}

// QuotaDay reports a guarded model's day whose figures differ from the
// sums over its runs.
func (v *Verification) QuotaDay(upstream, model, day string, usage, held, runsUsage, runsHeld Units) {
	v.Addf("quota %s/%s %s: usage %d held %d but its runs spent %d and hold %d",
		upstream, model, day, usage, held, runsUsage, runsHeld)
}
