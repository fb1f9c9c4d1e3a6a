package ledger

import "fmt"

// Verification is what Store.Verify checks, fed with the rows a store
// reads in one snapshot; Problems holds one line per difference. Every
// store asks the same questions (their SQL differs only in dialect), so
// they say the same lines:
//   - each tenant's balance row equals the sums over its runs without a
//     period (spent, held; queued+active count over all) and has no
//     negative figure (Tenant);
//   - each budget period's books equal the sums over the runs admitted in
//     it, and stay within the budget (Period);
//   - replaying the tenant's audit rows in seq order, each period's on
//     their own, chains available_before to the previous available_after
//     and ends at the current available; its settle and reconcile rows add
//     up to its spent (AuditRow, then TenantEnd and PeriodEnd);
//   - every run has exactly one admit row carrying its reserve, every admit
//     row has its run, and every settled or reconciled run has exactly one
//     row carrying its spent units (AdmitRows, MissingRun, SettleRows);
//   - each guarded model's day equals the sums over its runs (QuotaDay).
//
// A replay may start from a checkpoint (Resume) rather than the first row,
// and a month's runs may have been archived, leaving summaries (Archived)
// that explain the breaks their rows leave in the chains.
type Verification struct {
	Problems []string
	chain    map[chainKey]*chainState
	archive  map[chainKey]*archived
	expect   *Checkpoint // compared with the replay as it passes its seq
	resumed  int64       // the seq of the checkpoint the replay started from
	replayed int         // audit rows replayed
}

func (v *Verification) init() {
	if v.chain == nil {
		v.chain = map[chainKey]*chainState{}
		v.archive = map[chainKey]*archived{}
	}
}

// chainKey names one chain of audit rows: a tenant's row ("" period) or
// one of its budget periods.
type chainKey struct{ tenant, period string }

// chainState is where a chain's replay stands. A loose chain does not know
// its next row's available_before: a period's first row (its books start
// wherever the budget stood), and every period of a tenant after a config
// row (a budget change moves every period's available at once).
// lastSeq and hash are the last row replayed and a hash over every row,
// for a checkpoint; firstSeq the first row this replay read.
type chainState struct {
	last, spent       Units
	loose             bool
	firstSeq, lastSeq int64
	hash              [32]byte
	compared          bool // with the expected checkpoint
}

// Addf adds a problem line.
func (v *Verification) Addf(format string, args ...any) {
	v.Problems = append(v.Problems, fmt.Sprintf(format, args...))
}

// Tenant checks a tenant's balance row b against the sums over its runs
// without a period (runsSpent, runsHeld) and all its runs still queued or
// active (runsOpen).
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

// AuditRow replays one audit row that moves a tenant's balance, in the
// books of period (its tenant's row for ""); rows come in seq order per
// tenant.
func (v *Verification) AuditRow(seq int64, tenant, period string, kind AuditKind, units, before, after Units) {
	v.init()
	v.replayed++
	k := chainKey{tenant, period}
	st := v.chain[k]
	if st == nil {
		st = &chainState{loose: period != ""}
		v.chain[k] = st
	}
	if v.expect != nil && seq > v.expect.Seq {
		v.passCheckpoint(k, st)
	}
	if st.firstSeq == 0 {
		st.firstSeq = seq
	}
	if !st.loose && st.last != before && !v.explainGap(k, st.lastSeq, seq, before-st.last) {
		v.Addf("tenant %s: audit row %d starts at available %d but the previous row left %d", tenant, seq, before, st.last)
	}
	st.last, st.loose, st.lastSeq = after, false, seq
	st.hash = chainHash(st.hash, seq, kind, units, before, after)
	switch kind {
	case AuditSettle, AuditReconcile:
		st.spent += units
	case AuditConfig:
		for other, o := range v.chain {
			if other.tenant == tenant && other != k {
				o.loose = true
			}
		}
	}
}

// EndReplay is called after the last AuditRow, before TenantEnd and
// PeriodEnd: a checkpoint the replay was to pass is compared by then.
func (v *Verification) EndReplay() {
	v.init()
	v.endCheckpoint()
}

