package dispatch_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/alert"
	"github.com/quotagate/quotagate/backend/alert/dispatch"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/period"
	"github.com/quotagate/quotagate/backend/sqlite"
)

const secret = alert.Secret("whsec-test")

// wait bounds every wait for something the dispatcher does.
const wait = 10 * time.Second

// delivery is one request the receiver got, with its answer.
type delivery struct {
	body   []byte
	status int
	signed bool
}

// receiver is a webhook on loopback that answers 500 to its first fail
// requests and 200 after, and checks each signature.
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	fail int
	got  []delivery
	ok   chan []byte // each body answered 200
}

func newReceiver(t *testing.T, fail int) *receiver {
	r := &receiver{fail: fail, ok: make(chan []byte, 100)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		d := delivery{body: body, status: http.StatusOK, signed: alert.Verify(secret, body, req.Header.Get(alert.SignatureHeader))}
		r.mu.Lock()
		if len(r.got) < r.fail {
			d.status = http.StatusInternalServerError
		}
		r.got = append(r.got, d)
		r.mu.Unlock()
		w.WriteHeader(d.status)
		if d.status == http.StatusOK {
			r.ok <- body
		} else {
			io.WriteString(w, "receiver down")
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

// next is the next body answered 200.
func (r *receiver) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case b := <-r.ok:
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("body %s: %v", b, err)
		}
		return m
	case <-time.After(wait):
		t.Fatalf("no delivery within %v; got %d requests", wait, len(r.deliveries()))
		return nil
	}
}

// outcomes is the store as the dispatcher sees it, telling the test of
// each delivery recorded, failed or not.
type outcomes struct {
	*sqlite.Store
	recorded chan string // "delivered" or "failed"
}

func (o outcomes) AlertDelivered(ctx context.Context, id int64, at time.Time) error {
	defer func() { o.recorded <- "delivered" }()
	return o.Store.AlertDelivered(ctx, id, at)
}

func (o outcomes) AlertFailed(ctx context.Context, id int64, at time.Time, reason string, next time.Time) error {
	defer func() { o.recorded <- "failed" }()
	return o.Store.AlertFailed(ctx, id, at, reason, next)
}

func (o outcomes) want(t *testing.T, outcome string) {
	t.Helper()
	select {
	case got := <-o.recorded:
		if got != outcome {
			t.Fatalf("recorded %s, want %s", got, outcome)
		}
	case <-time.After(wait):
		t.Fatalf("no outcome recorded within %v, want %s", wait, outcome)
	}
}

// gateway is a store and its dispatcher, as the server wires them.
type gateway struct {
	store *sqlite.Store
	seen  outcomes
	d     *dispatch.Dispatcher
}

func start(t *testing.T, path string, o dispatch.Options) *gateway {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{Synchronous: "OFF", Now: o.Now})
	if err != nil {
		t.Fatal(err)
	}
	g := &gateway{store: st, seen: outcomes{Store: st, recorded: make(chan string, 100)}}
	o.Store, o.Secret = g.seen, secret
	if o.Backoff.First == 0 {
		o.Backoff = retryAt(20 * time.Millisecond)
	}
	g.d = dispatch.New(o)
	st.OnCommit(g.d.Committed)
	g.d.Start()
	t.Cleanup(g.close)
	return g
}

func (g *gateway) close() {
	g.d.Close()
	g.store.Close()
}

// retryAt is a backoff that waits d after every failure.
func retryAt(d time.Duration) alert.Backoff {
	return alert.Backoff{First: 2 * d, Max: 2 * d, Jitter: func() float64 { return 0 }}
}

