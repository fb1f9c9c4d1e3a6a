package audit_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"net/url"
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

// shanghai is a fixed +08:00 zone, so the tests do not depend on the machine's TZ.
var shanghai = time.FixedZone("CST", 8*3600)

func sample() trail {
	return trail{
		{Seq: 1, At: t0, Kind: ledger.AuditConfig, TenantID: "tenant-a", Actor: ledger.ActorConfig, Units: 110, AvailableBefore: 0, AvailableAfter: 110, Detail: "budget_units 0 → 110"},
		{Seq: 2, At: t0.Add(time.Second), Kind: ledger.AuditAdmit, TenantID: "tenant-a", RunID: "run_1", Actor: ledger.TenantActor("tenant-a"), Units: 102, AvailableBefore: 110, AvailableAfter: 8, Detail: "demo/demo-chat"},
		{Seq: 3, At: t0.Add(2 * time.Second), Kind: ledger.AuditReject, TenantID: "tenant-a", Actor: ledger.TenantActor("tenant-a"), Reason: "insufficient_budget", Units: 102, AvailableBefore: 8, AvailableAfter: 8, Count: 3, LastAt: t0.Add(50 * time.Second)},
		{Seq: 4, At: t0.Add(3 * time.Second), Kind: ledger.AuditHold, TenantID: "tenant-a", RunID: "run_1", Actor: ledger.TenantActor("tenant-a"), Reason: "upstream_interrupted", Units: 102, AvailableBefore: 8, AvailableAfter: 8},
		{Seq: 5, At: t0.Add(24 * time.Hour), Kind: ledger.AuditReconcile, TenantID: "tenant-a", RunID: "run_1", Actor: ledger.ActorAdmin, Evidence: "=HYPERLINK(\"http://evil.example\",\"bill\")", Units: 15, AvailableBefore: 8, AvailableAfter: 95, Detail: "console, \"line\" 2\nsecond line"},
		{Seq: 6, At: t0.Add(24*time.Hour + time.Second), Kind: ledger.AuditSettle, TenantID: "tenant-b", RunID: "run_2", Actor: ledger.TenantActor("tenant-b"), Evidence: "@SUM(A1)", Units: 6, AvailableBefore: 22, AvailableAfter: 16, Detail: "-1+2"},
		{Seq: 7, At: t0.Add(25 * time.Hour), Kind: ledger.AuditSync, Actor: ledger.SourceActor("volcengine"), Units: 1726526, Detail: "ark/deepseek-v4-flash balance=1726526"},
		{Seq: 8, At: t0.Add(26 * time.Hour), Kind: ledger.AuditReconcile, TenantID: "tenant-b", RunID: "run_3", Actor: ledger.ActorAdmin, Evidence: "a\rb 账单\r\n\u200B=1", Units: 0, AvailableBefore: 16, AvailableAfter: 22},
	}
}

// withMoney is sample with two rows that moved money: their cost, in the
// query's currency, fills the cost and currency columns; the second counts in
// a budget period, named in the last column.
func withMoney() trail {
	return append(sample(),
		ledger.AuditEntry{Seq: 9, At: t0.Add(27 * time.Hour), Kind: ledger.AuditSettle, TenantID: "tenant-b", RunID: "run_4", Actor: ledger.TenantActor("tenant-b"), Units: 15, Micros: 24, AvailableBefore: 16, AvailableAfter: 1, Detail: "demo/demo-chat"},
		ledger.AuditEntry{Seq: 10, At: t0.Add(28 * time.Hour), Kind: ledger.AuditAdmit, TenantID: "tenant-b", RunID: "run_5", Actor: ledger.TenantActor("tenant-b"), Units: 1, Micros: 12_345_678, AvailableBefore: 1, AvailableAfter: 0, Period: "2026-W48"})
}

