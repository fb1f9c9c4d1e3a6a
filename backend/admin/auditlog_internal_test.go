package admin

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/quotagate/quotagate/backend/audit"
	"github.com/quotagate/quotagate/backend/ledger"
)

// trail is an audit source with the stores' paging: tenant and kind
// filters, a seq cursor either way, newest first on request, a limit.
type trail []ledger.AuditEntry

func (tr trail) Audit(_ context.Context, f ledger.AuditFilter) ([]ledger.AuditEntry, error) {
	var out []ledger.AuditEntry
	for _, e := range tr {
		if (f.TenantID == "" || e.TenantID == f.TenantID) && (f.Kind == "" || e.Kind == f.Kind) &&
			e.Seq > f.AfterSeq && (f.BeforeSeq == 0 || e.Seq < f.BeforeSeq) {
			out = append(out, e)
		}
	}
	if f.Newest {
		slices.Reverse(out)
	}
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// TestAuditPage: paging by before returns every row the query selects
// exactly once, newest first, and says whether older ones match; a text
// filter reads on across the store's chunks until its page is full.
func TestAuditPage(t *testing.T) {
	var tr trail
	for i := int64(1); i <= 2*auditTextChunk+500; i++ {
		e := ledger.AuditEntry{Seq: i, Kind: ledger.AuditAdmit, TenantID: fmt.Sprint("t", i%3), Actor: ledger.System("test")}
		if i%2 == 0 {
			e.Kind = ledger.AuditSettle
		}
		if i%7 == 0 || i < 30 {
			e.Detail = fmt.Sprint("Needle ", i)
		}
		tr = append(tr, e)
	}
	for _, tc := range []struct {
		name string
		q    audit.Query
	}{
		{"none", audit.Query{}},
		{"tenant+kind", audit.Query{AuditFilter: ledger.AuditFilter{TenantID: "t1", Kind: ledger.AuditSettle}}},
		{"text", audit.Query{AuditFilter: ledger.AuditFilter{Text: "needle"}}},
		{"tenant+text", audit.Query{AuditFilter: ledger.AuditFilter{TenantID: "t2", Text: "NEEDLE"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want []int64
			for _, e := range slices.Backward(tr) {
				if tc.q.Matches(e) {
					want = append(want, e.Seq)
				}
			}
			var got []int64
			before := int64(0)
			for range len(tr) {
				rows, more, err := auditPage(context.Background(), tr, tc.q, before, 50)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range rows {
					got = append(got, e.Seq)
				}
				if more != (len(got) < len(want)) {
					t.Fatalf("more = %v after %d of %d rows", more, len(got), len(want))
				}
				if !more {
					break
				}
				before = rows[len(rows)-1].Seq
			}
			if !slices.Equal(got, want) {
				t.Fatalf("paged %d rows %v…, want %d %v…", len(got), got[:min(5, len(got))], len(want), want[:min(5, len(want))])
			}
		})
	}
}