func webhook(t *testing.T, r *receiver) *url.URL {
	u, err := alert.ParseWebhookURL("alerts.webhook.url", r.URL+"/hook")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestRacingCallsFireOneWebhook(t *testing.T) {
	r := newReceiver(t, 0)
	g := start(t, filepath.Join(t.TempDir(), "ledger.db"), dispatch.Options{Thresholds: alert.Thresholds{80}, Webhook: webhook(t, r)})
	ledgertest.MustApply(t, g.store, ledgertest.Tenant("acme", 5000, 50))
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			ledgertest.MustAdmit(t, g.store, ledger.AdmitRequest{RunID: ledger.RunID("run-" + string(rune('A'+i))), TenantID: "acme", ReserveUnits: 100})
		})
	}
	wg.Wait()
	// A held run after the burst: its alert is the tenant's next, so once
	// it arrives every alert of the burst has been delivered before it.
	if _, err := g.store.KeepHold(context.Background(), "run-A", ledger.RunInterrupted, "stream cut", ledger.ActorRecovery); err != nil {
		t.Fatal(err)
	}
	first, second := r.next(t), r.next(t)
	// used is the balance as the watcher read it: at least 80 %, at most all.
	if used, _ := strconv.Atoi(first["used"].(string)); first["kind"] != "threshold" || first["threshold"] != 80.0 || used < 4000 || used > 5000 {
		t.Fatalf("first alert %v", first)
	}
	if second["kind"] != "hold" || second["run"] != "run-A" || second["tenant"] != "acme" {
		t.Fatalf("second alert %v, want the hold of run-A", second)
	}
	g.seen.want(t, "delivered")
	g.seen.want(t, "delivered")
	if n := len(r.deliveries()); n != 2 {
		t.Fatalf("%d webhooks, want one for 80%% and one for the hold", n)
	}
	var alerts []ledger.AuditEntry
	rows, err := g.store.Audit(context.Background(), ledger.AuditFilter{TenantID: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rows {
		if e.Kind == ledger.AuditAlert {
			alerts = append(alerts, e)
		}
	}
	if len(alerts) != 2 || alerts[0].Reason != "threshold" || alerts[1].Reason != "hold" || alerts[0].Actor != ledger.ActorAlerts {
		t.Fatalf("alert audit rows %+v", alerts)
	}
}

// TestRetriedInOrderAcrossRestart: a receiver that answers 500 three times
// then 200 gets every alert once, in order, signed, though the gateway
// restarts between the failures; the wait after a failure is kept in the
// ledger across the restart.
func TestRetriedInOrderAcrossRestart(t *testing.T) {
	r := newReceiver(t, 3)
	path := filepath.Join(t.TempDir(), "ledger.db")
	o := dispatch.Options{Thresholds: alert.Thresholds{50, 80}, Webhook: webhook(t, r), Backoff: retryAt(time.Hour)}
	g := start(t, path, o)
	ledgertest.MustApply(t, g.store, ledgertest.Tenant("acme", 1000, 5))
	ledgertest.MustAdmit(t, g.store, ledger.AdmitRequest{RunID: "r1", TenantID: "acme", ReserveUnits: 500})
	g.seen.want(t, "failed")
	ledgertest.MustAdmit(t, g.store, ledger.AdmitRequest{RunID: "r2", TenantID: "acme", ReserveUnits: 300})
	if _, err := g.store.KeepHold(context.Background(), "r1", ledger.RunInterrupted, "stream cut", ledger.ActorRecovery); err != nil {
		t.Fatal(err)
	}
	g.close() // the 80 % and hold alerts are recorded, the first waits an hour to be retried

	// The gateway comes back on a clock two hours on (as
	// QUOTAGATE_CLOCK_OFFSET would shift it), when the stored retry is due.
	o.Backoff, o.Now = alert.Backoff{}, func() time.Time { return time.Now().Add(2 * time.Hour) }
	g = start(t, path, o)
	g.seen.want(t, "failed")
	g.seen.want(t, "failed")
	for _, want := range []struct {
		kind      string
		threshold any
	}{{"threshold", 50.0}, {"threshold", 80.0}, {"hold", nil}} {
		got := r.next(t)
		if got["kind"] != want.kind || got["threshold"] != want.threshold {
			t.Fatalf("delivered %v, want a %s alert (threshold %v)", got, want.kind, want.threshold)
		}
		g.seen.want(t, "delivered")
	}
	ds := r.deliveries()
	if len(ds) != 6 {
		t.Fatalf("%d requests, want 3 failures and 3 deliveries", len(ds))
	}
	for i, d := range ds {
		if !d.signed {
			t.Fatalf("request %d: the signature does not verify", i)
		}
		if i < 4 && string(d.body) != string(ds[0].body) {
			t.Fatalf("request %d is not the first alert again, byte for byte:\n%s\n%s", i, d.body, ds[0].body)
		}
	}
	st, err := g.d.Status(context.Background())
	if err != nil || st.Webhook.Pending != 0 || st.Webhook.Failing || st.Webhook.LastAttemptAt == nil || !st.Webhook.SecretSet {
		t.Fatalf("status %+v %+v, %v", st, st.Webhook, err)
	}
}

// TestFailingWebhookShows: a webhook that keeps failing is in the status,
// with its error, and the alerts wait in the outbox.
func TestFailingWebhookShows(t *testing.T) {
	r := newReceiver(t, 1000)
	g := start(t, filepath.Join(t.TempDir(), "ledger.db"), dispatch.Options{Thresholds: alert.Thresholds{50}, Webhook: webhook(t, r)})
	ledgertest.MustApply(t, g.store, ledgertest.Tenant("acme", 1000, 5))
	ledgertest.MustAdmit(t, g.store, ledger.AdmitRequest{RunID: "r1", TenantID: "acme", ReserveUnits: 600})
	g.seen.want(t, "failed")
	st, err := g.d.Status(context.Background())
	if err != nil || st.Webhook.Pending != 1 || !st.Webhook.Failing || st.Webhook.LastError != "HTTP 500: receiver down" {
		t.Fatalf("status %+v, %v", st.Webhook, err)
	}
	if b, err := json.Marshal(st); err != nil || strings.Contains(string(b), string(secret)) {
		t.Fatalf("the status shows the secret: %s, %v", b, err)
	}
}

// TestAdmissionNeverWaitsOnWebhook: while the webhook hangs, the tenant's
// calls are admitted and settled as ever.
func TestAdmissionNeverWaitsOnWebhook(t *testing.T) {
	entered, release := make(chan struct{}, 10), make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}))
	t.Cleanup(hook.Close)
	t.Cleanup(func() { close(release) })
	u, _ := url.Parse(hook.URL)
	g := start(t, filepath.Join(t.TempDir(), "ledger.db"), dispatch.Options{Thresholds: alert.Thresholds{1}, Webhook: u,
		Client: &http.Client{}}) // no timeout: a wait on the webhook would be forever
	ledgertest.MustApply(t, g.store, ledgertest.Tenant("acme", 1000, 5))
	ledgertest.MustAdmit(t, g.store, ledger.AdmitRequest{RunID: "r0", TenantID: "acme", ReserveUnits: 100})
	<-entered
	for i := range 20 {
		id := ledger.RunID("r" + strconv.Itoa(i+1))
		ledgertest.MustAdmit(t, g.store, ledger.AdmitRequest{RunID: id, TenantID: "acme", ReserveUnits: 10})
		if _, err := g.store.Settle(context.Background(), id, 5, "usage", ledger.TenantActor("acme")); err != nil {
			t.Fatal(err)
		}
	}
}

