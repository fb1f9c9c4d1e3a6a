package sqlite_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/archive"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

var archiver = ledger.Operator("test")

// archiveLedger writes the books of ledgertest.ArchiveBooks (runs that end
// in October and November 2026) and returns its store and its path.
func archiveLedger(t *testing.T) (*sqlite.Store, string) {
	t.Helper()
	var now atomic.Int64
	path := filepath.Join(t.TempDir(), "ledger.db")
	st, err := sqlite.Open(path, sqlite.Options{Now: func() time.Time { return time.Unix(0, now.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ledgertest.ArchiveBooks(t, st, func(at time.Time) { now.Store(at.UnixNano()) })
	return st, path
}

// dumpRows is every run and every audit row but archiving's own, as text.
func dumpRows(t *testing.T, path string) string {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var b strings.Builder
	for _, q := range []string{`SELECT * FROM runs ORDER BY id`,
		`SELECT * FROM audit WHERE kind != 'archive' AND kind != 'unarchive' ORDER BY seq`} {
		rows, err := raw.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, vals...)
		}
		rows.Close()
	}
	return b.String()
}

func archiveMonths(t *testing.T, st *sqlite.Store, dir string, before time.Time) []ledger.ArchivedMonth {
	t.Helper()
	months, err := st.ArchivableMonths(context.Background(), before)
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.ArchivedMonth
	for _, m := range months {
		res, err := st.ArchiveMonth(context.Background(), m, before, filepath.Join(dir, m+".jsonl.gz"), archiver)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res)
	}
	return out
}

func wantClean(t *testing.T, st *sqlite.Store, opts ledger.VerifyOptions) {
	t.Helper()
	problems, err := st.VerifyWith(context.Background(), opts)
	if err != nil || len(problems) > 0 {
		t.Fatalf("verify %+v: %q, %v", opts, problems, err)
	}
}

// restoreExactly restores the months done and wants verify clean and every
// row of the ledger at path as before (dumpRows).
func restoreExactly(t *testing.T, st *sqlite.Store, path, before string, done []ledger.ArchivedMonth) {
	t.Helper()
	for _, m := range done {
		if _, err := st.RestoreArchive(context.Background(), m.File, archiver); err != nil {
			t.Fatal(err)
		}
	}
	wantClean(t, st, ledger.VerifyOptions{Full: true})
	if after := dumpRows(t, path); after != before {
		t.Fatalf("restored ledger differs:\n%s\nwas\n%s", after, before)
	}
}

// TestArchiveRoundTrip: two months leave the ledger for two files, verify
// stays clean from the summaries, each file checks against its summary,
// the held run stays, and restoring both puts back exactly what left.
func TestArchiveRoundTrip(t *testing.T) {
	st, path := archiveLedger(t)
	ctx := context.Background()
	before := dumpRows(t, path)
	wantClean(t, st, ledger.VerifyOptions{Checkpoint: true})
	dir := t.TempDir()
	done := archiveMonths(t, st, dir, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if len(done) != 2 || done[0].Month != "2026-10" || done[0].Runs != 12 || done[1].Runs != 12 {
		t.Fatalf("archived %+v, want October and November with 12 runs each", done)
	}
	if _, err := st.Run(ctx, "held"); err != nil {
		t.Fatalf("the held run left the ledger: %v", err)
	}
	if _, err := st.Run(ctx, "t0-0"); err == nil {
		t.Fatal("an archived run is still in the ledger")
	}
	wantClean(t, st, ledger.VerifyOptions{})
	wantClean(t, st, ledger.VerifyOptions{Full: true, Checkpoint: true})
	wantClean(t, st, ledger.VerifyOptions{})
	for _, m := range done {
		problems, err := st.CheckArchive(ctx, m.File)
		if err != nil || len(problems) > 0 {
			t.Fatalf("verify --archive %s: %q, %v", m.File, problems, err)
		}
	}
	restoreExactly(t, st, path, before, done)
	if _, err := st.RestoreArchive(ctx, done[0].File, archiver); err == nil || !strings.Contains(err.Error(), "no summary") {
		t.Fatalf("a second restore: %v, want a refusal saying the ledger keeps no summary", err)
	}
}

// TestRestoreNamesTheRowInTheWay: an audit row of the archived month is
// restored many to a statement; when a row already in the ledger stands in
// the way of one, restore names that row and changes nothing (the month
// stays archived), and once the row is gone it restores exactly.
func TestRestoreNamesTheRowInTheWay(t *testing.T) {
	st, path := archiveLedger(t)
	ctx := context.Background()
	before := dumpRows(t, path)
	done := archiveMonths(t, st, t.TempDir(), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	db := openRaw(t, path)
	var seq, parts int64
	if err := db.QueryRow(`SELECT max(last_seq), count(*) FROM archive_summaries WHERE month = ?`, done[0].Month).
		Scan(&seq, &parts); err != nil || parts == 0 {
		t.Fatalf("summaries of %s: %d, %v", done[0].Month, parts, err)
	}
	if _, err := db.Exec(`INSERT INTO audit (seq, at, kind, tenant_id, run_id, actor, reason, evidence, units,
		available_before, available_after, detail, balance, count, last_at, micros, period, provider_id)
		VALUES (?, 0, 'note', 't', '', 'admin', 'in the way', '', 0, 0, 0, '', 0, 1, 0, 0, '', '')`, seq); err != nil {
		t.Fatal(err)
	}
	_, err := st.RestoreArchive(ctx, done[0].File, archiver)
	if want := fmt.Sprintf("audit row %d (", seq); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("restore over a row in the way: %v, want an error naming %q", err, want)
	}
	var left int64
	if err := db.QueryRow(`SELECT count(*) FROM archive_summaries WHERE month = ?`, done[0].Month).Scan(&left); err != nil || left != parts {
		t.Fatalf("%d summaries of %s after the refused restore, want %d (%v)", left, done[0].Month, parts, err)
	}
	for _, q := range []string{`INSERT INTO archive_unlock (month) VALUES ('test')`, `DELETE FROM audit WHERE seq = ` + fmt.Sprint(seq),
		`DELETE FROM archive_unlock`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	restoreExactly(t, st, path, before, done)
}

// TestArchiveAlteredFile: verify --archive names the row that was edited
// in the file, and restore refuses the file.
func TestArchiveAlteredFile(t *testing.T) {
	st, _ := archiveLedger(t)
	done := archiveMonths(t, st, t.TempDir(), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	file := done[0].File
	rewriteArchive(t, file, func(line string) string {
		if strings.Contains(line, `"kind":"settle"`) && strings.Contains(line, `"run_id":"t0-1"`) {
			return strings.Replace(line, `"units":21`, `"units":2`, 1)
		}
		return line
	})
	problems, err := st.CheckArchive(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	wantLine(t, problems, "(settle of run t0-1) was altered")
	wantLine(t, problems, "tenant t period \"\": the archive's rows add up to")
	if _, err := st.RestoreArchive(context.Background(), file, archiver); err == nil {
		t.Fatal("an altered archive was restored")
	}
	wantClean(t, st, ledger.VerifyOptions{Full: true})
}

// rewriteArchive applies edit to each line of the archive at path.
func rewriteArchive(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	if _, err := plain.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(plain.String(), "\n")
	for i := range lines {
		lines[i] = edit(lines[i])
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write([]byte(strings.Join(lines, "\n")))
	zw.Close()
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

var errCrash = errors.New("crash")

// TestArchiveCrashPoints stops archiving at each step as a crash would:
// the month stays whole in the ledger (verify clean, no summary, a file
// left behind fails verify --archive), and archiving again succeeds.
func TestArchiveCrashPoints(t *testing.T) {
	for _, step := range []string{"written", "renamed", "deleted"} {
		t.Run(step, func(t *testing.T) {
			st, path := archiveLedger(t)
			ctx := context.Background()
			before := dumpRows(t, path)
			dir := t.TempDir()
			file := filepath.Join(dir, "2026-10.jsonl.gz")
			cutoff := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			undo := sqlite.SetArchiveStep(func(s string) error {
				if s == step {
					return errCrash
				}
				return nil
			})
			_, err := st.ArchiveMonth(ctx, "2026-10", cutoff, file, archiver)
			undo()
			if !errors.Is(err, errCrash) {
				t.Fatalf("archive stopped at %s: %v", step, err)
			}
			wantClean(t, st, ledger.VerifyOptions{Full: true})
			if after := dumpRows(t, path); after != before {
				t.Fatal("a crash mid-archive changed the ledger")
			}
			if _, err := os.Stat(file); err == nil {
				problems, err := st.CheckArchive(ctx, file)
				if err != nil {
					t.Fatal(err)
				}
				wantLine(t, problems, "the ledger keeps no summary of it")
			}
			res, err := st.ArchiveMonth(ctx, "2026-10", cutoff, file, archiver)
			if err != nil || res.Runs != 12 {
				t.Fatalf("archive again: %+v, %v", res, err)
			}
			if problems, err := st.CheckArchive(ctx, file); err != nil || len(problems) > 0 {
				t.Fatalf("verify --archive: %q, %v", problems, err)
			}
			wantClean(t, st, ledger.VerifyOptions{Full: true})
		})
	}
}

// wantEachRunOnce checks the crash rule at the level a reader sees it:
// every run of want is either in the ledger or in a part of file the
// ledger keeps a summary of, never both, never neither.
func wantEachRunOnce(t *testing.T, st *sqlite.Store, path, file string, want []string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	where := map[string]int{}
	rows, err := raw.Query(`SELECT id FROM runs`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		where[id]++
	}
	rows.Close()
	sums, err := st.ArchiveSummaries(context.Background(), "2026-10")
	if err != nil {
		t.Fatal(err)
	}
	done := map[int64]bool{}
	for _, s := range sums {
		done[s.Part] = true
	}
	if len(done) > 0 {
		if _, err := archive.ReadParts(file, func(p archive.Part) error {
			for _, rec := range p.Records {
				if id, _ := rec.Row["id"].(string); rec.Table == archive.TableRuns && done[p.Index] {
					where[id]++
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range want {
		if where[id] != 1 {
			t.Errorf("run %s is in %d of the ledger and the archived parts, want exactly 1", id, where[id])
		}
	}
}

// TestArchiveInParts: October's 12 archivable runs leave in six parts of
// two runs, each with its own summaries; a crash before any part or inside
// any part's transaction leaves every run in the ledger or in an archived
// part exactly once, verify clean (from the first row and from a
// checkpoint) and verify --archive naming the parts still in the ledger;
// archiving again resumes in the same file, whatever path it is given,
// and a restore stopped part way finishes when run again.
func TestArchiveInParts(t *testing.T) {
	defer sqlite.SetArchivePartRuns(2)()
	cutoff := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var steps []string
	for i := 1; i < 6; i++ {
		steps = append(steps, fmt.Sprintf("part %d", i))
	}
	for _, step := range append(steps, "deleted#4") {
		t.Run(step, func(t *testing.T) {
			st, path := archiveLedger(t)
			ctx := context.Background()
			before := dumpRows(t, path)
			wantClean(t, st, ledger.VerifyOptions{Checkpoint: true})
			file := filepath.Join(t.TempDir(), "2026-10.jsonl.gz")
			deleted := 0
			undo := sqlite.SetArchiveStep(func(s string) error {
				if s == "deleted" {
					deleted++
					s = fmt.Sprintf("deleted#%d", deleted)
				}
				if s == step {
					return errCrash
				}
				return nil
			})
			_, err := st.ArchiveMonth(ctx, "2026-10", cutoff, file, archiver)
			undo()
			if !errors.Is(err, errCrash) {
				t.Fatalf("archive stopped at %s: %v", step, err)
			}
			wantEachRunOnce(t, st, path, file, ledgertest.OctoberRuns())
			wantClean(t, st, ledger.VerifyOptions{})
			wantClean(t, st, ledger.VerifyOptions{Full: true, Checkpoint: true})
			problems, err := st.CheckArchive(ctx, file)
			if err != nil {
				t.Fatal(err)
			}
			wantLine(t, problems, "still in the ledger, not archived: archiving stopped part way")
			res, err := st.ArchiveMonth(ctx, "2026-10", cutoff, filepath.Join(t.TempDir(), "elsewhere.jsonl.gz"), archiver)
			if err != nil || res.File != file || res.Runs == 0 {
				t.Fatalf("archive again: %+v, %v; want the rest moved into %s", res, err, file)
			}
			sums, _ := st.ArchiveSummaries(ctx, "2026-10")
			if len(sums) != 12 || sums[11].Part != 5 || sums[0].TenantID != "p" || sums[1].TenantID != "t" {
				t.Fatalf("%d summaries, want two per part (a run of p and one of t, as they were admitted) in six parts", len(sums))
			}
			if problems, err := st.CheckArchive(ctx, file); err != nil || len(problems) > 0 {
				t.Fatalf("verify --archive: %q, %v", problems, err)
			}
			wantClean(t, st, ledger.VerifyOptions{})
			wantClean(t, st, ledger.VerifyOptions{Full: true})
			restoreStoppingAt(t, st, file, "restore part 3")
			wantEachRunOnce(t, st, path, file, ledgertest.OctoberRuns())
			wantClean(t, st, ledger.VerifyOptions{Full: true})
			if _, err := st.RestoreArchive(ctx, file, archiver); err != nil {
				t.Fatal(err)
			}
			wantClean(t, st, ledger.VerifyOptions{Full: true})
			if after := dumpRows(t, path); after != before {
				t.Fatalf("restored ledger differs:\n%s\nwas\n%s", after, before)
			}
		})
	}
}

// restoreStoppingAt restores file until step, as a crash there would.
func restoreStoppingAt(t *testing.T, st *sqlite.Store, file, step string) {
	t.Helper()
	undo := sqlite.SetArchiveStep(func(s string) error {
		if s == step {
			return errCrash
		}
		return nil
	})
	defer undo()
	if _, err := st.RestoreArchive(context.Background(), file, archiver); !errors.Is(err, errCrash) {
		t.Fatalf("restore stopped at %s: %v", step, err)
	}
}