// ended is where chain k ends once the rows archived from it are counted,
// and whether its available is known (a period's loose start that
// swallowed archived rows, or a loose period, leaves it unknown).
func (v *Verification) ended(k chainKey) (st chainState, known, found bool) {
	p := v.chain[k]
	tail, settled, lead := v.archivedTail(k, firstSeq(p))
	if p == nil {
		a := v.archive[k]
		if a == nil {
			return chainState{}, false, false
		}
		return chainState{spent: settled, loose: true}, false, true
	}
	st = *p
	st.last += tail
	st.spent += settled
	// A tenant's own chain starts at its creation, which is never archived.
	return st, k.period == "" || !st.loose && !lead, true
}

func firstSeq(st *chainState) int64 {
	if st == nil {
		return 1<<63 - 1
	}
	return st.firstSeq
}

// fromCheckpoint says, after a difference found by a replay that started
// at a checkpoint, where it started: the checkpoint may be what disagrees.
func (v *Verification) fromCheckpoint() string {
	if v.resumed == 0 {
		return ""
	}
	return fmt.Sprintf(" (replayed from the checkpoint at seq %d; verify --full replays everything)", v.resumed)
}

// TenantEnd checks where the replayed audit rows of tenant end against its
// balance row's available and spent, after every AuditRow.
func (v *Verification) TenantEnd(tenant string, available, spent Units) {
	st, known, found := v.ended(chainKey{tenant, ""})
	if !found {
		v.Addf("tenant %s: no audit row records its creation", tenant)
		return
	}
	if known && st.last != available {
		v.Addf("tenant %s: available %d but replaying its audit rows gives %d%s", tenant, available, st.last, v.fromCheckpoint())
	}
	if st.spent != spent {
		v.Addf("tenant %s: spent %d but its settle and reconcile audit rows add up to %d%s", tenant, spent, st.spent, v.fromCheckpoint())
	}
}

// PeriodEnd checks where the replayed audit rows of a tenant's period end
// against the period's books (available in units against the tenant's
// budget), after every AuditRow.
func (v *Verification) PeriodEnd(tenant, period string, available, spent Units) {
	st, known, found := v.ended(chainKey{tenant, period})
	if !found {
		v.Addf("tenant %s: period %s has books but no audit row", tenant, period)
		return
	}
	if known && st.last != available {
		v.Addf("tenant %s: period %s has available %d but replaying its audit rows gives %d%s", tenant, period, available, st.last, v.fromCheckpoint())
	}
	if st.spent != spent {
		v.Addf("tenant %s: period %s spent %d but its settle and reconcile audit rows add up to %d%s", tenant, period, spent, st.spent, v.fromCheckpoint())
	}
}

// Period checks one period's books b of a tenant with budget t (units, and
// money when it has a money budget) against the sums over the period's
// runs (runs): equal, none negative, and spent plus held within the budget.
func (v *Verification) Period(t Tenant, b, runs PeriodBooks) {
	if b.SpentUnits != runs.SpentUnits || b.HeldUnits != runs.HeldUnits ||
		b.SpentMicros != runs.SpentMicros || b.HeldMicros != runs.HeldMicros {
		v.Addf("tenant %s: period %s spent %d held %d (money %s, %s) but its runs spent %d and hold %d (money %s, %s)",
			t.ID, b.Label, b.SpentUnits, b.HeldUnits, b.SpentMicros, b.HeldMicros,
			runs.SpentUnits, runs.HeldUnits, runs.SpentMicros, runs.HeldMicros)
	}
	if b.SpentUnits < 0 || b.HeldUnits < 0 || b.SpentMicros < 0 || b.HeldMicros < 0 {
		v.Addf("tenant %s: period %s has a negative figure in %+v", t.ID, b.Label, b)
	}
	if b.SpentUnits+b.HeldUnits > t.BudgetUnits ||
		(t.HasMoneyBudget && b.SpentMicros+b.HeldMicros > t.BudgetMicros) {
		v.Addf("tenant %s: period %s spent and holds more than the budget: %+v", t.ID, b.Label, b)
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
