package postgres_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
)

var (
	archiver = ledger.Operator("test")
	november = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	december = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	errCrash = errors.New("crash")
)

// archiveBooks opens a store on a fresh schema filled by
// ledgertest.ArchiveBooks and returns it with its DSN.
func archiveBooks(t *testing.T) (*postgres.Store, string) {
	t.Helper()
	var now atomic.Int64
	dsn := pgtest.DSN(t)
	st := mustOpen(t, dsn, postgres.Options{Now: func() time.Time { return time.Unix(0, now.Load()) }})
	t.Cleanup(func() { st.Close() })
	ledgertest.ArchiveBooks(t, st, func(at time.Time) { now.Store(at.UnixNano()) })
	return st, dsn
}

// dumpRows is every run and every audit row but archiving's own, as text.
func dumpRows(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	conn := mustConnect(t, dsn)
	var b strings.Builder
	for _, q := range []string{`SELECT * FROM runs ORDER BY id`,
		`SELECT * FROM audit WHERE kind NOT IN ('archive', 'unarchive') ORDER BY seq`} {
		rows, err := conn.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, vals...)
		}
		rows.Close()
	}
	return b.String()
}

func wantClean(t *testing.T, st *postgres.Store) {
	t.Helper()
	problems, err := st.Verify(context.Background())
	if err != nil || len(problems) > 0 {
		t.Fatalf("verify: %q, %v", problems, err)
	}
}

func wantLine(t *testing.T, lines []string, part string) {
	t.Helper()
	for _, l := range lines {
		if strings.Contains(l, part) {
			return
		}
	}
	t.Fatalf("no line contains %q in %q", part, lines)
}

// stopAt makes archiving stop at step as a crash would; it returns the
// undo.
func stopAt(step string) func() {
	return postgres.SetArchiveStep(func(s string) error {
		if s == step {
			return errCrash
		}
		return nil
	})
}

// TestArchive on PostgreSQL: October leaves the ledger in six parts of two
// runs; stopped before part 3, verify is clean and verify --archive names
// the parts still in the ledger; archiving again finishes in the same
// file; the held run stays; verify stays clean from the summaries; a
// restore stopped part way finishes when run again, and the ledger is
// exactly what it was.
func TestArchive(t *testing.T) {
	defer postgres.SetArchivePartRuns(2)()
	st, dsn := archiveBooks(t)
	ctx := context.Background()
	before := dumpRows(t, dsn)
	file := filepath.Join(t.TempDir(), "2026-10.jsonl.gz")
	undo := stopAt("part 3")
	_, err := st.ArchiveMonth(ctx, "2026-10", november, file, archiver)
	undo()
	if !errors.Is(err, errCrash) {
		t.Fatalf("archive stopped before part 3: %v", err)
	}
	wantClean(t, st)
	problems, err := st.CheckArchive(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	wantLine(t, problems, "parts 3, 4, 5 of "+file+" are still in the ledger")
	months, err := st.ArchivableMonths(ctx, november)
	if err != nil || len(months) != 1 || months[0] != "2026-10" {
		t.Fatalf("archivable months %v, %v", months, err)
	}
	res, err := st.ArchiveMonth(ctx, "2026-10", november, filepath.Join(t.TempDir(), "elsewhere.jsonl.gz"), archiver)
	if err != nil || res.File != file || res.Runs != 6 {
		t.Fatalf("archive again: %+v, %v; want the last 6 runs moved into %s", res, err, file)
	}
	if _, err := st.Run(ctx, "held"); err != nil {
		t.Fatalf("the held run left the ledger: %v", err)
	}
	if _, err := st.Run(ctx, "t0-0"); err == nil {
		t.Fatal("an archived run is still in the ledger")
	}
	if problems, err := st.CheckArchive(ctx, file); err != nil || len(problems) > 0 {
		t.Fatalf("verify --archive: %q, %v", problems, err)
	}
	wantClean(t, st)
	undo = stopAt("restore part 2")
	_, err = st.RestoreArchive(ctx, file, archiver)
	undo()
	if !errors.Is(err, errCrash) {
		t.Fatalf("restore stopped before part 2: %v", err)
	}
	wantClean(t, st)
	if _, err := st.RestoreArchive(ctx, file, archiver); err != nil {
		t.Fatal(err)
	}
	wantClean(t, st)
	if after := dumpRows(t, dsn); after != before {
		t.Fatalf("restored ledger differs:\n%s\nwas\n%s", after, before)
	}
}

// TestArchiveAlteredFile on PostgreSQL: verify --archive names the row
// that was edited in the file, and restore refuses the file.
func TestArchiveAlteredFile(t *testing.T) {
	st, _ := archiveBooks(t)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "2026-10.jsonl.gz")
	if _, err := st.ArchiveMonth(ctx, "2026-10", november, file, archiver); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	plain.ReadFrom(zr)
	edited := strings.Replace(plain.String(), `"spent_units":21`, `"spent_units":2`, 1)
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write([]byte(edited))
	zw.Close()
	if err := os.WriteFile(file, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	problems, err := st.CheckArchive(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	wantLine(t, problems, "run t0-1 was altered")
	if _, err := st.RestoreArchive(ctx, file, archiver); err == nil {
		t.Fatal("an altered archive was restored")
	}
	wantClean(t, st)
}

// TestArchiveOneAtATime: while one gateway archives a shared ledger, a
// second gateway's archive is refused (the ledger's archive lock), and
// once the first is done the month is archived once.
func TestArchiveOneAtATime(t *testing.T) {
	first, dsn := archiveBooks(t)
	second := mustOpen(t, dsn, postgres.Options{Instance: "gw-2", Now: func() time.Time { return december }})
	defer second.Close()
	ctx := context.Background()
	dir := t.TempDir()
	inside, release := make(chan struct{}), make(chan struct{})
	undo := postgres.SetArchiveStep(func(s string) error {
		if s == "renamed" {
			close(inside)
			<-release
		}
		return nil
	})
	defer undo()
	done := make(chan error, 1)
	go func() {
		_, err := first.ArchiveMonth(ctx, "2026-10", november, filepath.Join(dir, "first.jsonl.gz"), archiver)
		done <- err
	}()
	<-inside
	_, err := second.ArchiveMonth(ctx, "2026-10", november, filepath.Join(dir, "second.jsonl.gz"), archiver)
	if ledger.ErrorCode(err) != ledger.CodeConflict || !strings.Contains(err.Error(), "another gateway") {
		t.Errorf("a second archive at once: %v, want a conflict naming the other archive", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sums, err := second.ArchiveSummaries(ctx, "2026-10")
	if err != nil || len(sums) != 2 {
		t.Fatalf("summaries %+v, %v: want October archived once (tenants p and t)", sums, err)
	}
	wantClean(t, second)
}
