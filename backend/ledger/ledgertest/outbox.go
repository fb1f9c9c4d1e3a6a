package ledgertest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// RunOutbox checks a store's ledger.Outbox: an alert is recorded once per
// key however many callers race, with its audit row; each tenant's alerts
// come due one at a time in recording order, a failed one after its next
// try; the body reads back byte for byte.
func RunOutbox(t *testing.T, open Opener) {
	t.Run("RecordOnce", func(t *testing.T) { testRecordOnce(t, outboxOf(t, open(t))) })
	t.Run("DueInOrderPerTenant", func(t *testing.T) { testDueInOrder(t, outboxOf(t, open(t))) })
	t.Run("Status", func(t *testing.T) { testOutboxStatus(t, outboxOf(t, open(t))) })
}

type outboxStore interface {
	ledger.Store
	ledger.Outbox
}

func outboxOf(tb testing.TB, st ledger.Store) outboxStore {
	tb.Helper()
	o, ok := st.(outboxStore)
	if !ok {
		tb.Fatalf("%T is not a ledger.Outbox", st)
	}
	return o
}

// outboxAt is the tests' clock: stores keep nanoseconds.
var outboxAt = time.Date(2026, 12, 14, 9, 30, 0, 123_000_000, time.UTC)

func alertRecord(key, tenant string) ledger.AlertRecord {
	body := fmt.Appendf(nil, `{"kind":"threshold","tenant":%q,"key":%q}`, tenant, key)
	return ledger.AlertRecord{Key: key, Tenant: tenant, Kind: "threshold", RunID: "run-" + ledger.RunID(key),
		Body: body, At: outboxAt, Detail: "80% of the budget", Deliver: true}
}

func testRecordOnce(t *testing.T, st outboxStore) {
	ctx := context.Background()
	MustApply(t, st, Tenant("acme", 1000, 1))
	var commits atomic.Int64
	st.OnCommit(func(_ context.Context, changes []ledger.Change) {
		for _, c := range changes {
			if c.Kind == ledger.AuditAlert {
				commits.Add(1)
			}
		}
	})
	var recorded atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			ok, err := st.RecordAlert(ctx, alertRecord("threshold:acme:80:2026-12:units", "acme"))
			if err != nil {
				t.Error(err)
			}
			if ok {
				recorded.Add(1)
			}
		})
	}
	wg.Wait()
	if recorded.Load() != 1 || commits.Load() != 1 {
		t.Fatalf("50 racing records: %d recorded, %d alert changes committed; want 1 and 1", recorded.Load(), commits.Load())
	}
	var alerts []ledger.AuditEntry
	for _, e := range tenantAudit(t, st, "acme") {
		if e.Kind == ledger.AuditAlert {
			alerts = append(alerts, e)
		}
	}
	if len(alerts) != 1 || alerts[0].Actor != ledger.ActorAlerts || alerts[0].Reason != "threshold" ||
		alerts[0].RunID != "run-threshold:acme:80:2026-12:units" || alerts[0].Detail != "80% of the budget" {
		t.Fatalf("alert audit rows: %+v", alerts)
	}
	due, err := st.DueAlerts(ctx, outboxAt, time.Minute, 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("due = %+v, %v", due, err)
	}
	if want := alertRecord("threshold:acme:80:2026-12:units", "acme").Body; !bytes.Equal(due[0].Body, want) || !due[0].At.Equal(outboxAt) {
		t.Fatalf("read back %s at %v, want %s at %v", due[0].Body, due[0].At, want, outboxAt)
	}
	WantVerified(t, st)
}