// TestThresholdOncePerPeriod: a monthly budget's threshold fires once in
// each month, labelled with it.
func TestThresholdOncePerPeriod(t *testing.T) {
	r := newReceiver(t, 0)
	var mu sync.Mutex
	now := time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	g := start(t, filepath.Join(t.TempDir(), "ledger.db"), dispatch.Options{Thresholds: alert.Thresholds{50}, Webhook: webhook(t, r), Now: clock})
	acme := ledgertest.Tenant("acme", 1000, 5)
	acme.Calendar = period.Calendar{Kind: period.Month, Zone: time.UTC}
	ledgertest.MustApply(t, g.store, acme)
	ledgertest.MustAdmit(t, g.store, ledger.AdmitRequest{RunID: "dec-1", TenantID: "acme", ReserveUnits: 600})
	ledgertest.MustAdmit(t, g.store, ledger.AdmitRequest{RunID: "dec-2", TenantID: "acme", ReserveUnits: 100})
	if got := r.next(t); got["period"] != "2026-12" || got["threshold"] != 50.0 {
		t.Fatalf("December's alert %v", got)
	}
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	ledgertest.MustAdmit(t, g.store, ledger.AdmitRequest{RunID: "jan-1", TenantID: "acme", ReserveUnits: 500})
	if got := r.next(t); got["period"] != "2027-01" || got["used"] != "500" || got["run"] != "jan-1" && got["run"] != nil {
		t.Fatalf("January's alert %v", got)
	}
	g.seen.want(t, "delivered")
	g.seen.want(t, "delivered")
	if n := len(r.deliveries()); n != 2 {
		t.Fatalf("%d webhooks, want one per month", n)
	}
}

// TestEvictAndRestore: the quota guard's eviction and restore of a model
// are alerts too, in the order they happened.
func TestEvictAndRestore(t *testing.T) {
	r := newReceiver(t, 0)
	g := start(t, filepath.Join(t.TempDir(), "ledger.db"), dispatch.Options{Webhook: webhook(t, r)})
	for _, kind := range []ledger.AuditKind{ledger.AuditEvict, ledger.AuditRestore} {
		if err := g.store.AppendAudit(context.Background(), ledger.AuditEntry{Kind: kind, Actor: ledger.ActorQuotaGuard,
			Reason: "usage_wall", Detail: "ark/deepseek-v4-flash day=2026-12-02 usage=1950000 limit=2000000"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"evict", "restore"} {
		if got := r.next(t); got["kind"] != want || got["tenant"] != nil || got["at"] == nil {
			t.Fatalf("delivered %v, want %s", got, want)
		}
	}
	rows, err := g.store.Audit(context.Background(), ledger.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if last := rows[len(rows)-1]; last.Kind != ledger.AuditAlert || last.Detail != "ark/deepseek-v4-flash restore: usage_wall" {
		t.Fatalf("last audit row %+v", last)
	}
}
