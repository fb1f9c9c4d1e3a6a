package audit_test

import (
	"context"
	"encoding/csv"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/audit"
	"github.com/quotagate/quotagate/backend/ledger"
)

// BenchmarkWriteCSV exports 10,000 audit rows, against a baseline that reads
// the same pages and writes the same cells with encoding/csv directly (no
// filter, no formula escaping).
func BenchmarkWriteCSV(b *testing.B) {
	var tr trail
	for i := int64(1); i <= 10_000; i++ {
		tr = append(tr, ledger.AuditEntry{Seq: i, At: t0.Add(time.Duration(i) * time.Second), Kind: ledger.AuditSettle,
			TenantID: "tenant-a", RunID: ledger.RunID("run_" + strconv.FormatInt(i, 10)), Actor: ledger.TenantActor("tenant-a"),
			Units: 15, AvailableBefore: 110, AvailableAfter: 95, Evidence: "=usage 15", Detail: "demo/demo-chat"})
	}
	b.Run("Export", func(b *testing.B) {
		for b.Loop() {
			if err := audit.WriteCSV(context.Background(), io.Discard, tr, audit.Query{Loc: time.UTC}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("BaselineEncodingCSV", func(b *testing.B) {
		for b.Loop() {
			w := csv.NewWriter(io.Discard)
			_ = w.Write(audit.Header)
			var rows []ledger.AuditEntry
			for f := (ledger.AuditFilter{Limit: 1000}); ; f.AfterSeq = rows[len(rows)-1].Seq {
				rows, _ = tr.Audit(context.Background(), f)
				for _, e := range rows {
					_ = w.Write([]string{strconv.FormatInt(e.Seq, 10), e.At.UTC().Format(time.RFC3339Nano), string(e.Kind),
						e.TenantID, string(e.RunID), e.Actor.String(), e.Reason, strconv.FormatInt(int64(e.Units), 10),
						strconv.FormatInt(int64(e.AvailableBefore), 10), strconv.FormatInt(int64(e.AvailableAfter), 10), e.Evidence, e.Detail})
				}
				if len(rows) < 1000 {
					break
				}
			}
			w.Flush()
		}
	})
}
