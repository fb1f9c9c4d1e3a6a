package quota

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// The learned overrun (issue 17). A model whose trusted usage exceeds its
// reserve (seed 002's 34-vs-167 reasoning case, and worse) is reserved for
// at k × its reserves (AdmitLimit), k the largest ratio seen. The ledger
// records each settlement above its reserve in the run's settle audit row;
// the guard reads those rows after each commit it is told of, keeps k in
// memory, audits each rise of k (ReasonOverrunLearned, Units = k in
// thousandths) and writes k into the detail of every snapshot it records,
// so that a restart reads it back from the latest snapshot and the audit
// rows since. No new Store method is needed.

// ReasonOverrunLearned is the audit reason (kind AuditSync, actor "quota")
// of a rise of a model's learned overrun.
const ReasonOverrunLearned = "overrun_learned"

// overrunTag marks k in a snapshot's detail.
const overrunTag = "overrun_milli="

// settleOverrunMark is how sqlite's settle evidence names an overrun.
const settleOverrunMark = "above the reserve"

func overrunDetail(k int64) string {
	if k <= noOverrun {
		return ""
	}
	return fmt.Sprintf("%s%d", overrunTag, k)
}

func joinDetail(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// overrunOf reads k back from the latest snapshot that carries it.
func overrunOf(snaps []ledger.Snapshot) int64 {
	for i := len(snaps) - 1; i >= 0; i-- {
		d := snaps[i].Detail
		if j := strings.LastIndex(d, overrunTag); j >= 0 {
			var k int64
			if _, err := fmt.Sscanf(d[j+len(overrunTag):], "%d", &k); err == nil {
				return k
			}
		}
	}
	return 0
}

// learnOverrun reads the audit rows written since the last call (at the
// first call: those within history) and raises m's overrun from the
// settlements above their reserve of m's runs and from the overrun rows
// other gateways or an earlier process wrote. m.work must be held.
func (g *Guard) learnOverrun(ctx context.Context, m *model, now time.Time) error {
	m.mu.Lock()
	f := ledger.AuditFilter{AfterSeq: m.auditSeq}
	if m.auditSeq == 0 {
		f.From = now.Add(-history)
	}
	k := m.overrun
	m.mu.Unlock()
	rows, err := g.store.Audit(ctx, f)
	if err != nil {
		return fmt.Errorf("read settlements for the overrun of %s/%s: %w", m.key.upstream, m.key.model, err)
	}
	prefix := m.key.upstream + "/" + m.key.model + " "
	learned, from := k, ""
	for _, r := range rows {
		switch {
		case r.Kind == ledger.AuditSync && r.Reason == ReasonOverrunLearned && strings.HasPrefix(r.Detail, prefix):
			k = max(k, int64(r.Units))
		case r.Kind == ledger.AuditSettle && strings.Contains(r.Evidence, settleOverrunMark):
			run, err := g.store.Run(ctx, r.RunID)
			if err != nil {
				return fmt.Errorf("read run %s for the overrun of %s/%s: %w", r.RunID, m.key.upstream, m.key.model, err)
			}
			if run.Upstream == m.key.upstream && run.Model == m.key.model {
				if n := LearnOverrun(learned, run.ReserveUnits, run.SpentUnits+run.OverrunUnits); n > learned {
					learned, from = n, fmt.Sprintf("run %s: %d units on a reserve of %d", run.ID, run.SpentUnits+run.OverrunUnits, run.ReserveUnits)
				}
			}
		}
	}
	if learned > k {
		if err := g.store.AppendAudit(ctx, ledger.AuditEntry{At: g.now().UTC(), Kind: ledger.AuditSync, Actor: "quota",
			Reason: ReasonOverrunLearned, Units: ledger.Units(learned),
			Detail: fmt.Sprintf("%s%s: reserves now count ×%.3f (%s)", prefix, overrunDetail(learned), float64(learned)/noOverrun, from)}); err != nil {
			return fmt.Errorf("audit the overrun of %s/%s: %w", m.key.upstream, m.key.model, err) // re-read next time
		}
		k = learned
	}
	m.mu.Lock()
	m.overrun = max(m.overrun, k)
	if n := len(rows); n > 0 {
		m.auditSeq = max(m.auditSeq, rows[n-1].Seq)
	}
	m.mu.Unlock()
	return nil
}
