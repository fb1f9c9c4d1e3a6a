package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// Environment of the child process of TestArchiveKill9.
const (
	archiveKillLedger = "QG_ARCHIVE_KILL_LEDGER" // the ledger file the child archives
	archiveKillDir    = "QG_ARCHIVE_KILL_DIR"    // where its archive files go
)

// archiveKillRuns and archiveKillPart size the kill test's month: parts of
// 20 runs, so that a kill lands among some 50 transactions.
const (
	archiveKillRuns = 1_000
	archiveKillPart = 20
)

// TestArchiveKill9Child is not a test on its own: run by TestArchiveKill9
// (and by TestAuditTextKill9, see textKillChild) as a child process, it archives every closed month of the ledger the way
// `quotagate archive --before 2026-11-01` does, printing each step
// ("STEP …") as it reaches it, then "DONE".
func TestArchiveKill9Child(t *testing.T) {
	if path := os.Getenv(textKillLedger); path != "" {
		textKillChild(path) // TestAuditTextKill9's
		return
	}
	path := os.Getenv(archiveKillLedger)
	if path == "" {
		t.Skip("child process of TestArchiveKill9")
	}
	undo := sqlite.SetArchiveStep(func(step string) error {
		fmt.Println("STEP", step)
		return nil
	})
	defer undo()
	st, err := sqlite.Open(path, sqlite.Options{ArchivePartRuns: archiveKillPart, Now: func() time.Time { return december }})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	if err := archiveAll(st, os.Getenv(archiveKillDir)); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	st.Close()
	fmt.Println("DONE")
}

// archiveAll archives every month that ended before November 2026 into
// dir, as `quotagate archive` does.
func archiveAll(st *sqlite.Store, dir string) error {
	ctx := context.Background()
	months, err := st.ArchivableMonths(ctx, november)
	if err != nil {
		return err
	}
	for _, m := range months {
		if _, err := st.ArchiveMonth(ctx, m, november, filepath.Join(dir, m+".jsonl.gz"), ledger.Operator("cli")); err != nil {
			return err
		}
	}
	return nil
}

// TestArchiveKill9 archives a month of 1,000 runs in a real child process
// and SIGKILLs it at a random moment (a random step of the archive, plus
// up to 3 ms), five times: each time, every run is either in the ledger or
// in an archived part exactly once, verify is clean, and archiving again
// finishes the month (verify --archive clean, verify clean, the month's
// runs gone). QG_ARCHIVE_KILL_SEED=N replays a seed.
func TestArchiveKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	rng := ledgertest.KillSeed(t, "QG_ARCHIVE_KILL_SEED", 1)
	base := killLedger(t)
	ids := make([]string, archiveKillRuns)
	for i := range ids {
		ids[i] = fmt.Sprint("r", i+1)
	}
	steps := len(runArchiveChild(t, copyLedger(t, base), -1, 0))
	for round := range 5 {
		at, extra := rng.IntN(steps), time.Duration(rng.IntN(3000))*time.Microsecond
		path := copyLedger(t, base)
		seen := runArchiveChild(t, path, at, extra)
		t.Logf("round %d: killed after step %d of %d (%s) + %s", round, at+1, steps, seen[len(seen)-1], extra)
		st, err := sqlite.Open(path, sqlite.Options{ArchivePartRuns: archiveKillPart, Now: func() time.Time { return december }})
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(filepath.Dir(path), "2026-10.jsonl.gz")
		wantEachRunOnce(t, st, path, file, ids)
		wantClean(t, st, ledger.VerifyOptions{Full: true})
		if err := archiveAll(st, filepath.Dir(path)); err != nil {
			t.Fatalf("archive again after the kill: %v", err)
		}
		if problems, err := st.CheckArchive(context.Background(), file); err != nil || len(problems) > 0 {
			t.Fatalf("verify --archive after finishing: %q, %v", problems, err)
		}
		wantClean(t, st, ledger.VerifyOptions{Full: true})
		if months, err := st.ArchivableMonths(context.Background(), november); err != nil || len(months) > 0 {
			t.Fatalf("months left to archive: %v, %v", months, err)
		}
		st.Close()
	}
}

// killLedger is a ledger of archiveKillRuns settled runs that ended in
// October 2026.
func killLedger(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	fill, err := sqlite.Open(path, sqlite.Options{Synchronous: "OFF", Now: func() time.Time { return october }})
	if err != nil {
		t.Fatal(err)
	}
	settleRuns(t, fill, archiveKillRuns)
	if err := fill.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// copyLedger copies the ledger file at path (closed: no WAL beside it)
// into a directory of its own.
func copyLedger(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "ledger.db")
	if err := os.WriteFile(dst, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// runArchiveChild runs TestArchiveKill9Child on the ledger at path and
// returns the steps it printed. With killAt ≥ 0 it SIGKILLs the child
// extra after the step numbered killAt (from 0); otherwise it waits for
// DONE.
func runArchiveChild(t *testing.T, path string, killAt int, extra time.Duration) []string {
	t.Helper()
	return ledgertest.RunArchiveChild(t, []string{archiveKillLedger + "=" + path, archiveKillDir + "=" + filepath.Dir(path)}, killAt, extra)
}
