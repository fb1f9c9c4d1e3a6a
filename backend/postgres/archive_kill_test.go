package postgres_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/archive"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
)

// Environment of the child process of TestArchiveKill9.
const (
	archiveKillDSN = "QG_PG_ARCHIVE_KILL_DSN" // the ledger the child archives
	archiveKillDir = "QG_PG_ARCHIVE_KILL_DIR" // where its archive file goes
)

// The kill test's month: 160 runs in parts of 8, 20 transactions.
const (
	archiveKillRuns = 160
	archiveKillPart = 8
)

// TestArchiveKill9Child is not a test on its own: run by TestArchiveKill9
// as a child process, it archives October 2026 of the shared ledger as
// `quotagate archive --before 2026-11-01` does, printing each step ("STEP
// …") as it reaches it, then "DONE".
func TestArchiveKill9Child(t *testing.T) {
	dsn := os.Getenv(archiveKillDSN)
	if dsn == "" {
		t.Skip("child process of TestArchiveKill9")
	}
	defer postgres.SetArchivePartRuns(archiveKillPart)()
	defer postgres.SetArchiveStep(func(step string) error {
		fmt.Println("STEP", step)
		return nil
	})()
	st, err := postgres.Open(context.Background(), dsn, postgres.Options{Instance: "archive", Now: func() time.Time { return december }})
	if err == nil {
		_, err = st.ArchiveMonth(context.Background(), "2026-10", november,
			filepath.Join(os.Getenv(archiveKillDir), "2026-10.jsonl.gz"), ledger.Operator("cli"))
	}
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	st.Close()
	fmt.Println("DONE")
}

// TestArchiveKill9 on PostgreSQL: a child process archiving a month of 160
// runs is SIGKILLed at a random step (plus up to 3 ms), three times, each
// on a ledger of its own: every run is then in the ledger or in an
// archived part exactly once, verify is clean, the dead process's archive
// lock is gone, and archiving again finishes the month.
// QG_ARCHIVE_KILL_SEED=N replays a seed.
func TestArchiveKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	rng := ledgertest.KillSeed(t, "QG_ARCHIVE_KILL_SEED", 2)
	const steps = 2 + archiveKillRuns/archiveKillPart*2 - 1 // written, renamed, then "deleted" per part and "part N" between
	for round := range 3 {
		at, extra := rng.IntN(steps), time.Duration(rng.IntN(3000))*time.Microsecond
		dsn, dir := killBooks(t), t.TempDir()
		seen := runArchiveChild(t, dsn, dir, at, extra)
		t.Logf("round %d: killed after step %d (%s) + %s", round, at+1, seen[len(seen)-1], extra)
		st := mustOpen(t, dsn, postgres.Options{Instance: "check", Now: func() time.Time { return december }})
		file := filepath.Join(dir, "2026-10.jsonl.gz")
		wantEachRunOnce(t, st, dsn, file)
		wantClean(t, st)
		if _, err := st.ArchiveMonth(context.Background(), "2026-10", november, file, archiver); err != nil {
			t.Fatalf("archive again after the kill: %v", err)
		}
		if problems, err := st.CheckArchive(context.Background(), file); err != nil || len(problems) > 0 {
			t.Fatalf("verify --archive after finishing: %q, %v", problems, err)
		}
		wantClean(t, st)
		if months, err := st.ArchivableMonths(context.Background(), november); err != nil || len(months) > 0 {
			t.Fatalf("months left to archive: %v, %v", months, err)
		}
		st.Close()
	}
}

// killBooks is a fresh shared ledger of archiveKillRuns settled runs that
// ended in October 2026.
func killBooks(t *testing.T) string {
	t.Helper()
	var now atomic.Int64
	now.Store(time.Date(2026, 10, 10, 0, 0, 0, 0, time.UTC).UnixNano())
	dsn := pgtest.DSN(t)
	st := mustOpen(t, dsn, postgres.Options{Now: func() time.Time { return time.Unix(0, now.Load()) }})
	defer st.Close()
	ledgertest.MustApply(t, st, ledgertest.Tenant("t", 1_000_000, 8), ledgertest.Tenant("u", 1_000_000, 8))
	for i := range archiveKillRuns {
		id := ledger.RunID(fmt.Sprint("r", i))
		ledgertest.MustAdmit(t, st, ledger.AdmitRequest{RunID: id, TenantID: []string{"t", "u"}[i%2], ReserveUnits: 10})
		if _, err := st.Settle(context.Background(), id, 7, "usage", ledger.System("test")); err != nil {
			t.Fatal(err)
		}
	}
	return dsn
}

// wantEachRunOnce checks that every run of killBooks is either in the
// ledger or in a part of file the ledger keeps a summary of, exactly once.
func wantEachRunOnce(t *testing.T, st *postgres.Store, dsn, file string) {
	t.Helper()
	ctx := context.Background()
	conn := mustConnect(t, dsn)
	where := map[string]int{}
	rows, _ := conn.Query(ctx, `SELECT id FROM runs`)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		where[id]++
	}
	sums, err := st.ArchiveSummaries(ctx, "2026-10")
	if err != nil {
		t.Fatal(err)
	}
	done := map[int64]bool{}
	for _, s := range sums {
		done[s.Part] = true
	}
	if len(done) > 0 {
		if _, err := archive.ReadParts(file, func(p archive.Part) error {
			for _, id := range p.RunIDs {
				if done[p.Index] {
					where[id]++
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range archiveKillRuns {
		if id := fmt.Sprint("r", i); where[id] != 1 {
			t.Errorf("run %s is in %d of the ledger and the archived parts, want exactly 1", id, where[id])
		}
	}
}

// runArchiveChild runs TestArchiveKill9Child on the ledger at dsn and
// SIGKILLs it extra after the step numbered killAt (from 0); it returns
// the steps the child printed.
func runArchiveChild(t *testing.T, dsn, dir string, killAt int, extra time.Duration) []string {
	t.Helper()
	return ledgertest.RunArchiveChild(t, []string{archiveKillDSN + "=" + dsn, archiveKillDir + "=" + dir}, killAt, extra)
}
