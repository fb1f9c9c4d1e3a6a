package archive_test

import (
	"crypto/sha256"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/archive"
	"github.com/quotagate/quotagate/backend/ledger"
)

// writeMonth writes a small archive: run a of tenant t settled 7 of 10
// (admit and settle rows), and returns its path and summaries.
func writeMonth(t *testing.T) (string, []ledger.ArchiveSummary) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.jsonl.gz")
	w, err := archive.Create(path, archive.Header{Month: "2025-10"})
	if err != nil {
		t.Fatal(err)
	}
	z := archive.NewSummarizer("2025-10")
	for _, r := range []struct {
		table string
		row   archive.Row
	}{
		{archive.TableRuns, archive.Row{"id": "a", "tenant_id": "t", "period": "", "spent_units": int64(7), "cost_micros": int64(3)}},
		{archive.TableAudit, archive.Row{"seq": int64(4), "run_id": "a", "tenant_id": "t", "period": "", "kind": "admit",
			"units": int64(10), "available_before": int64(100), "available_after": int64(90), "balance": int64(1)}},
		{archive.TableAudit, archive.Row{"seq": int64(9), "run_id": "a", "tenant_id": "t", "period": "", "kind": "settle",
			"units": int64(7), "available_before": int64(90), "available_after": int64(93), "balance": int64(1)}},
	} {
		h, err := w.Write(0, r.table, r.row)
		if err != nil {
			t.Fatal(err)
		}
		if err := z.Add(0, r.table, r.row, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	sums, _ := z.Summaries()
	return path, sums
}

func TestSummaryAddsUpTheRows(t *testing.T) {
	_, sums := writeMonth(t)
	s := sums[0]
	if len(sums) != 1 || s.Runs != 1 || s.Rows != 2 || s.SpentUnits != 7 || s.SpentMicros != 3 ||
		s.Net != -7 || s.Settled != 7 || s.FirstSeq != 4 || s.LastSeq != 9 || len(s.Hash) != 2*sha256.Size {
		t.Fatalf("summary %+v", sums)
	}
}

func TestReadBackExactly(t *testing.T) {
	path, sums := writeMonth(t)
	r, err := archive.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Header.Month != "2025-10" || r.Header.Format != archive.Format {
		t.Fatalf("header %+v", r.Header)
	}
	n := 0
	for {
		rec, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Table == archive.TableRuns && rec.Row["spent_units"] != int64(7) {
			t.Fatalf("spent_units read back as %#v", rec.Row["spent_units"])
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d records, want 3", n)
	}
	if _, problems, pending, err := archive.Check(path, sums); err != nil || len(problems) > 0 || len(pending) > 0 {
		t.Fatalf("check: %q, %v", problems, err)
	}
}

func TestCompareNamesTheDifference(t *testing.T) {
	path, sums := writeMonth(t)
	edited := sums[0]
	edited.SpentUnits = 8
	_, problems, _, err := archive.Check(path, []ledger.ArchiveSummary{edited, {Month: "2025-10", TenantID: "u"}})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(problems, "\n")
	for _, want := range []string{"tenant t period \"\": the archive's rows add up to", "tenant u period \"\": the ledger's summary"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems %q, want one containing %q", problems, want)
		}
	}
}

func TestNotAnArchive(t *testing.T) {
	if _, err := archive.Open(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Fatal("opened a missing file")
	}
}

// TestParts: a file in two parts reads back part by part, each with its
// own summaries and runs; checked against the first part's
// summaries alone, the second is pending, not a difference.
func TestParts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl.gz")
	w, err := archive.Create(path, archive.Header{Month: "2025-10"})
	if err != nil {
		t.Fatal(err)
	}
	for part, runs := range [][]string{{"a", "b"}, {"c"}} {
		for _, id := range runs {
			if _, err := w.Write(int64(part), archive.TableRuns, archive.Row{"id": id, "tenant_id": "t", "period": "", "spent_units": int64(1)}); err != nil {
				t.Fatal(err)
			}
		}
		for i, id := range runs {
			if _, err := w.Write(int64(part), archive.TableAudit, archive.Row{"seq": int64(10*part + i), "run_id": id, "tenant_id": "t",
				"period": "", "kind": "admit"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	var parts []archive.Part
	if _, err := archive.ReadParts(path, func(p archive.Part) error { parts = append(parts, p); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || strings.Join(parts[0].RunIDs, ",") != "a,b" || parts[0].Runs != 2 || parts[0].Rows != 2 ||
		parts[1].Index != 1 || parts[1].Runs != 1 || len(parts[1].Summaries) != 1 || parts[1].Summaries[0].Part != 1 ||
		len(parts[0].Altered)+len(parts[1].Altered) > 0 {
		t.Fatalf("parts %+v", parts)
	}
	_, problems, pending, err := archive.Check(path, parts[0].Summaries)
	if err != nil || len(problems) > 0 || len(pending) != 1 || pending[0] != 1 {
		t.Fatalf("check against part 0: %q, pending %v, %v", problems, pending, err)
	}
	if !strings.Contains(parts[1].Summaries[0].Digest(), "month 2025-10 part 1 ") {
		t.Fatalf("part 1's digest %q does not name its part", parts[1].Summaries[0].Digest())
	}
}
