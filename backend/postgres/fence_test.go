package postgres_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
)

// TestFencing: gateway a is judged dead while it relays (its lease row
// expires or is deleted, as a cut-off gateway's is) and gateway b ends its
// runs. What a then writes for them is refused in the same statement and
// kept as one late_end row each; a admits nothing until it holds a fresh
// lease epoch; every run ends once and verify is clean.
func TestFencing(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	// Heartbeats far apart: the test moves the leases itself.
	slow := postgres.LeaseOptions{Heartbeat: time.Hour, Expiry: 4 * time.Hour}
	a, b := mustOpen(t, dsn, postgres.Options{Instance: "a"}), mustOpen(t, dsn, postgres.Options{Instance: "b"})
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	for _, st := range []*postgres.Store{a, b} {
		if err := st.TakeLease(ctx, slow); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.ApplyTenants(ctx, []ledger.Tenant{{ID: "t", BudgetUnits: 10000, MaxConcurrent: 10}}, ledger.ActorConfig); err != nil {
		t.Fatal(err)
	}
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(ctx) })
	admit := func(st *postgres.Store, id string) error {
		_, err := st.Admit(ctx, ledger.AdmitRequest{RunID: ledger.RunID(id), TenantID: "t", Upstream: "up", Model: "m",
			ReserveUnits: 100, Actor: ledger.TenantActor("t")})
		return err
	}
	for _, id := range []string{"run_expired", "run_deleted", "run_settles"} {
		if err := admit(a, id); err != nil {
			t.Fatal(err)
		}
	}

	// Expired and reaped: b ends run_expired (and run_deleted, then
	// run_settles) interrupted before a writes their ends.
	exec(t, db, `UPDATE instances SET expires_at = 0 WHERE name = 'a'`)
	var told [][]string
	b.OnReaped(func(dead []string) { told = append(told, dead) })
	if n, err := b.ReapExpired(ctx); err != nil || n != 3 {
		t.Fatalf("reap: %d runs, %v; want 3", n, err)
	}
	if len(told) != 1 || !slices.Equal(told[0], []string{"a"}) {
		t.Fatalf("b was told %v of the dead, want [[a]]", told)
	}
	b.OnReaped(func([]string) {}) // b's own heartbeat reaps too from here on
	_, err = a.Settle(ctx, "run_expired", 40, "usage reported", ledger.TenantActor("t"))
	if !errors.Is(err, ledger.ErrLateEnd) || ledger.ErrorCode(err) != ledger.CodeRunEnded {
		t.Fatalf("late settle: %v; want run_ended with ErrLateEnd", err)
	}
	// A retry of the same late end keeps no second row.
	_, _ = a.Settle(ctx, "run_expired", 40, "usage reported", ledger.TenantActor("t"))
	_, err = a.KeepHold(ctx, "run_deleted", ledger.RunCompleted, "no usage", ledger.TenantActor("t"))
	if !errors.Is(err, ledger.ErrLateEnd) {
		t.Fatalf("late keep hold: %v", err)
	}

	// a admits nothing under its dead epoch, then registers afresh.
	err = admit(a, "run_refused")
	if ledger.ErrorCode(err) != ledger.CodeLedgerUnavailable || ledger.RetryAfter(err) <= 0 {
		t.Fatalf("admit under a reaped lease: %v; want ledger_unavailable with Retry-After", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for admit(a, "run_fresh") != nil {
		if time.Now().After(deadline) {
			t.Fatal("a never admitted again under a fresh lease")
		}
		time.Sleep(20 * time.Millisecond) // the kicked heartbeat re-registers a in the background
	}

	// Deleted, not yet reaped: a's end of run_fresh is refused while its
	// lease row is gone, and b then ends it once.
	exec(t, db, `DELETE FROM instances WHERE name = 'a'`)
	if _, err := a.Settle(ctx, "run_fresh", 30, "usage reported", ledger.TenantActor("t")); !errors.Is(err, ledger.ErrLateEnd) {
		t.Fatalf("settle of a run whose lease is gone: %v", err)
	}
	// b ends it, unless a's own heartbeat (kicked by the refused
	// admissions above) found the orphan first: either way, once.
	if _, err := b.ReapExpired(ctx); err != nil {
		t.Fatal(err)
	}

	for id, want := range map[string]int{"run_expired": 1, "run_deleted": 1, "run_settles": 0, "run_fresh": 1} {
		rows, err := a.Audit(ctx, ledger.AuditFilter{RunID: ledger.RunID(id)})
		if err != nil {
			t.Fatal(err)
		}
		ends, late := 0, 0
		for _, e := range rows {
			switch e.Kind {
			case ledger.AuditSettle, ledger.AuditHold, ledger.AuditRecover, ledger.AuditRelease, ledger.AuditCancel:
				ends++
			case ledger.AuditLateEnd:
				late++
				if e.Actor != ledger.LeaseActor("a") {
					t.Errorf("%s: late end by %s", id, e.Actor)
				}
			}
		}
		if ends != 1 || late != want {
			t.Errorf("%s: %d ends, %d late ends; want 1 and %d", id, ends, late, want)
		}
		run, err := a.Run(ctx, ledger.RunID(id))
		if err != nil || run.Status != ledger.RunInterrupted || run.HeldUnits != 100 {
			t.Errorf("%s: %+v, %v; want interrupted holding 100", id, run, err)
		}
	}
	if problems, err := a.Verify(ctx); err != nil || len(problems) > 0 {
		t.Fatalf("verify: %v %v", problems, err)
	}
}

func exec(t *testing.T, db *pgx.Conn, sql string) {
	t.Helper()
	if _, err := db.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
}
