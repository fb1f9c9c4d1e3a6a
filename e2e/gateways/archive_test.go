package gateways_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
	"github.com/quotagate/quotagate/backend/server"
)

// TestArchiveSharedLedger: `quotagate archive --before` (server.Archive, as
// the command runs it) archives the closed month of a shared PostgreSQL
// ledger, `verify` and `verify --archive` are clean, and `archive restore`
// puts the month back.
func TestArchiveSharedLedger(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	today := time.Now().UTC()
	var now atomic.Int64
	now.Store(time.Date(today.Year(), today.Month()-2, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	st, err := postgres.Open(ctx, dsn, postgres.Options{Instance: "gw-0", Now: func() time.Time { return time.Unix(0, now.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	ledgertest.MustApply(t, st, ledgertest.Tenant("a", 100_000, 4))
	for i := range 5 {
		id := ledger.RunID(fmt.Sprint("old-", i))
		ledgertest.MustAdmit(t, st, ledger.AdmitRequest{RunID: id, TenantID: "a", ReserveUnits: 50})
		if _, err := st.Settle(ctx, id, 20, "usage", ledger.System("test")); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	yaml := fmt.Sprintf("tenants:\n  - {id: a, key: %q, budget_units: 100000}\nledger: {driver: postgres, dsn: %q, instance: gw-0}\n", keyA, dsn)
	cfg, err := config.Parse([]byte(yaml), os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := server.Options{Config: cfg, DataDir: dir}
	cut := time.Date(today.Year(), today.Month()-1, 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	rep, err := server.Archive(ctx, o, cut, "")
	if err != nil || len(rep.Months) != 1 || rep.Months[0].Runs != 5 {
		t.Fatalf("archive of the shared ledger: %+v, %v", rep, err)
	}
	file := rep.Months[0].File
	if !strings.HasPrefix(file, filepath.Join(dir, server.ArchiveDir)) {
		t.Errorf("archived to %s, want the data dir's %s", file, server.ArchiveDir)
	}
	for _, check := range []func() ([]string, error){
		func() ([]string, error) { return server.VerifyArchive(ctx, o, file) },
		func() ([]string, error) { return server.VerifyWith(ctx, o, server.VerifyOptions{Full: true}) },
	} {
		if diffs, err := check(); err != nil || len(diffs) > 0 {
			t.Fatalf("verify: %q, %v", diffs, err)
		}
	}
	if res, err := server.RestoreArchive(ctx, o, file); err != nil || res.Runs != 5 {
		t.Fatalf("restore into the shared ledger: %+v, %v", res, err)
	}
	if diffs, err := server.VerifyWith(ctx, o, server.VerifyOptions{Full: true}); err != nil || len(diffs) > 0 {
		t.Fatalf("verify after restore: %q, %v", diffs, err)
	}
}
