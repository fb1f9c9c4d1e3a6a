package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/quotagate/quotagate/backend/internal/ledgersql"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

// Verify opens the ledger at path (which must exist), checks it as
// Store.Verify does, and closes it. It is `quotagate verify`.
func Verify(ctx context.Context, path string) ([]string, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("verify ledger: %w", err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		return nil, fmt.Errorf("verify ledger: %w", err)
	}
	problems, verr := s.Verify(ctx)
	if err := s.Close(); err != nil && verr == nil {
		verr = err
	}
	return problems, verr
}

// Verify is VerifyWith a full replay that writes no checkpoint: what the
// ledger contract and its tests ask.
func (s *Store) Verify(ctx context.Context) ([]string, error) {
	return s.VerifyWith(ctx, ledger.VerifyOptions{Full: true})
}

// VerifyWith recomputes every balance from the runs and from the audit log
// (and the summaries of archived months), in one read snapshot, and
// returns one line per difference:
//   - the file passes SQLite's quick_check (a full verify: it reads the
//     whole file);
//   - each tenant's balance row equals the sums over its runs (spent, held,
//     queued+active count) and has no negative figure;
//   - replaying the tenant's audit rows chains available_before to the
//     previous available_after and ends at the current available;
//   - the settle and reconcile audit rows add up to the tenant's spent;
//   - every run has exactly one admit row carrying its reserve, every admit
//     row has its run, and every settled or reconciled run has exactly one
//     row carrying its spent units;
//   - each guarded model's day equals the sums over its runs;
//   - each archive summary is what its audit row recorded.
//
// Unless opts.Full, the replay starts from the last checkpoint, and the
// per-run checks cover the runs with an audit row after it; with
// opts.Checkpoint a clean replay writes a new one.
func (s *Store) VerifyWith(ctx context.Context, opts ledger.VerifyOptions) ([]string, error) {
	v, err := s.verify(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	return v.Problems, nil
}

func (s *Store) verify(ctx context.Context, opts ledger.VerifyOptions) (*verifier, error) {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	v := &verifier{ctx: ctx, tx: tx}
	if err := v.start(opts.Full); err != nil {
		return nil, err
	}
	var runs *ledger.RunsCheckpoint
	if v.runs != nil {
		runs = v.runsFromCheckpoint(v.runs)
	} else {
		v.balances()
		v.periods()
		v.quotaDays()
		if opts.Checkpoint {
			runs = v.runsCheckpoint()
		}
	}
	v.auditChain()
	v.runsAgainstAudit()
	if v.err != nil {
		return nil, v.err
	}
	tx.Rollback()
	if opts.Checkpoint && len(v.Problems) == 0 {
		cp := v.Checkpoint(v.top, s.opts.Now())
		cp.Runs = runs
		if err := s.writeCheckpoint(ctx, cp); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// start reads where the replay begins: the last checkpoint, or the first
// row when full (the checkpoint is then compared as the replay passes it),
// and the summaries of archived months.
func (v *verifier) start(full bool) error {
	if err := v.tx.QueryRowContext(v.ctx, `SELECT coalesce(max(seq), 0) FROM audit`).Scan(&v.top); err != nil {
		return err
	}
	cp, ok, err := readCheckpoint(v.ctx, v.tx)
	if err != nil {
		return err
	}
	v.after, v.runs = v.Start(cp, ok, full)
	if full {
		v.quickCheck()
	}
	v.summaries(v.after == 0)
	return v.err
}

// readCheckpoint reads the last checkpoint, if any.
func readCheckpoint(ctx context.Context, tx *sql.Tx) (ledger.Checkpoint, bool, error) {
	var cp ledger.Checkpoint
	var at int64
	var chains string
	err := tx.QueryRowContext(ctx, `SELECT seq, at, chains FROM verify_checkpoints ORDER BY seq DESC LIMIT 1`).
		Scan(&cp.Seq, &at, &chains)
	if errors.Is(err, sql.ErrNoRows) {
		return cp, false, nil
	}
	if err != nil {
		return cp, false, fmt.Errorf("read checkpoint: %w", err)
	}
	cp.At = fromNanos(at)
	if err := json.Unmarshal([]byte(chains), &cp); err != nil {
		return cp, false, fmt.Errorf("read checkpoint at seq %d: %w", cp.Seq, err)
	}
	return cp, true, nil
}

// writeCheckpoint keeps cp as the only checkpoint, unless a month was
// archived or restored since the snapshot it was read in: the chains it
// holds then no longer start where the rows left say.
func (s *Store) writeCheckpoint(ctx context.Context, cp ledger.Checkpoint) error {
	chains, err := json.Marshal(cp)
	if err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	err = s.writeAside(ctx, func(w *wtx) error {
		var moved int
		if err := w.queryRow(ctx, `SELECT count(*) FROM audit WHERE seq > ? AND (kind = 'archive' OR kind = 'unarchive')`,
			cp.Seq).Scan(&moved); err != nil || moved > 0 {
			return err
		}
		if _, err := w.exec(ctx, `INSERT OR REPLACE INTO verify_checkpoints (seq, at, chains) VALUES (?, ?, ?)`,
			cp.Seq, nanos(cp.At), string(chains)); err != nil {
			return err
		}
		_, err := w.exec(ctx, `DELETE FROM verify_checkpoints WHERE seq < ?`, cp.Seq)
		return err
	})
	if err != nil {
		return fmt.Errorf("write checkpoint at seq %d: %w", cp.Seq, err)
	}
	return nil
}

// summaries checks each archive summary against its audit row and, on a
// replay from the first row, tells the replay of it (a replay from a
// checkpoint starts past the rows it stands for).
func (v *verifier) summaries(fromFirst bool) {
	v.each(`SELECT s.month, s.part, s.tenant_id, s.period, s.runs, s.rows, s.spent_units, s.spent_micros, s.net_units,
			s.settled_units, s.first_seq, s.last_seq, s.hash, s.audit_seq, coalesce(a.detail, '')
		FROM archive_summaries s LEFT JOIN audit a ON a.seq = s.audit_seq AND a.kind = 'archive'
		ORDER BY s.month, s.part, s.tenant_id, s.period`, func(rows *sql.Rows) error {
		var sum ledger.ArchiveSummary
		var seq int64
		var recorded string
		if err := rows.Scan(&sum.Month, &sum.Part, &sum.TenantID, &sum.Period, &sum.Runs, &sum.Rows, &sum.SpentUnits,
			&sum.SpentMicros, &sum.Net, &sum.Settled, &sum.FirstSeq, &sum.LastSeq, &sum.Hash, &seq, &recorded); err != nil {
			return err
		}
		v.ArchiveDigest(sum, seq, recorded)
		if fromFirst {
			v.Archived(sum)
		}
		return nil
	})
}

type verifier struct {
	ledger.Verification
	ctx   context.Context
	tx    *sql.Tx
	err   error
	top   int64 // the last audit seq in the snapshot
	after int64 // the checkpoint's seq: rows up to it were replayed before
	// runs is what the checkpoint kept of the runs (nil: every run is
	// added up).
	runs *ledger.RunsCheckpoint
}

// runsFrom is the runs (as r) a per-run check covers: those with an
// audit row after the checkpoint (every run on a full replay), found
// through the audit rows after it: the others were checked then, and a
// run that ended does not change.
func (v *verifier) runsFrom() string {
	if v.after == 0 {
		return "runs r"
	}
	return fmt.Sprintf("(SELECT DISTINCT run_id FROM audit NOT INDEXED WHERE seq > %d AND run_id != '') AS touched CROSS JOIN runs r ON r.id = touched.run_id", v.after)
}

// each runs query and calls fn per row until an error.
func (v *verifier) each(query string, fn func(rows *sql.Rows) error) {
	v.each2(query, nil, fn)
}

// scan runs query and calls fn after scanning each row into dest, until
// an error.
func (v *verifier) scan(query string, dest []any, fn func()) {
	if v.err != nil {
		return
	}
	rows, err := v.tx.QueryContext(v.ctx, query)
	if err != nil {
		v.err = err
		return
	}
	defer rows.Close()
	v.err = ledgersql.ForEach(rows, dest, fn)
}

func (v *verifier) quickCheck() {
	// FTS5 checks audit_text with the segment list it cached on this
	// pooled connection, perhaps in an earlier transaction: its check
	// does not ask whether the file changed since, so once the writer
	// had merged segments it reported the merged-away ones as corrupt.
	// Opening a cursor on it first is what makes FTS5 read the list of
	// this transaction's snapshot.
	var seq int64
	v.scan(`SELECT rowid FROM audit_text LIMIT 1`, []any{&seq}, func() {})
	var line string
	v.scan(`PRAGMA quick_check`, []any{&line}, func() {
		if line != "ok" {
			v.Addf("sqlite quick_check: %s", line)
		}
	})
}

// balances checks each tenant's balance row against its runs and the
// summaries of its archived ones.
func (v *verifier) balances() {
	v.each(`SELECT t.id, t.budget_units, t.spent_units, t.held_units, t.active,
			coalesce(sum(CASE WHEN r.period = '' THEN r.spent_units END), 0) + (SELECT coalesce(sum(s.spent_units), 0)
				FROM archive_summaries s WHERE s.tenant_id = t.id AND s.period = ''),
			coalesce(sum(CASE WHEN r.period = '' THEN r.held_units END), 0),
			coalesce(sum(r.status IN ('queued', 'active')), 0),
			t.budget_micros, t.spent_micros, t.held_micros,
			coalesce(sum(CASE WHEN r.period = '' THEN r.cost_micros END), 0) + (SELECT coalesce(sum(s.spent_micros), 0)
				FROM archive_summaries s WHERE s.tenant_id = t.id AND s.period = ''),
			coalesce(sum(CASE WHEN r.period = '' AND (r.usage = 'pending' OR r.usage = 'unknown') THEN r.reserve_micros END), 0)
		FROM tenants t LEFT JOIN runs r ON r.tenant_id = t.id GROUP BY t.id ORDER BY t.id`,
		func(rows *sql.Rows) error {
			var b ledger.Balance
			var spent, held ledger.Units
			var active int
			var budget sql.NullInt64
			var spentMicros, heldMicros price.Micros
			if err := rows.Scan(&b.TenantID, &b.BudgetUnits, &b.SpentUnits, &b.HeldUnits, &b.Active,
				&spent, &held, &active, &budget, &b.SpentMicros, &b.HeldMicros, &spentMicros, &heldMicros); err != nil {
				return err
			}
			b.BudgetMicros, b.HasMoneyBudget = price.Micros(budget.Int64), budget.Valid
			v.Tenant(b, spent, held, active)
			v.TenantMoney(b, spentMicros, heldMicros)
			return nil
		})
}

// runsMoney checks that each run's admit row carries its reserve's money
// and its settle or reconcile row its cost (rows before money carry 0, as
// their runs do).
func (v *verifier) runsMoney() {
	var id, what string
	var want, got price.Micros
	v.scan(`SELECT r.id, CASE WHEN a.kind = 'admit' THEN 'reserve' ELSE 'cost' END,
			CASE WHEN a.kind = 'admit' THEN r.reserve_micros ELSE r.cost_micros END, sum(a.micros)
		FROM `+v.runsFrom()+` JOIN audit a ON a.run_id = r.id AND a.balance = 1
			AND (a.kind = 'admit' OR a.kind = 'settle' OR a.kind = 'reconcile')
		GROUP BY r.id, a.kind = 'admit'
		HAVING sum(a.micros) != CASE WHEN a.kind = 'admit' THEN r.reserve_micros ELSE r.cost_micros END ORDER BY r.id`,
		[]any{&id, &what, &want, &got}, func() { v.RunMoneyRows(id, what, want, got) })
}

func (v *verifier) auditChain() {
	var seq int64
	var tenant, period, kind string
	var units, before, after ledger.Units
	v.scan(fmt.Sprintf(`SELECT seq, tenant_id, period, kind, units, available_before, available_after FROM audit
		WHERE balance = 1 AND seq > %d AND seq <= %d ORDER BY tenant_id, seq`, v.after, v.top),
		[]any{&seq, &tenant, &period, &kind, &units, &before, &after},
		func() { v.AuditRow(seq, tenant, period, ledger.AuditKind(kind), units, before, after) })
	v.EndReplay()
	var avail, spent ledger.Units
	v.scan(ledgersql.PeriodEnds, []any{&tenant, &period, &avail, &spent}, func() { v.PeriodEnd(tenant, period, avail, spent) })
	v.scan(ledgersql.TenantEnds, []any{&tenant, &avail, &spent}, func() { v.TenantEnd(tenant, avail, spent) })
}

func (v *verifier) runsAgainstAudit() {
	var id, usage string
	var reserve, lo, hi, spent, units ledger.Units
	var n int
	var seq int64
	v.scan(`SELECT r.id, r.reserve_units, count(a.seq), coalesce(min(a.units), -1), coalesce(max(a.units), -1)
		FROM `+v.runsFrom()+` LEFT JOIN audit a ON a.run_id = r.id AND a.kind = 'admit' AND a.balance = 1
		GROUP BY r.id HAVING count(a.seq) != 1 OR min(a.units) != r.reserve_units ORDER BY r.id`,
		[]any{&id, &reserve, &n, &lo, &hi}, func() { v.AdmitRows(id, reserve, n, lo, hi) })
	v.runsMoney()
	v.scan(`SELECT a.seq, a.run_id FROM audit a LEFT JOIN runs r ON r.id = a.run_id
		WHERE a.kind = 'admit' AND a.balance = 1 AND r.id IS NULL AND a.seq > `+fmt.Sprint(v.after)+` ORDER BY a.seq`,
		[]any{&seq, &id}, func() { v.MissingRun(seq, id) })
	v.scan(`SELECT r.id, r.usage, r.spent_units, count(a.seq), coalesce(min(a.units), -1)
		FROM `+v.runsFrom()+` LEFT JOIN audit a ON a.run_id = r.id AND a.kind IN ('settle', 'reconcile') AND a.balance = 1
		WHERE r.usage IN ('trusted', 'reconciled') OR a.seq IS NOT NULL
		GROUP BY r.id HAVING count(a.seq) != 1 OR min(a.units) != r.spent_units OR r.usage NOT IN ('trusted', 'reconciled')
		ORDER BY r.id`,
		[]any{&id, &usage, &spent, &n, &units}, func() { v.SettleRows(id, usage, spent, n, units) })
}

func (v *verifier) quotaDays() {
	var up, model, day string
	var usage, held, rUsage, rHeld ledger.Units
	v.scan(`WITH sums AS (
			SELECT upstream, model, day, sum(usage) AS usage, sum(held) AS held FROM (
				SELECT upstream, model, quota_day AS day, spent_units + overrun_units AS usage, held_units AS held
				FROM runs WHERE quota_day != ''
				UNION ALL SELECT upstream, model, day, usage_units, 0 FROM archive_quota_days
			) GROUP BY upstream, model, day
		), keys AS (
			SELECT upstream, model, day FROM sums UNION SELECT upstream, model, day FROM quota_days
		)
		SELECT k.upstream, k.model, k.day, coalesce(q.usage_units, 0), coalesce(q.held_units, 0),
			coalesce(s.usage, 0), coalesce(s.held, 0)
		FROM keys k
		LEFT JOIN quota_days q ON q.upstream = k.upstream AND q.model = k.model AND q.day = k.day
		LEFT JOIN sums s ON s.upstream = k.upstream AND s.model = k.model AND s.day = k.day
		WHERE coalesce(q.usage_units, 0) != coalesce(s.usage, 0) OR coalesce(q.held_units, 0) != coalesce(s.held, 0)
		ORDER BY k.upstream, k.model, k.day`,
		[]any{&up, &model, &day, &usage, &held, &rUsage, &rHeld}, func() { v.QuotaDay(up, model, day, usage, held, rUsage, rHeld) })
}

// periods checks each tenant's period books against the sums over the runs
// admitted in it (a period with runs and no row, or a row and no runs, is
// compared with nothing spent or held).
func (v *verifier) periods() {
	v.each(`WITH sums AS (
			SELECT tenant_id, period, sum(spent) AS spent, sum(held) AS held, sum(cost) AS cost,
				sum(held_micros) AS held_micros FROM (
				SELECT tenant_id, period, spent_units AS spent, held_units AS held, cost_micros AS cost,
					CASE WHEN usage = 'pending' OR usage = 'unknown' THEN reserve_micros ELSE 0 END AS held_micros
				FROM runs WHERE period != ''
				UNION ALL SELECT tenant_id, period, spent_units, 0, spent_micros, 0 FROM archive_summaries WHERE period != ''
			) GROUP BY tenant_id, period
		), keys AS (
			SELECT tenant_id, period FROM sums UNION SELECT tenant_id, period FROM tenant_periods
		)
		SELECT k.tenant_id, k.period, t.budget_units, t.budget_micros,
			coalesce(p.spent_units, 0), coalesce(p.held_units, 0), coalesce(p.spent_micros, 0), coalesce(p.held_micros, 0),
			coalesce(s.spent, 0), coalesce(s.held, 0), coalesce(s.cost, 0), coalesce(s.held_micros, 0)
		FROM keys k JOIN tenants t ON t.id = k.tenant_id
		LEFT JOIN tenant_periods p ON p.tenant_id = k.tenant_id AND p.period = k.period
		LEFT JOIN sums s ON s.tenant_id = k.tenant_id AND s.period = k.period
		ORDER BY k.tenant_id, k.period`,
		func(rows *sql.Rows) error {
			var t ledger.Tenant
			var b, r ledger.PeriodBooks
			var budget sql.NullInt64
			if err := rows.Scan(&t.ID, &b.Label, &t.BudgetUnits, &budget, &b.SpentUnits, &b.HeldUnits, &b.SpentMicros,
				&b.HeldMicros, &r.SpentUnits, &r.HeldUnits, &r.SpentMicros, &r.HeldMicros); err != nil {
				return err
			}
			t.BudgetMicros, t.HasMoneyBudget = price.Micros(budget.Int64), budget.Valid
			r.Label = b.Label
			v.Period(t, b, r)
			return nil
		})
}
