package postgres_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
)

// verified is a verify of st with opts: what it found, where its replay
// started and how many audit rows it replayed.
type verified struct {
	problems []string
	resumed  int64
	replayed int
}

func verifyFrom(t *testing.T, st *postgres.Store, opts ledger.VerifyOptions) verified {
	t.Helper()
	problems, resumed, replayed, err := postgres.VerifyFrom(context.Background(), st, opts)
	if err != nil {
		t.Fatalf("verify %+v: %v", opts, err)
	}
	return verified{problems, resumed, replayed}
}

func wantCleanFrom(t *testing.T, st *postgres.Store, opts ledger.VerifyOptions) verified {
	t.Helper()
	got := verifyFrom(t, st, opts)
	if len(got.problems) > 0 {
		t.Fatalf("verify %+v: %q", opts, got.problems)
	}
	return got
}

// mustConnect connects to dsn as the ledger's role, behind the store's
// back, until the test ends.
func mustConnect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// rawExec runs query on dsn as the ledger's role, behind the store's back.
func rawExec(t *testing.T, dsn, query string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn := mustConnect(t, dsn)
	if _, err := conn.Exec(ctx, query, args...); err != nil {
		t.Fatal(err)
	}
}

func tamperBooks(t *testing.T) (*postgres.Store, string) {
	t.Helper()
	dsn := pgtest.DSN(t)
	st := mustOpen(t, dsn, postgres.Options{})
	t.Cleanup(func() { st.Close() })
	ledgertest.TamperBooks(t, st)
	return st, dsn
}

