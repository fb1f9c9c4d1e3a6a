package dispatch

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/quotagate/quotagate/backend/alert"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/notify"
)

// Store is the part of the ledger alerts read and write.
type Store interface {
	ledger.Outbox
	Balance(ctx context.Context, tenantID string) (ledger.Balance, error)
	Balances(ctx context.Context) ([]ledger.Balance, error)
	Runs(ctx context.Context, f ledger.RunFilter) ([]ledger.Run, error)
	Audit(ctx context.Context, f ledger.AuditFilter) ([]ledger.AuditEntry, error)
}

// Notifier shows a desktop notification (*notify.Notifier).
type Notifier interface {
	Send(ctx context.Context, n notify.Notification) (uint32, error)
}

// Defaults for Options.
const (
	DefaultTimeout = 10 * time.Second
	// DefaultLease bounds a claim on an alert: longer than a batch of
	// deliveries at DefaultTimeout each, so that no other gateway takes
	// an alert over while it is being sent.
	DefaultLease = 2 * time.Minute
	// claimBatch is how many alerts one claim takes.
	claimBatch = 8
	// idlePoll is how often the sender looks at the outbox with nothing
	// due: alerts recorded here or by another gateway wake it sooner.
	idlePoll = time.Minute
)

// Options configure a Dispatcher. Store is required.
type Options struct {
	Store      Store
	Thresholds alert.Thresholds
	Webhook    *url.URL     // nil: no webhook; alerts are audited and notified only
	Secret     alert.Secret // "" sends unsigned
	Currency   string       // the gateway's, for money budgets
	Notifier   Notifier     // nil: no desktop notification
	Client     *http.Client // nil: one with DefaultTimeout
	Backoff    alert.Backoff
	Lease      time.Duration // 0: DefaultLease
	Now        func() time.Time
	Logger     *slog.Logger
}

// Dispatcher turns committed changes into alerts and delivers them.
type Dispatcher struct {
	o             Options
	log           *slog.Logger
	queue         *queue
	wake          chan struct{} // the sender's, capacity 1
	ctx           context.Context
	stop          context.CancelFunc // ends ctx, once the watcher has drained its queue
	watched, sent sync.WaitGroup
	closed        sync.Once

	seen map[string]bool // threshold keys recorded or found recorded; the watcher's only
}

// New returns a Dispatcher; Start runs it.
func New(o Options) *Dispatcher {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Client == nil {
		// A redirect is a failed delivery, not followed: the URL checked at
		// start (https, or http to loopback) is the only one sent to.
		o.Client = &http.Client{Timeout: DefaultTimeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	}
	o.Lease = cmp.Or(o.Lease, DefaultLease)
	ctx, stop := context.WithCancel(context.Background())
	return &Dispatcher{o: o, log: cmp.Or(o.Logger, slog.New(slog.DiscardHandler)), queue: newQueue(),
		wake: make(chan struct{}, 1), ctx: ctx, stop: stop, seen: map[string]bool{}}
}

// Start runs the watcher, and the sender when there is a webhook, until
// Close. The watcher first looks at every tenant's balance and every held
// run: what a gateway that died had committed and not yet recorded as an
// alert is recorded now (and what it had recorded, not again).
func (d *Dispatcher) Start() {
	d.watched.Go(func() {
		d.catchUp()
		d.watch()
	})
	if d.o.Webhook != nil {
		d.sent.Go(d.send)
	}
}

// Close records what the watcher has queued, then stops the sender and
// waits for both; it closes the Notifier when that is an io.Closer. What
// is recorded and not delivered stays in the outbox.
func (d *Dispatcher) Close() {
	d.closed.Do(func() {
		d.queue.close()
		d.watched.Wait()
		d.stop()
		d.sent.Wait()
		if c, ok := d.o.Notifier.(io.Closer); ok {
			_ = c.Close()
		}
	})
}

// Committed is the commit hook's part: it queues what the changes may
// alert about and returns at once.
func (d *Dispatcher) Committed(_ context.Context, changes []ledger.Change) {
	for _, c := range changes {
		switch {
		case c.Kind == ledger.AuditAlert:
			d.signal() // recorded here or by another gateway: deliver it
		case c.Kind == ledger.AuditEvict || c.Kind == ledger.AuditRestore:
			d.queue.push(item{kind: c.Kind, seq: c.Seq})
		case c.TenantID == "" || c.Kind == ledger.AuditReject:
			// a refusal moves no balance
		case endedHeld(c):
			d.queue.push(item{kind: ledger.AuditHold, tenant: c.TenantID, run: c.RunID, seq: c.Seq})
		case c.Kind == ledger.AuditAdmit:
			// Only an admission raises a tenant's use (a settlement or a
			// reconcile charges at most what was held): its run is the one
			// that crossed.
			d.queue.check(c.TenantID, c.RunID)
		default:
			d.queue.check(c.TenantID, "") // a budget changed, a hold ended
		}
	}
}

// endedHeld reports a run that ended with its usage unknown, its hold
// kept: KeepHold, or a recovery after its gateway died.
func endedHeld(c ledger.Change) bool {
	return (c.Kind == ledger.AuditHold || c.Kind == ledger.AuditRecover) && c.Usage == ledger.UsageUnknown
}

func (d *Dispatcher) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Status reads the outbox's delivery state.
func (d *Dispatcher) Status(ctx context.Context) (alert.Status, error) {
	st := alert.Status{Thresholds: make([]int, len(d.o.Thresholds)), Notifies: d.o.Notifier != nil}
	for i, t := range d.o.Thresholds {
		st.Thresholds[i] = int(t)
	}
	if d.o.Webhook == nil {
		return st, nil
	}
	ob, err := d.o.Store.OutboxStatus(ctx)
	if err != nil {
		return st, err
	}
	st.Webhook = &alert.WebhookStatus{URL: d.o.Webhook.String(), SecretSet: d.o.Secret != "", Pending: ob.Pending,
		Failing: ob.LastError != "", LastError: ob.LastError}
	if !ob.LastAttemptAt.IsZero() {
		st.Webhook.LastAttemptAt = &ob.LastAttemptAt
	}
	return st, nil
}
