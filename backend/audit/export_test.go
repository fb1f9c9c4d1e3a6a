package audit_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/audit"
	"github.com/quotagate/quotagate/backend/ledger"
)

var update = flag.Bool("update", false, "rewrite golden files")

// trail is an in-memory audit source with the Store's paging semantics
// (AfterSeq, Limit, sequence order) but no time filter, so the export's own
// filtering is what is tested.
type trail []ledger.AuditEntry

func (tr trail) Audit(_ context.Context, f ledger.AuditFilter) ([]ledger.AuditEntry, error) {
	var out []ledger.AuditEntry
	for _, e := range tr {
		if e.Seq > f.AfterSeq && (f.Limit == 0 || len(out) < f.Limit) {
			out = append(out, e)
		}
	}
	return out, nil
}

var t0 = time.Date(2026, 11, 29, 9, 30, 0, 0, time.UTC)

func sample() trail {
	return trail{
		{Seq: 1, At: t0, Kind: ledger.AuditConfig, TenantID: "tenant-a", Actor: "config", Units: 110, AvailableBefore: 0, AvailableAfter: 110, Detail: "budget_units 0 → 110"},
		{Seq: 2, At: t0.Add(time.Second), Kind: ledger.AuditAdmit, TenantID: "tenant-a", RunID: "run_1", Actor: "gateway", Units: 102, AvailableBefore: 110, AvailableAfter: 8, Detail: "demo/demo-chat"},
		{Seq: 3, At: t0.Add(2 * time.Second), Kind: ledger.AuditReject, TenantID: "tenant-a", Actor: "gateway", Reason: "insufficient_budget", Units: 102, AvailableBefore: 8, AvailableAfter: 8},
		{Seq: 4, At: t0.Add(3 * time.Second), Kind: ledger.AuditHold, TenantID: "tenant-a", RunID: "run_1", Actor: "gateway", Reason: "upstream_interrupted", Units: 102, AvailableBefore: 8, AvailableAfter: 8},
		{Seq: 5, At: t0.Add(24 * time.Hour), Kind: ledger.AuditReconcile, TenantID: "tenant-a", RunID: "run_1", Actor: "admin", Evidence: "=HYPERLINK(\"http://evil.example\",\"bill\")", Units: 15, AvailableBefore: 8, AvailableAfter: 95, Detail: "console, \"line\" 2\nsecond line"},
		{Seq: 6, At: t0.Add(24*time.Hour + time.Second), Kind: ledger.AuditSettle, TenantID: "tenant-b", RunID: "run_2", Actor: "gateway", Evidence: "@SUM(A1)", Units: 6, AvailableBefore: 22, AvailableAfter: 16, Detail: "-1+2"},
	}
}

func export(t *testing.T, src audit.Source, f ledger.AuditFilter) string {
	t.Helper()
	var buf bytes.Buffer
	if err := audit.WriteCSV(context.Background(), &buf, src, f); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestWriteCSVGolden(t *testing.T) {
	got := export(t, sample(), ledger.AuditFilter{})
	path := filepath.Join("testdata", "export.golden.csv")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got != string(want) {
		t.Errorf("export differs from %s (run with -update after checking):\n%s", path, got)
	}
	rows, err := csv.NewReader(strings.NewReader(got)).ReadAll()
	if err != nil {
		t.Fatalf("export is not valid CSV: %v", err)
	}
	if len(rows) != 7 || rows[5][10] != `'=HYPERLINK("http://evil.example","bill")` || rows[6][11] != "'-1+2" {
		t.Errorf("unexpected rows: %q", rows)
	}
}

func TestWriteCSVFilters(t *testing.T) {
	for _, tc := range []struct {
		name         string
		from, to, tn string
		wantSeqs     string
	}{
		{"All", "", "", "", "1 2 3 4 5 6"},
		{"Tenant", "", "", "tenant-b", "6"},
		{"DayInclusive", "2026-11-29", "2026-11-29", "", "1 2 3 4"},
		{"FromTime", "2026-11-29T09:30:02Z", "", "tenant-a", "3 4 5"},
		{"ToExclusiveTime", "", "2026-11-29T09:30:02Z", "", "1 2"},
		{"NextDay", "2026-11-30", "", "", "5 6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := audit.ParseFilter(tc.from, tc.to, tc.tn)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(strings.NewReader(export(t, sample(), f))).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			var seqs []string
			for _, r := range rows[1:] {
				seqs = append(seqs, r[0])
			}
			if got := strings.Join(seqs, " "); got != tc.wantSeqs {
				t.Errorf("seqs = %q, want %q", got, tc.wantSeqs)
			}
		})
	}
}

func TestParseFilterErrors(t *testing.T) {
	for _, tc := range []struct{ name, from, to string }{
		{"BadFrom", "yesterday", ""},
		{"BadTo", "", "2026-13-01"},
		{"FromAfterTo", "2026-11-30", "2026-11-29"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := audit.ParseFilter(tc.from, tc.to, "")
			if ledger.ErrorCode(err) != ledger.CodeInvalidRequest {
				t.Fatalf("err = %v, want invalid_request", err)
			}
		})
	}
}

func TestWriteCSVPages(t *testing.T) {
	var tr trail
	for i := int64(1); i <= 2500; i++ {
		tr = append(tr, ledger.AuditEntry{Seq: i, At: t0, Kind: ledger.AuditSettle, TenantID: "t", Units: ledger.Units(i)})
	}
	rows, err := csv.NewReader(strings.NewReader(export(t, tr, ledger.AuditFilter{}))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2501 || rows[2500][0] != "2500" {
		t.Fatalf("got %d rows, last %q; want 2501 rows ending at seq 2500", len(rows), rows[len(rows)-1])
	}
}

type failing struct{}

func (failing) Audit(context.Context, ledger.AuditFilter) ([]ledger.AuditEntry, error) {
	return nil, errors.New("disk on fire")
}

func TestWriteCSVSourceError(t *testing.T) {
	err := audit.WriteCSV(context.Background(), &bytes.Buffer{}, failing{}, ledger.AuditFilter{})
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("err = %v, want the source's error wrapped", err)
	}
}

func TestField(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"=1+1", "'=1+1"},
		{"+1", "'+1"},
		{"-1", "'-1"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"\x00x", "'\x00x"},
		{"a=b", "a=b"},
		{"'quoted", "'quoted"},
	} {
		if got := audit.Field(tc.in); got != tc.want {
			t.Errorf("Field(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzCSVField: any text survives a CSV round trip as exactly Field(text),
// and no cell read back starts with a character a spreadsheet evaluates.
func FuzzCSVField(f *testing.F) {
	for _, s := range []string{"", "=cmd|' /C calc'!A0", "+1", "-", "@x", "\t", "\r\n", "a,b", `"q"`, "línea\nnueva", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cell := audit.Field(s)
		if cell != s && cell != "'"+s {
			t.Fatalf("Field(%q) = %q: only a leading apostrophe may be added", s, cell)
		}
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		if err := w.Write([]string{cell, "end"}); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		rec, err := csv.NewReader(&buf).Read()
		if err != nil {
			t.Fatalf("round trip of %q: %v", cell, err)
		}
		// encoding/csv folds \r\n inside quoted fields to \n on read.
		if want := strings.ReplaceAll(cell, "\r\n", "\n"); rec[0] != want || rec[1] != "end" {
			t.Fatalf("round trip %q → %q", cell, rec)
		}
		if rec[0] != "" && strings.ContainsRune("=+-@\t\r\x00", rune(rec[0][0])) {
			t.Fatalf("cell %q starts with a formula character", rec[0])
		}
	})
}
