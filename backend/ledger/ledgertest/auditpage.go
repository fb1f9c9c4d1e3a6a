package ledgertest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

// testAuditPage: paging newest first by BeforeSeq returns every row a
// filter selects exactly once, newest first, for each filter the dashboard
// pages by; the same filter oldest first returns the same rows in order.
func testAuditPage(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("a", 1000, 10), Tenant("b", 1000, 10))
	for i := range 6 {
		tenant := []string{"a", "b"}[i%2]
		id := ledger.RunID(fmt.Sprint("r", i))
		MustAdmit(t, st, ledger.AdmitRequest{RunID: id, TenantID: tenant, ReserveUnits: 10})
		if i%3 != 2 {
			if _, err := st.Settle(ctx, id, 3, "usage", by); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.AppendAudit(ctx, ledger.AuditEntry{Kind: ledger.AuditReject, TenantID: "a", Reason: ledger.CodeRateLimited,
		Actor: gateway}); err != nil {
		t.Fatal(err)
	}
	all, err := st.Audit(ctx, ledger.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	mid := all[len(all)/2].At
	for _, tc := range []struct {
		name string
		f    ledger.AuditFilter
	}{
		{"none", ledger.AuditFilter{}},
		{"tenant", ledger.AuditFilter{TenantID: "a"}},
		{"kind", ledger.AuditFilter{Kind: ledger.AuditSettle}},
		{"tenant+kind", ledger.AuditFilter{TenantID: "b", Kind: ledger.AuditSettle}},
		{"run", ledger.AuditFilter{RunID: "r2"}},
		{"from", ledger.AuditFilter{From: mid}},
		{"to", ledger.AuditFilter{To: mid, TenantID: "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want []int64
			for _, e := range all {
				if auditSelects(tc.f, e) {
					want = append(want, e.Seq)
				}
			}
			if len(want) == 0 {
				t.Fatal("the filter selects no row: the case tests nothing")
			}
			oldest := auditSeqs(t, st, tc.f)
			if !slices.Equal(oldest, want) {
				t.Fatalf("oldest first = %v, want %v", oldest, want)
			}
			slices.Reverse(want)
			var got []int64
			f := tc.f
			f.Newest, f.Limit = true, 2
			for range len(all) + 1 {
				page := auditSeqs(t, st, f)
				got = append(got, page...)
				if len(page) < f.Limit {
					break
				}
				f.BeforeSeq = page[len(page)-1]
			}
			if !slices.Equal(got, want) {
				t.Fatalf("paged newest first = %v, want %v", got, want)
			}
		})
	}
}

// auditSelects is f's selection, written out for the test.
func auditSelects(f ledger.AuditFilter, e ledger.AuditEntry) bool {
	return (f.From.IsZero() || !e.At.Before(f.From)) && (f.To.IsZero() || e.At.Before(f.To)) &&
		(f.TenantID == "" || e.TenantID == f.TenantID) && (f.Kind == "" || e.Kind == f.Kind) &&
		(f.RunID == "" || e.RunID == f.RunID)
}

func auditSeqs(tb testing.TB, st ledger.Store, f ledger.AuditFilter) []int64 {
	tb.Helper()
	rows, err := st.Audit(context.Background(), f)
	if err != nil {
		tb.Fatal(err)
	}
	seqs := make([]int64, 0, len(rows))
	for _, e := range rows {
		seqs = append(seqs, e.Seq)
	}
	return seqs
}
