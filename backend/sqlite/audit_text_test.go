package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// TestAuditTextIndexStaysTrue: the text index is kept by every path that
// writes or deletes audit rows. After a stretch of simulation programs
// (admissions, settlements, refusals counted on their row, restarts) on a
// ledger with closed months, after archiving the months and after
// restoring them, FTS5's own check finds the index equal to the rows it
// indexes, SQLite's integrity_check is clean, verify (whose quick_check
// runs on a pooled read connection that read the index before the writer
// merged its segments) is clean, and a text search finds exactly the rows
// a read of the whole trail does. QUOTAGATE_LONG=1 runs 25× the programs.
func TestAuditTextIndexStaysTrue(t *testing.T) {
	programs := 40
	if os.Getenv("QUOTAGATE_LONG") == "1" {
		programs *= 25
	}
	st, path := archiveLedger(t)
	var store ledger.Store = st
	reopen := func(old ledger.Store) (ledger.Store, error) {
		if err := old.Close(); err != nil {
			return nil, err
		}
		return sqlite.Open(path, simOptions)
	}
	for seed := range uint64(programs) {
		m := &ledgertest.Machine{Store: store, Reopen: reopen, Prefix: fmt.Sprintf("s%d", seed), SkipFinalVerify: seed%10 != 9}
		if err := m.Run(ledgertest.Program(seed, 16)); err != nil {
			t.Fatalf("program %d: %v", seed, err)
		}
		store = m.Store
		wantTextFound(t, store, "s"+fmt.Sprint(seed)+"-")
	}
	st = store.(*sqlite.Store)
	t.Cleanup(func() { st.Close() })
	wantTextIndexTrue(t, st, path)
	done := archiveMonths(t, st, t.TempDir(), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if len(done) != 2 {
		t.Fatalf("archived %+v, want two months", done)
	}
	wantTextIndexTrue(t, st, path)
	for _, m := range done {
		if _, err := st.RestoreArchive(context.Background(), m.File, archiver); err != nil {
			t.Fatal(err)
		}
	}
	wantTextIndexTrue(t, st, path)
}

// wantTextIndexTrue checks the index against its rows on a connection of
// its own, then verify on the store's, then searches through it.
func wantTextIndexTrue(t *testing.T, st *sqlite.Store, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// rank 1: also compare the index with the text of every audit row.
	if _, err := db.Exec(`INSERT INTO audit_text (audit_text, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("audit_text against audit: %v", err)
	}
	var line string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&line); err != nil || line != "ok" {
		t.Fatalf("integrity_check: %q, %v", line, err)
	}
	wantClean(t, st, ledger.VerifyOptions{Full: true})
	for _, text := range []string{"usage", "t1-2", "tenant:t", "RESERVE", "no such text"} {
		wantTextFound(t, st, text)
	}
}

// wantTextFound: a text search newest first finds exactly the rows of a
// whole read of the trail that hold the text.
func wantTextFound(t *testing.T, st ledger.Store, text string) {
	t.Helper()
	ctx := context.Background()
	all, err := st.Audit(ctx, ledger.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	f := ledger.AuditFilter{Text: text, Newest: true}
	var want []int64
	for _, e := range slices.Backward(all) {
		if ledger.AuditMatches(f, e) {
			want = append(want, e.Seq)
		}
	}
	rows, err := st.Audit(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, e := range rows {
		if ledger.AuditMatches(f, e) {
			got = append(got, e.Seq)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("text %q: seqs %v, want %v", text, got, want)
	}
}

// TestAuditTextMergePacing: a ledger's text index merges its segments a
// little in each batch (automerge 8) and never a whole level at once while
// the incremental merges keep up (crisismerge 64): the pacing
// BenchmarkAuditTextBatches measures, which FTS5 keeps in the index's
// own config table.
func TestAuditTextMergePacing(t *testing.T) {
	path := t.TempDir() + "/ledger.db"
	st, err := sqlite.Open(path, sqlite.Options{Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db := openRaw(t, path)
	for k, want := range map[string]int{"automerge": 8, "crisismerge": 64} {
		var v int
		if err := db.QueryRow(`SELECT v FROM audit_text_config WHERE k = ?`, k).Scan(&v); err != nil || v != want {
			t.Errorf("audit_text's %s: %d (%v), want %d", k, v, err, want)
		}
	}
}