func export(t *testing.T, src audit.Source, q audit.Query) string {
	t.Helper()
	var buf bytes.Buffer
	if err := audit.WriteCSV(context.Background(), &buf, src, q); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestWriteCSVGolden(t *testing.T) {
	got := export(t, withMoney(), audit.Query{Loc: shanghai, Currency: "CNY"})
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
	if !strings.HasPrefix(got, "\uFEFFseq,at,") {
		t.Errorf("export does not start with the BOM and the header: %q", got[:20])
	}
	rows, err := audit.ParseCSV(got)
	if err != nil {
		t.Fatalf("export is not valid CSV: %v", err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, c := range []struct {
		row      int
		col      string
		want     string
		describe string
	}{
		{1, "at", "2026-11-29T17:30:00.000000+08:00", "local time with its offset"},
		{5, "evidence", `'=HYPERLINK("http://evil.example","bill")`, "formula neutralised"},
		{6, "detail", "'-1+2", "a leading minus neutralised"},
		{7, "units", "", "a balance reading is not units"},
		{7, "balance", "1726526", "a balance reading in its own column"},
		{2, "balance", "", "units rows have no balance"},
		{8, "evidence", "a\rb 账单\r\n\u200B=1", "a lone CR and a CRLF kept verbatim; an = after the first line is no formula"},
	} {
		if got := rows[c.row][col[c.col]]; got != c.want {
			t.Errorf("row %d %s = %q, want %q (%s)", c.row, c.col, got, c.want, c.describe)
		}
	}
	// Every other reader agrees: encoding/csv reads it (it only folds CRLF in cells to LF).
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(got, audit.BOM)))
	std, err := r.ReadAll()
	if err != nil || len(std) != len(rows) {
		t.Fatalf("encoding/csv: %d rows, %v", len(std), err)
	}
}

func TestRoundTrip(t *testing.T) {
	texts := []string{"", "a\rb", "a\r\nb", "\r", "\n", "\r\r\n\n", `"`, `a,"b",c`, " lead", "trail ", "\t", "=1", " =1",
		"\u200B=1", "\u200E+1", "\u202E-1", "\uFEFF@x", "'=1", "''=1", "'", "''", "plain", "账单 1,234 tokens", "\x00", "＝1"}
	var tr trail
	for i, s := range texts {
		tr = append(tr, ledger.AuditEntry{Seq: int64(i + 1), At: t0, Kind: ledger.AuditReconcile, TenantID: "t", Evidence: s, Detail: s, Reason: s})
	}
	rows, err := audit.ParseCSV(export(t, tr, audit.Query{Loc: time.UTC}))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(texts)+1 {
		t.Fatalf("%d rows, want %d", len(rows), len(texts)+1)
	}
	for i, s := range texts {
		ev := rows[i+1][11]
		if got := audit.Unneutralise(ev); got != s {
			t.Errorf("evidence %q came back %q (cell %q)", s, got, ev)
		}
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
		{"  =1", "'  =1"},         // spaces first
		{"\u200B=1", "'\u200B=1"}, // zero-width space
		{"\u200F@x", "'\u200F@x"}, // right-to-left mark
		{"\u2066-1", "'\u2066-1"}, // left-to-right isolate
		{"\u3000+1", "'\u3000+1"}, // ideographic space
		{"'=1", "''=1"},           // an apostrophe the reader would strip is doubled
		{"x =1", "x =1"},
	} {
		if got := audit.Field(tc.in); got != tc.want {
			t.Errorf("Field(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if back := audit.Unneutralise(audit.Field(tc.in)); back != tc.in {
			t.Errorf("Unneutralise(Field(%q)) = %q", tc.in, back)
		}
	}
}

func TestQueryFilters(t *testing.T) {
	for _, tc := range []struct {
		name     string
		q        url.Values
		wantSeqs string
	}{
		{"All", nil, "1 2 3 4 5 6 7 8"},
		{"Tenant", url.Values{"tenant": {"tenant-b"}}, "6 8"},
		// 2026-11-29 in +08:00 runs from 2026-11-28T16:00Z to 2026-11-29T16:00Z.
		{"LocalDay", url.Values{"from": {"2026-11-29"}, "to": {"2026-11-29"}}, "1 2 3 4"},
		{"LocalNextDay", url.Values{"from": {"2026-11-30"}}, "5 6 7 8"},
		{"FromTime", url.Values{"from": {"2026-11-29T09:30:02Z"}, "tenant": {"tenant-a"}}, "3 4 5"},
		{"ToExclusiveTime", url.Values{"to": {"2026-11-29T17:30:02+08:00"}}, "1 2"},
		{"Kind", url.Values{"kind": {"reconcile"}}, "5 8"},
		{"Run", url.Values{"run": {"run_1"}}, "2 4 5"},
		{"Text", url.Values{"text": {"HYPERLINK"}}, "5"},
		{"TextCJK", url.Values{"text": {"账单"}}, "8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := audit.ParseQuery(tc.q, shanghai)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := audit.ParseCSV(export(t, sample(), q))
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

func TestParseQueryErrors(t *testing.T) {
	for _, tc := range []struct{ name, from, to, kind string }{
		{"BadFrom", "yesterday", "", ""},
		{"BadTo", "", "2026-13-01", ""},
		{"FromAfterTo", "2026-11-30", "2026-11-29", ""},
		{"BadKind", "", "", "bribe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := audit.ParseQuery(url.Values{"from": {tc.from}, "to": {tc.to}, "kind": {tc.kind}}, shanghai)
			if ledger.ErrorCode(err) != ledger.CodeInvalidRequest {
				t.Fatalf("err = %v, want invalid_request", err)
			}
		})
	}
}

// TestParseQueryKinds: every kind of row the ledger writes is a kind the
// audit log and its export filter by (the dashboard's filter offers each).
func TestParseQueryKinds(t *testing.T) {
	for _, k := range append([]ledger.AuditKind{ledger.AuditAdmit, ledger.AuditReject, ledger.AuditStart, ledger.AuditSettle,
		ledger.AuditHold, ledger.AuditRelease, ledger.AuditReconcile, ledger.AuditCancel, ledger.AuditRecover,
		ledger.AuditConfig, ledger.AuditEvict, ledger.AuditRestore, ledger.AuditSync, ledger.AuditFailover, ledger.AuditAlert,
		ledger.AuditArchive, ledger.AuditUnarchive, ledger.AuditLateEnd, ledger.AuditLookup}, ledger.AuditKinds...) {
		if q, err := audit.ParseQuery(url.Values{"kind": {string(k)}}, shanghai); err != nil || q.Kind != k {
			t.Errorf("kind %q: %+v, %v", k, q, err)
		}
	}
}

func TestFileName(t *testing.T) {
	q, err := audit.ParseQuery(url.Values{"tenant": {"a/b c"}, "from": {"2026-11-29"}, "to": {"2026-11-30"}}, shanghai)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := audit.FileName(q), "quotagate-audit_a-b-c_20261129-0000_20261201-0000.csv"; got != want {
		t.Errorf("FileName = %q, want %q", got, want)
	}
	if got := audit.FileName(audit.Query{}); got != "quotagate-audit.csv" {
		t.Errorf("FileName of no filter = %q", got)
	}
}

func TestWriteCSVPages(t *testing.T) {
	var tr trail
	for i := int64(1); i <= 2500; i++ {
		tr = append(tr, ledger.AuditEntry{Seq: i, At: t0, Kind: ledger.AuditSettle, TenantID: "t", Units: ledger.Units(i)})
	}
	rows, err := audit.ParseCSV(export(t, tr, audit.Query{}))
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
	err := audit.WriteCSV(context.Background(), &bytes.Buffer{}, failing{}, audit.Query{})
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("err = %v, want the source's error wrapped", err)
	}
}

func TestParseCSVErrors(t *testing.T) {
	for _, in := range []string{`"open`, `"a"b`, "a\rb", `a"b`} {
		if _, err := audit.ParseCSV(in); err == nil {
			t.Errorf("ParseCSV(%q) accepted malformed CSV", in)
		}
	}
}

// FuzzCSVField: any text survives the export exactly (after Unneutralise),
// and no cell read back is one a spreadsheet evaluates.
func FuzzCSVField(f *testing.F) {
	for _, s := range []string{"", "=cmd|' /C calc'!A0", "+1", "-", "@x", "\t", "\r\n", "a\rb", "a,b", `"q"`, "línea\nnueva", "\x00", "\u200B=1", "'=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cell := audit.Field(s)
		if cell != s && cell != "'"+s {
			t.Fatalf("Field(%q) = %q: only a leading apostrophe may be added", s, cell)
		}
		var buf bytes.Buffer
		tr := trail{{Seq: 1, At: t0, Kind: ledger.AuditReconcile, Evidence: s}}
		if err := audit.WriteCSV(context.Background(), &buf, tr, audit.Query{}); err != nil {
			t.Fatal(err)
		}
		rows, err := audit.ParseCSV(buf.String())
		if err != nil {
			t.Fatalf("round trip of %q: %v", s, err)
		}
		if len(rows) != 2 || audit.Unneutralise(rows[1][11]) != s {
			t.Fatalf("round trip %q → %q", s, rows)
		}
		if c := strings.TrimLeft(rows[1][11], " "); c != "" && strings.ContainsRune("=+-@", rune(c[0])) {
			t.Fatalf("cell %q starts a formula", rows[1][11])
		}
	})
}

// FuzzParseCSV: the reader never panics, and what it accepts it reads the same way twice.
func FuzzParseCSV(f *testing.F) {
	for _, s := range []string{"", "a,b\r\n", "\"a\rb\",c\r\n", "\uFEFFseq\r\n1\r\n", `"x""y"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rows, err := audit.ParseCSV(s)
		if err != nil {
			return
		}
		_ = rows
	})
}