func settleOne(t *testing.T, st ledger.Store, id ledger.RunID, tenant string) {
	t.Helper()
	ledgertest.MustAdmit(t, st, ledger.AdmitRequest{RunID: id, TenantID: tenant, ReserveUnits: 5})
	if _, err := st.Settle(context.Background(), id, 3, "usage", ledger.System("test")); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpoint runs the checkpoint suite of backend/ledger/ledgertest.
func TestCheckpoint(t *testing.T) {
	ledgertest.RunCheckpoint(t, func(t *testing.T) ledgertest.CheckpointLedger {
		dsn := pgtest.DSN(t)
		st := mustOpen(t, dsn, postgres.Options{})
		t.Cleanup(func() { st.Close() })
		return ledgertest.CheckpointLedger{Store: st,
			Verify: func(t *testing.T, opts ledger.VerifyOptions) ([]string, int64, int) {
				t.Helper()
				got := verifyFrom(t, st, opts)
				return got.problems, got.resumed, got.replayed
			},
			Exec: func(t *testing.T, query string) { rawExec(t, dsn, query) }}
	})
}

// TestCheckpointThatDisagrees on PostgreSQL: a checkpoint edited behind
// the store's back fails its digest; edited with a digest to match, it is
// reported by the replay that starts from it, and by a full one.
func TestCheckpointThatDisagrees(t *testing.T) {
	st, dsn := tamperBooks(t)
	wantCleanFrom(t, st, ledger.VerifyOptions{Checkpoint: true})
	rawExec(t, dsn, `UPDATE verify_checkpoints SET checkpoint = replace(checkpoint, '"spent":7', '"spent":8')`)
	for _, opts := range []ledger.VerifyOptions{{}, {Full: true}} {
		got := verifyFrom(t, st, opts)
		wantLine(t, got.problems, "changed after verify wrote it (its digest no longer matches)")
		if got.resumed != 0 {
			t.Fatalf("verify %+v started from the altered checkpoint at %d", opts, got.resumed)
		}
	}
	rawExec(t, dsn, `UPDATE verify_checkpoints SET digest = encode(sha256(convert_to(checkpoint, 'UTF8')), 'hex')`)
	wantLine(t, verifyFrom(t, st, ledger.VerifyOptions{}).problems,
		"tenant t: spent 7 but its settle and reconcile audit rows add up to 8 (replayed from the checkpoint at seq")
	wantLine(t, verifyFrom(t, st, ledger.VerifyOptions{Full: true}).problems, "tenant t stood at available 51 spent 8")
}

// TestCheckpointBelowARowInFlight: a gateway's transaction numbered an
// audit row (a budget raise of tenant t) and has not committed when
// another gateway's later rows commit and verify runs. The checkpoint
// must not stand past the row in flight: verify waits for it, and the
// replays after the checkpoint, and a full one, are clean once it commits.
// A checkpoint at the last seq verify saw would skip the raise for good.
func TestCheckpointBelowARowInFlight(t *testing.T) {
	st, dsn := tamperBooks(t)
	ctx := context.Background()
	wantCleanFrom(t, st, ledger.VerifyOptions{Checkpoint: true})
	conn := mustConnect(t, dsn)
	raise, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer raise.Rollback(ctx)
	var seq int64
	if _, err := raise.Exec(ctx, `UPDATE tenants SET budget_units = 110 WHERE id = 't'`); err != nil {
		t.Fatal(err)
	}
	if err := raise.QueryRow(ctx, `INSERT INTO audit (at, kind, tenant_id, available_before, available_after, balance)
		VALUES (1, 'config', 't', 51, 61, true) RETURNING seq`).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	settleOne(t, st, "later", "p") // numbered after the raise, committed before it
	waiting := make(chan struct{})
	defer postgres.SetHorizonWaits(func() { close(waiting) })()
	done := make(chan verified, 1)
	go func() {
		problems, resumed, replayed, err := postgres.VerifyFrom(ctx, st, ledger.VerifyOptions{Checkpoint: true})
		if err != nil {
			problems = append(problems, err.Error())
		}
		done <- verified{problems, resumed, replayed}
	}()
	select {
	case <-waiting:
	case got := <-done:
		done <- got // verify did not wait for the raise: the checks below fail
	}
	if err := raise.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := <-done; len(got.problems) > 0 {
		t.Fatalf("verify while the raise was in flight: %q", got.problems)
	}
	after := wantCleanFrom(t, st, ledger.VerifyOptions{})
	if after.resumed < seq {
		t.Fatalf("the next verify started at %d, want a checkpoint at or past the raise (%d) once it committed", after.resumed, seq)
	}
	wantCleanFrom(t, st, ledger.VerifyOptions{Full: true})
}

// TestCheckpointWhenAWriterLingers: a transaction that holds the audit
// table past the wait (as an archive part may) leaves the verify clean
// but without a new checkpoint; the next replay starts from the last one.
func TestCheckpointWhenAWriterLingers(t *testing.T) {
	st, dsn := tamperBooks(t)
	ctx := context.Background()
	wantCleanFrom(t, st, ledger.VerifyOptions{Checkpoint: true})
	settleOne(t, st, "later", "t")
	linger, err := mustConnect(t, dsn).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer linger.Rollback(ctx)
	if _, err := linger.Exec(ctx, `LOCK TABLE audit IN ROW EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	wantCleanFrom(t, st, ledger.VerifyOptions{Checkpoint: true})
	linger.Rollback(ctx)
	if got := wantCleanFrom(t, st, ledger.VerifyOptions{}); got.replayed != 2 {
		t.Fatalf("the replay after the lingering writer read %d rows, want the 2 after the first checkpoint", got.replayed)
	}
}

// TestCheckpointWhileGatewaysWrite: two gateways admit and settle on one
// ledger while verify runs again and again, each from the last checkpoint
// and leaving the next: every verify is clean, and so are the replay
// from the last checkpoint and a full one afterwards.
func TestCheckpointWhileGatewaysWrite(t *testing.T) {
	dsn := pgtest.DSN(t)
	a := mustOpen(t, dsn, postgres.Options{Instance: "a"})
	defer a.Close()
	b := mustOpen(t, dsn, postgres.Options{Instance: "b"})
	defer b.Close()
	ledgertest.MustApply(t, a, ledgertest.Tenant("t", 1_000_000, 64), ledgertest.Tenant("u", 1_000_000, 64))
	var writers sync.WaitGroup
	for w := range 6 {
		st := []*postgres.Store{a, b}[w%2]
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := range 30 {
				id := ledger.RunID(fmt.Sprintf("w%d-%d", w, i))
				tenant := []string{"t", "u"}[(w+i)%2]
				if _, err := st.Admit(context.Background(), ledger.AdmitRequest{RunID: id, TenantID: tenant, ReserveUnits: 5,
					Upstream: "demo", Model: "demo-model"}); err != nil {
					t.Error(err)
					return
				}
				if _, err := st.Settle(context.Background(), id, ledger.Units(i%6), "usage", ledger.System("test")); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	go func() { writers.Wait(); close(stop) }()
	verifies := 0
	var dirty []string
	for running := true; running && len(dirty) == 0; verifies++ {
		select {
		case <-stop:
			running = false
		default:
		}
		problems, _, _, err := postgres.VerifyFrom(context.Background(), a, ledger.VerifyOptions{Checkpoint: true})
		if err != nil {
			problems = append(problems, err.Error())
		}
		dirty = problems
	}
	<-stop
	if len(dirty) > 0 {
		t.Fatalf("verify %d while the gateways wrote: %q", verifies, dirty)
	}
	settleOne(t, b, "last", "u")
	if got := wantCleanFrom(t, a, ledger.VerifyOptions{}); got.resumed == 0 || got.replayed != 2 {
		t.Fatalf("after %d verifies the last started at %d and replayed %d rows, want a checkpoint and 2 rows", verifies, got.resumed, got.replayed)
	}
	wantCleanFrom(t, a, ledger.VerifyOptions{Full: true})
}

// TestCheckpointAndArchive on PostgreSQL: a month archived after a
// checkpoint sets it aside (the next verify replays everything from the
// summaries), a new checkpoint stands on the summaries, and a restore sets
// that one aside in turn.
func TestCheckpointAndArchive(t *testing.T) {
	defer postgres.SetArchivePartRuns(2)()
	st, _ := archiveBooks(t)
	ctx := context.Background()
	wantCleanFrom(t, st, ledger.VerifyOptions{Checkpoint: true})
	file := filepath.Join(t.TempDir(), "2026-10.jsonl.gz")
	if _, err := st.ArchiveMonth(ctx, "2026-10", november, file, archiver); err != nil {
		t.Fatal(err)
	}
	if got := wantCleanFrom(t, st, ledger.VerifyOptions{Checkpoint: true}); got.resumed != 0 {
		t.Fatalf("verify after the archive started from the checkpoint at %d before it", got.resumed)
	}
	wantCleanFrom(t, st, ledger.VerifyOptions{Full: true})
	if got := wantCleanFrom(t, st, ledger.VerifyOptions{}); got.resumed == 0 || got.replayed != 0 {
		t.Fatalf("verify after a checkpoint on the summaries started at %d and replayed %d rows", got.resumed, got.replayed)
	}
	if _, err := st.RestoreArchive(ctx, file, archiver); err != nil {
		t.Fatal(err)
	}
	if got := wantCleanFrom(t, st, ledger.VerifyOptions{Checkpoint: true}); got.resumed != 0 {
		t.Fatalf("verify after the restore started from the checkpoint at %d before it", got.resumed)
	}
	wantCleanFrom(t, st, ledger.VerifyOptions{})
	wantCleanFrom(t, st, ledger.VerifyOptions{Full: true})
}
