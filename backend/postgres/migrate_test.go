package postgres_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/period"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// TestMigrateSQLite copies a desktop ledger (simulated histories, a run left
// open, a snapshot) into an empty shared one: the copy verifies, balances,
// runs and audit rows are equal, the open run is ended interrupted with its
// hold kept, and a second migrate into the now used ledger is refused.
func TestMigrateSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	src, err := sqlite.Open(path, sqlite.Options{Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(5) {
		m := &ledgertest.Machine{Store: src, Prefix: "m" + string(rune('a'+seed)), SkipFinalVerify: true}
		if err := m.Run(ledgertest.Program(seed, 30)); err != nil {
			t.Fatal(err)
		}
	}
	ledgertest.MustApply(t, src, ledgertest.Tenant("open", 500, 2),
		ledgertest.PeriodTenant("monthly", 500, 2, period.Calendar{Kind: period.Month, Zone: berlin}))
	ledgertest.MustAdmit(t, src, ledger.AdmitRequest{RunID: "monthly-settled", TenantID: "monthly", ReserveUnits: 30})
	if _, err := src.Settle(ctx, "monthly-settled", 20, "usage", ledger.System("gateway")); err != nil {
		t.Fatal(err)
	}
	ledgertest.MustAdmit(t, src, ledger.AdmitRequest{RunID: "left-open", TenantID: "open", ReserveUnits: 40, Actor: ledger.System("gateway")})
	if _, err := src.SaveSnapshot(ctx, ledger.Snapshot{Upstream: "ark", Model: "m", Day: "2026-12-01", BalanceUnits: 9, Source: "manual"}); err != nil {
		t.Fatal(err)
	}
	wantRuns, _ := src.Runs(ctx, ledger.RunFilter{Limit: 1 << 20})
	wantAudit, _ := src.Audit(ctx, ledger.AuditFilter{})
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}

	dsn := pgtest.DSN(t)
	res, err := postgres.MigrateSQLite(ctx, path, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) > 0 {
		t.Fatalf("the copy does not verify: %s", strings.Join(res.Problems, "\n"))
	}
	if res.Interrupted != 1 || res.Rows["runs"] != len(wantRuns) || res.Rows["snapshots"] != 1 || res.Rows["tenant_periods"] != 1 {
		t.Fatalf("copied %+v (interrupted %d), want %d runs, 1 snapshot, 1 period, 1 interrupted", res.Rows, res.Interrupted, len(wantRuns))
	}
	dst := mustOpen(t, dsn, postgres.Options{})
	defer dst.Close()
	gotRuns, _ := dst.Runs(ctx, ledger.RunFilter{Limit: 1 << 20})
	open, _ := dst.Run(ctx, "left-open")
	if open.Status != ledger.RunInterrupted || open.HeldUnits != 40 {
		t.Fatalf("the run left open = %+v, want interrupted holding 40", open)
	}
	gotAudit, _ := dst.Audit(ctx, ledger.AuditFilter{})
	if len(gotAudit) != len(wantAudit)+1 { // + the recover row written before the copy
		t.Fatalf("audit rows: %d copied, source had %d (+1 recover)", len(gotAudit), len(wantAudit))
	}
	if !slices.EqualFunc(gotAudit[:len(wantAudit)], wantAudit, func(a, b ledger.AuditEntry) bool { return a == b }) {
		t.Fatal("the copied audit rows differ from the source's")
	}
	if len(gotRuns) != len(wantRuns) {
		t.Fatalf("runs: %d copied, %d in the source", len(gotRuns), len(wantRuns))
	}
	// New rows continue the sequence.
	ledgertest.MustAdmit(t, dst, ledger.AdmitRequest{RunID: "after", TenantID: "open", ReserveUnits: 1, Actor: ledger.System("gateway")})
	ledgertest.WantVerified(t, dst)

	_, err = postgres.MigrateSQLite(ctx, path, dsn)
	if err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Fatalf("second migrate: err = %v, want a refusal of a used ledger", err)
	}
}

// TestMigrateArchivedMonths: a desktop ledger with a month in an archive
// file is copied with its summaries: the shared ledger verifies from them,
// and the file checks against it and restores into it.
func TestMigrateArchivedMonths(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	now := time.Date(2026, 10, 5, 12, 0, 0, 0, time.UTC)
	src, err := sqlite.Open(path, sqlite.Options{Synchronous: "OFF", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ledgertest.MustApply(t, src, ledgertest.Tenant("t", 500, 2))
	for _, id := range []ledger.RunID{"october", "december"} {
		if id == "december" {
			now = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
		}
		ledgertest.MustAdmit(t, src, ledger.AdmitRequest{RunID: id, TenantID: "t", ReserveUnits: 30})
		if _, err := src.Settle(ctx, id, 20, "usage", ledger.System("gateway")); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "2026-10.jsonl.gz")
	if _, err := src.ArchiveMonth(ctx, "2026-10", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), file, ledger.Operator("test")); err != nil {
		t.Fatal(err)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}

	dsn := pgtest.DSN(t)
	res, err := postgres.MigrateSQLite(ctx, path, dsn)
	if err != nil || len(res.Problems) > 0 || res.Rows["archive_summaries"] != 1 {
		t.Fatalf("migrate of an archived ledger: %+v, %v; want it copied with its summary, verified", res, err)
	}
	dst, err := postgres.Open(ctx, dsn, postgres.Options{Instance: "check"})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if problems, err := dst.CheckArchive(ctx, file); err != nil || len(problems) > 0 {
		t.Fatalf("verify --archive against the shared ledger: %q, %v", problems, err)
	}
	if _, err := dst.RestoreArchive(ctx, file, ledger.Operator("test")); err != nil {
		t.Fatal(err)
	}
	if problems, err := dst.Verify(ctx); err != nil || len(problems) > 0 {
		t.Fatalf("verify after restoring into the shared ledger: %q, %v", problems, err)
	}
	if _, err := dst.Run(ctx, "october"); err != nil {
		t.Fatalf("the restored run: %v", err)
	}
}
