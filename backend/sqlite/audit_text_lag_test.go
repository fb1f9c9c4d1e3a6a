package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// TestAuditTextSearchAcrossTheMark: the text index holds the rows up to
// its mark and is written after commit; a search finds exactly the rows a
// read of the whole trail does, page by page in both orders, whether the
// rows are all above the mark, on both sides of it, or all below; after an
// archive deletes rows on both sides and after a restore writes them back
// below it; and FTS5's check of the index against the rows up to the mark
// holds each time (and fails once the mark is moved past rows by hand).
func TestAuditTextSearchAcrossTheMark(t *testing.T) {
	ctx := context.Background()
	var now atomic.Int64
	path := t.TempDir() + "/ledger.db"
	st, err := sqlite.Open(path, sqlite.Options{AuditTextBatch: -1, Now: func() time.Time { return time.Unix(0, now.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ledgertest.ArchiveBooks(t, st, func(at time.Time) { now.Store(at.UnixNano()) })
	rows, mark := textMark(t, path)
	if mark != 0 || rows == 0 {
		t.Fatalf("mark %d with %d rows: want every row above the mark", mark, rows)
	}
	wantTextIndexTrue(t, st, path)
	if wantTextPages(t, st) == 0 {
		t.Fatal("the texts searched are nowhere")
	}

	if err := st.IndexAuditText(ctx, int(rows/2)); err != nil {
		t.Fatal(err)
	}
	wantTextIndexTrue(t, st, path)
	wantTextPages(t, st)

	done := archiveMonths(t, st, t.TempDir(), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if len(done) != 2 {
		t.Fatalf("archived %+v, want two months", done)
	}
	if after, mark := textMark(t, path); after >= rows || mark == 0 {
		t.Fatalf("%d rows after the archive, mark %d", after, mark)
	}
	wantTextIndexTrue(t, st, path)
	wantTextPages(t, st)

	for _, m := range done {
		if _, err := st.RestoreArchive(ctx, m.File, archiver); err != nil {
			t.Fatal(err)
		}
	}
	wantTextIndexTrue(t, st, path)
	wantTextPages(t, st)

	if err := st.IndexAuditText(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if rows, mark := textMark(t, path); rows != textRowsUpTo(t, path, mark) {
		t.Fatalf("%d rows, %d up to the mark %d after indexing them all", rows, textRowsUpTo(t, path, mark), mark)
	}
	wantTextIndexTrue(t, st, path)
	wantTextPages(t, st)

	// The check compares: a mark moved past rows the index lacks fails it.
	st.Close()
	db := openRaw(t, path)
	if _, err := db.Exec(`INSERT INTO audit (seq, at, kind, tenant_id, run_id, actor, reason, evidence, units,
		available_before, available_after, detail, balance, count, last_at, micros, period, provider_id)
		VALUES ((SELECT max(seq) + 1 FROM audit), 0, 'note', 't', '', 'admin', 'x', '', 0, 0, 0, 'needle', 0, 1, 0, 0, '', '')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE audit_text_mark SET seq = (SELECT max(seq) FROM audit)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO audit_text (audit_text, rank) VALUES ('integrity-check', 1)`); err == nil {
		t.Fatal("FTS5's check passed with a row up to the mark left out of the index")
	}
}

// TestAuditTextKeptUpByTheWriter: the writer indexes once a batch of rows
// waits, before it takes the next write, so at most a batch (and the row
// of the write just answered) is ever above the mark.
func TestAuditTextKeptUpByTheWriter(t *testing.T) {
	const batch = 8
	ctx := context.Background()
	path := t.TempDir() + "/ledger.db"
	st, err := sqlite.Open(path, sqlite.Options{Synchronous: "OFF", AuditTextBatch: batch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for i := range 5 * batch {
		if err := st.AppendAudit(ctx, ledger.AuditEntry{Kind: "note", Actor: ledger.ActorAdmin, Detail: fmt.Sprint("note ", i)}); err != nil {
			t.Fatal(err)
		}
		rows, mark := textMark(t, path)
		if above := rows - textRowsUpTo(t, path, mark); above > batch+1 {
			t.Fatalf("after %d rows: %d above the mark", i+1, above)
		}
	}
	if _, mark := textMark(t, path); mark == 0 {
		t.Fatal("the writer indexed nothing")
	}
	// Idle, the writer indexes what is left, and says so only once it
	// committed: a lag of 0 is a mark at the last row.
	for deadline := time.Now().Add(10 * time.Second); st.AuditTextLag() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("lag %d after 10 s idle", st.AuditTextLag())
		}
	}
	if rows, mark := textMark(t, path); rows != textRowsUpTo(t, path, mark) {
		t.Fatalf("lag 0 with %d of %d rows up to the mark", textRowsUpTo(t, path, mark), rows)
	}
	wantTextIndexTrue(t, st, path)
}

// Environment of TestAuditTextKill9's child (run through
// TestArchiveKill9Child).
const textKillLedger = "QG_TEXT_KILL_LEDGER"

// textKillChild appends textKillRows audit rows one by one to the ledger at
// path, the writer indexing them every textKillBatch rows, printing
// "STEP n" after each row and "DONE" at the end.
func textKillChild(path string) {
	st, err := sqlite.Open(path, sqlite.Options{Synchronous: "OFF", AuditTextBatch: textKillBatch})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	for i := range textKillRows {
		e := ledger.AuditEntry{Kind: "note", Actor: ledger.ActorAdmin, Detail: fmt.Sprint("killed note ", i)}
		if err := st.AppendAudit(context.Background(), e); err != nil {
			fmt.Println("ERROR", err)
			os.Exit(2)
		}
		fmt.Println("STEP", i)
	}
	st.Close()
	fmt.Println("DONE")
}

const (
	textKillRows  = 300
	textKillBatch = 8
)

// TestAuditTextKill9 appends audit rows in a child process whose writer
// indexes them every few rows, and SIGKILLs it at a random moment, five
// times: each time the index holds exactly the rows up to its mark
// (FTS5's check), the file is whole, a search finds exactly the rows a read
// of the trail does, and once the rest is indexed all that holds again.
// QG_TEXT_KILL_SEED=N replays a seed.
func TestAuditTextKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	rng := ledgertest.KillSeed(t, "QG_TEXT_KILL_SEED", 2)
	for round := range 5 {
		path := t.TempDir() + "/ledger.db"
		at, extra := rng.IntN(textKillRows), time.Duration(rng.IntN(3000))*time.Microsecond
		ledgertest.RunArchiveChild(t, []string{textKillLedger + "=" + path}, at, extra)
		st, err := sqlite.Open(path, sqlite.Options{Synchronous: "OFF", AuditTextBatch: -1})
		if err != nil {
			t.Fatal(err)
		}
		rows, mark := textMark(t, path)
		t.Logf("round %d: killed after row %d + %s: %d rows, mark %d", round, at+1, extra, rows, mark)
		wantTextIndexTrue(t, st, path)
		wantTextFound(t, st, "killed note 1")
		if err := st.IndexAuditText(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
		wantTextIndexTrue(t, st, path)
		wantTextFound(t, st, "killed note 1")
		st.Close()
	}
}

// wantTextPages: a text search read in pages of three, newest first below
// a cursor and oldest first above one, finds exactly the rows a read of the
// whole trail does, in order. It returns how many rows it found.
func wantTextPages(t *testing.T, st *sqlite.Store) (found int) {
	t.Helper()
	ctx := context.Background()
	all, err := st.Audit(ctx, ledger.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"usage", "tenant:t", "t1-2"} {
		for _, newest := range []bool{true, false} {
			f := ledger.AuditFilter{Text: text, Newest: newest, Limit: 3}
			var want, got []int64
			for _, e := range all {
				if ledger.AuditMatches(f, e) {
					want = append(want, e.Seq)
				}
			}
			if newest {
				slices.Reverse(want)
			}
			for {
				page, err := st.Audit(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range page {
					if ledger.AuditMatches(f, e) {
						got = append(got, e.Seq)
					}
				}
				if len(page) < f.Limit {
					break
				}
				if newest {
					f.BeforeSeq = page[len(page)-1].Seq
				} else {
					f.AfterSeq = page[len(page)-1].Seq
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("text %q newest %v: pages hold %v, want %v", text, newest, got, want)
			}
			found += len(got)
		}
	}
	return found
}

// textMark reads the ledger at path: its audit rows and the text index's
// mark.
func textMark(t *testing.T, path string) (rows, mark int64) {
	t.Helper()
	if err := openRaw(t, path).QueryRow(`SELECT (SELECT count(*) FROM audit), seq FROM audit_text_mark`).Scan(&rows, &mark); err != nil {
		t.Fatal(err)
	}
	return rows, mark
}

// textRowsUpTo counts the ledger's audit rows at or below seq.
func textRowsUpTo(t *testing.T, path string, seq int64) int64 {
	t.Helper()
	var n int64
	if err := openRaw(t, path).QueryRow(`SELECT count(*) FROM audit WHERE seq <= ?`, seq).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// openRaw opens the file at path on a connection of the test's own.
func openRaw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