func testDueInOrder(t *testing.T, st outboxStore) {
	ctx := context.Background()
	for _, r := range []ledger.AlertRecord{alertRecord("a1", "a"), alertRecord("b1", "b"), alertRecord("a2", "a"),
		alertRecord("m1", ""), alertRecord("b2", "b")} {
		mustRecord(t, st, r)
	}
	quiet := alertRecord("q1", "a")
	quiet.Deliver = false
	mustRecord(t, st, quiet)
	wantDue(t, st, outboxAt, "a1", "b1", "m1")
	a1 := mustDue(t, st, outboxAt)[0]
	next := outboxAt.Add(time.Hour)
	if err := st.AlertFailed(ctx, a1.ID, outboxAt, "HTTP 500", next); err != nil {
		t.Fatal(err)
	}
	// a's head waits for its next try; a2 is not due before a1 is delivered.
	wantDue(t, st, outboxAt.Add(time.Minute), "b1", "m1")
	again := mustDue(t, st, next)
	if again[0].Key != "a1" || again[0].Attempts != 1 || again[0].LastError != "HTTP 500" ||
		!again[0].LastAttemptAt.Equal(outboxAt) || !again[0].NextTry.Equal(next) {
		t.Fatalf("after a failure: %+v", again[0])
	}
	for _, a := range mustDue(t, st, next) {
		if err := st.AlertDelivered(ctx, a.ID, next); err != nil {
			t.Fatal(err)
		}
	}
	wantDue(t, st, next, "a2", "b2")
}

func testOutboxStatus(t *testing.T, st outboxStore) {
	ctx := context.Background()
	mustRecord(t, st, alertRecord("a1", "a"))
	mustRecord(t, st, alertRecord("a2", "a"))
	wantStatus(t, st, ledger.OutboxStatus{Pending: 2, NextDue: time.Unix(0, 0)})
	a1 := mustDue(t, st, outboxAt)[0]
	if err := st.AlertFailed(ctx, a1.ID, outboxAt, "connection refused", outboxAt.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	// a2 waits behind a1: the next alert due is a1, at its next try.
	wantStatus(t, st, ledger.OutboxStatus{Pending: 2, LastError: "connection refused", LastAttemptAt: outboxAt, NextDue: outboxAt.Add(time.Second)})
	later := outboxAt.Add(2 * time.Second)
	if err := st.AlertDelivered(ctx, a1.ID, later); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, st, ledger.OutboxStatus{Pending: 1, LastAttemptAt: later, NextDue: time.Unix(0, 0)})
	if err := st.AlertFailed(ctx, mustDue(t, st, later)[0].ID, later, "HTTP 503", later.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, st, ledger.OutboxStatus{Pending: 1, LastError: "HTTP 503", LastAttemptAt: later, NextDue: later.Add(time.Minute)})
	if err := st.AlertDelivered(ctx, mustDue(t, st, later.Add(time.Minute))[0].ID, later.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, st, ledger.OutboxStatus{LastAttemptAt: later.Add(time.Minute)})
}

func mustRecord(tb testing.TB, st outboxStore, r ledger.AlertRecord) {
	tb.Helper()
	if ok, err := st.RecordAlert(context.Background(), r); err != nil || !ok {
		tb.Fatalf("record %s: %v, %v", r.Key, ok, err)
	}
}

func mustDue(tb testing.TB, st outboxStore, now time.Time) []ledger.OutboxAlert {
	tb.Helper()
	due, err := st.DueAlerts(context.Background(), now, 0, 100)
	if err != nil {
		tb.Fatal(err)
	}
	return due
}

func wantDue(tb testing.TB, st outboxStore, now time.Time, keys ...string) {
	tb.Helper()
	due := mustDue(tb, st, now)
	got := make([]string, len(due))
	for i, a := range due {
		got[i] = a.Key
	}
	if fmt.Sprint(got) != fmt.Sprint(keys) {
		tb.Fatalf("due at %v: %v, want %v", now, got, keys)
	}
}

func wantStatus(tb testing.TB, st outboxStore, want ledger.OutboxStatus) {
	tb.Helper()
	got, err := st.OutboxStatus(context.Background())
	if err != nil || got.Pending != want.Pending || got.LastError != want.LastError || !got.LastAttemptAt.Equal(want.LastAttemptAt) ||
		!got.NextDue.Equal(want.NextDue) {
		tb.Fatalf("status %+v, %v; want %+v", got, err, want)
	}
}
