package evidence

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/quotagate/quotagate/backend/clock"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/lookup"
)

// Looker asks a provider about one call (*lookup.Client).
type Looker interface {
	Look(ctx context.Context, providerID string) (lookup.Figure, []byte, error)
}

// Upstream is one upstream's lookup policy.
type Upstream struct {
	Name   string
	Looker Looker
	// Delay is how long after a run ended held the first lookup goes
	// (default 10s: usage endpoints answer seconds after a call); retries
	// back off from it, doubling, up to MaxBackoff, until Window after the
	// run ended (default 1h).
	Delay, Window time.Duration
	Auto          bool // auto_reconcile: a figure found is applied at once
	// MaxInFlight bounds its lookups at once (default 2); PerMinute their
	// rate (default 60).
	MaxInFlight, PerMinute int
}

// Defaults of Upstream.
const (
	DefaultDelay       = 10 * time.Second
	DefaultWindow      = time.Hour
	DefaultMaxInFlight = 2
	DefaultPerMinute   = 60
	MaxBackoff         = 5 * time.Minute
	// MaxFollowed bounds the held runs followed per upstream at once; a
	// run beyond it is picked up at the next restart.
	MaxFollowed = 10_000
)

// Store is the slice of ledger.Store the worker reads and writes.
type Store interface {
	Run(ctx context.Context, id ledger.RunID) (ledger.Run, error)
	Runs(ctx context.Context, f ledger.RunFilter) ([]ledger.Run, error)
	Audit(ctx context.Context, f ledger.AuditFilter) ([]ledger.AuditEntry, error)
	AppendAudit(ctx context.Context, e ledger.AuditEntry) error
	ReconcileCost(ctx context.Context, id ledger.RunID, c ledger.Reconciliation, actor ledger.Actor) (ledger.Run, error)
}

// Options configure a Worker.
type Options struct {
	Store     Store
	Upstreams []Upstream
	Scrub     func(string) string // masks secrets in an answer; nil: none
	Now       func() time.Time    // default time.Now
	Logger    *slog.Logger
	// Changed, when set, is told each time a finding changes (the live
	// dashboard, tests waiting on an outcome).
	Changed func(Finding)
	// Follows says which held runs Start takes up again (nil: all). On a
	// ledger several gateways share, each run is one gateway's to look
	// up; the others learn its final finding from the row it records.
	Follows func(ledger.Run) bool
}

// Worker follows held runs at their providers.
type Worker struct {
	o   Options
	ups map[string]*upstreamState
	log *slog.Logger

	mu       sync.Mutex
	findings map[ledger.RunID]Finding
	followed map[ledger.RunID]bool
	closed   bool // Close began: spawn starts nothing more

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// upstreamState is one upstream's policy and its bounds.
type upstreamState struct {
	Upstream
	slots    chan struct{} // MaxInFlight
	mu       sync.Mutex
	next     time.Time // the earliest start of the next lookup (PerMinute)
	followed int
}

// New returns a worker; Start begins its work.
func New(o Options) *Worker {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Scrub == nil {
		o.Scrub = func(s string) string { return s }
	}
	w := &Worker{o: o, ups: map[string]*upstreamState{}, log: o.Logger,
		findings: map[ledger.RunID]Finding{}, followed: map[ledger.RunID]bool{}}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	for _, u := range o.Upstreams {
		u.Delay = cmpOr(u.Delay, DefaultDelay)
		u.Window = cmpOr(u.Window, DefaultWindow)
		u.MaxInFlight = cmpOr(u.MaxInFlight, DefaultMaxInFlight)
		u.PerMinute = cmpOr(u.PerMinute, DefaultPerMinute)
		w.ups[u.Name] = &upstreamState{Upstream: u, slots: make(chan struct{}, u.MaxInFlight)}
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	return w
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Start picks up the held runs a previous process left: each held run on
// an upstream with a lookup, with a provider id and no final lookup row,
// is followed again; a final row's finding is shown again (and a found
// figure of an auto_reconcile upstream applied).
func (w *Worker) Start(ctx context.Context) error {
	if len(w.ups) == 0 {
		return nil
	}
	holds, err := w.o.Store.Runs(ctx, ledger.RunFilter{HoldingOnly: true, Limit: MaxFollowed})
	if err != nil {
		return fmt.Errorf("evidence: list holds: %w", err)
	}
	for _, run := range holds {
		if err := w.resume(ctx, run, w.o.Follows == nil || w.o.Follows(run)); err != nil {
			return err
		}
	}
	return nil
}

// Adopt takes up, in the background, the held runs of gateways that died
// sharing the ledger (this gateway found them dead): those not looked up
// to the end are followed here, as Start does after a restart.
func (w *Worker) Adopt(gateways []string) {
	if len(w.ups) == 0 {
		return
	}
	w.spawn(func() {
		holds, err := w.o.Store.Runs(w.ctx, ledger.RunFilter{HoldingOnly: true, Limit: MaxFollowed})
		if err != nil {
			w.log.Warn("evidence: list the holds of dead gateways", "gateways", gateways, "err", err)
			return
		}
		for _, run := range holds {
			if !slices.Contains(gateways, run.Instance) {
				continue
			}
			if err := w.resume(w.ctx, run, true); err != nil {
				w.log.Warn("evidence: adopt a dead gateway's hold", "run", run.ID, "err", err)
			}
		}
	})
}

// resume takes one held run up again: its recorded finding when a lookup
// ended, else, when follow, its lookups.
func (w *Worker) resume(ctx context.Context, run ledger.Run, follow bool) error {
	if _, ok := w.ups[run.Upstream]; !ok || run.Usage != ledger.UsageUnknown || run.ProviderID == "" {
		return nil
	}
	f, ok, err := w.recorded(ctx, run.ID)
	if err != nil {
		return err
	}
	if ok {
		w.set(f)
		if f.State == Found && w.ups[run.Upstream].Auto {
			w.spawn(func() { w.autoApply(f) })
		}
		return nil
	}
	if follow {
		w.follow(run)
	}
	return nil
}

// recorded is run id's final finding as its last lookup row recorded it;
// false when no lookup has ended.
func (w *Worker) recorded(ctx context.Context, id ledger.RunID) (Finding, bool, error) {
	rows, err := w.o.Store.Audit(ctx, ledger.AuditFilter{RunID: id, Kind: AuditLookup})
	if err != nil {
		return Finding{}, false, fmt.Errorf("evidence: lookups of run %s: %w", id, err)
	}
	for i := len(rows) - 1; i >= 0; i-- {
		if f, ok := fromRow(rows[i]); ok {
			return f, true, nil
		}
	}
	return Finding{}, false, nil
}

// Close stops every lookup and waits for them.
func (w *Worker) Close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.cancel()
	w.wg.Wait()
}

// Note is the ledger's commit hook's part: a run that ended held on an
// upstream with a lookup is followed by the gateway that ended it. On a
// shared ledger another gateway's hold is left to that gateway, whose
// final finding is learnt here from the lookup row it records. It never
// blocks on the provider.
func (w *Worker) Note(changes []ledger.Change) {
	for _, c := range changes {
		if c.FromPeer {
			if c.Kind == AuditLookup && c.RunID != "" {
				w.spawn(func() { w.learn(c.RunID) })
			}
			continue
		}
		if _, ok := w.ups[c.Upstream]; !ok || c.RunID == "" || c.Usage != ledger.UsageUnknown {
			continue
		}
		switch c.Kind {
		case ledger.AuditHold, ledger.AuditCancel, ledger.AuditRecover:
		default:
			continue
		}
		id := c.RunID
		w.spawn(func() {
			run, err := w.o.Store.Run(w.ctx, id)
			if err != nil {
				w.log.Warn("evidence: read held run", "run", id, "err", err)
				return
			}
			if run.ProviderID != "" {
				w.follow(run)
			}
		})
	}
}

// learn shows the final finding another gateway recorded for run id, when
// its upstream has a lookup here too.
func (w *Worker) learn(id ledger.RunID) {
	f, ok, err := w.recorded(w.ctx, id)
	if err != nil {
		w.log.Warn("evidence: read another gateway's lookup", "run", id, "err", err)
		return
	}
	if _, known := w.ups[f.Upstream]; ok && known {
		w.set(f)
	}
}

// spawn runs fn in its own goroutine, which Close waits for; nothing once
// closed (a commit or a reaped gateway may still be told of after it).
func (w *Worker) spawn(fn func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		fn()
	}()
}

// Findings is a copy of what is known of the held runs at their providers.
func (w *Worker) Findings() map[ledger.RunID]Finding {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[ledger.RunID]Finding, len(w.findings))
	for k, v := range w.findings {
		out[k] = v
	}
	return out
}

// Finding is what is known of run id at its provider.
func (w *Worker) Finding(id ledger.RunID) (Finding, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f, ok := w.findings[id]
	return f, ok
}

func (w *Worker) set(f Finding) {
	w.mu.Lock()
	w.findings[f.Run] = f
	w.mu.Unlock()
	if w.o.Changed != nil {
		w.o.Changed(f)
	}
}

// follow looks run up until the provider answers or its window passes, in
// its own goroutine; a run already followed is left alone.
func (w *Worker) follow(run ledger.Run) {
	u := w.ups[run.Upstream]
	w.mu.Lock()
	if w.followed[run.ID] {
		w.mu.Unlock()
		return
	}
	w.followed[run.ID] = true
	w.mu.Unlock()
	u.mu.Lock()
	full := u.followed >= MaxFollowed
	if !full {
		u.followed++
	}
	u.mu.Unlock()
	if full {
		w.log.Warn("evidence: too many held runs followed; this one is looked up after a restart", "run", run.ID, "upstream", u.Name)
		return
	}
	f := Finding{Run: run.ID, Upstream: u.Name, ProviderID: run.ProviderID, State: Looking, Auto: u.Auto}
	w.set(f)
	w.spawn(func() {
		defer func() { u.mu.Lock(); u.followed--; u.mu.Unlock() }()
		w.chase(u, run, f)
	})
}

// chase is one run's lookups: after Delay, then backing off, until an
// answer or the window's end.
func (w *Worker) chase(u *upstreamState, run ledger.Run, f Finding) {
	deadline := run.UpdatedAt.Add(u.Window)
	wait := run.UpdatedAt.Add(u.Delay).Sub(w.o.Now()) // the first lookup: Delay after the run ended
	for backoff := u.Delay; ; backoff = min(2*backoff, MaxBackoff) {
		if left := deadline.Sub(w.o.Now()); wait > left {
			wait = left
		}
		if !clock.Sleep(w.ctx, wait) {
			return
		}
		if !w.o.Now().Before(deadline) && f.Attempts > 0 {
			f.State = GaveUp
			f.Note = fmt.Sprintf("no answer from the provider within %s (%d lookups; last: %s); the hold stays for an operator", u.Window, f.Attempts, f.Note)
			w.finish(run, f)
			return
		}
		if done := w.attempt(u, run, &f); done {
			return
		}
		w.set(f)
		wait = backoff
	}
}

// attempt is one lookup within the upstream's bounds; true when it ended
// the chase (a figure found or refused, or the worker closing).
func (w *Worker) attempt(u *upstreamState, run ledger.Run, f *Finding) bool {
	select {
	case u.slots <- struct{}{}:
	case <-w.ctx.Done():
		return true
	}
	defer func() { <-u.slots }()
	if !clock.Sleep(w.ctx, u.take(w.o.Now())) {
		return true
	}
	ctx, cancel := context.WithTimeout(w.ctx, 30*time.Second)
	fig, body, err := u.Looker.Look(ctx, run.ProviderID)
	cancel()
	f.Attempts++
	f.LookedUpAt = w.o.Now()
	f.Answer = truncate(w.o.Scrub(string(body)), 4000)
	var refusal *lookup.Refusal
	switch {
	case w.ctx.Err() != nil:
		return true
	case errors.As(err, &refusal):
		f.State, f.Note = Refused, w.o.Scrub(refusal.Why)
	case err != nil:
		f.Note = w.o.Scrub(err.Error())
		return false
	default:
		f.take(fig)
		f.State, f.Note = Found, ""
		if why := contradiction(run, *f); why != "" {
			f.State, f.Note = Refused, why
		}
	}
	w.finish(run, *f)
	return true
}

// take returns how long to wait before a lookup may start under the
// upstream's rate, and books that start.
func (u *upstreamState) take(now time.Time) time.Duration {
	u.mu.Lock()
	defer u.mu.Unlock()
	start := u.next
	if now.After(u.next) {
		start = now
	}
	u.next = start.Add(time.Minute / time.Duration(u.PerMinute))
	return start.Sub(now)
}

// contradiction says why a figure cannot be evidence for run: less output
// than the gateway relayed.
func contradiction(run ledger.Run, f Finding) string {
	if ledger.Units(f.Output) < run.RelayedUnits {
		return fmt.Sprintf("the provider reports %d output tokens, below the %d the gateway relayed to the client: refused as evidence", f.Output, run.RelayedUnits)
	}
	return ""
}

// finish records a final finding (its audit row) and, for a figure on an
// auto_reconcile upstream, applies it.
func (w *Worker) finish(run ledger.Run, f Finding) {
	if err := w.o.Store.AppendAudit(context.WithoutCancel(w.ctx), f.row(run)); err != nil {
		w.log.Error("evidence: record lookup", "run", run.ID, "err", err)
	}
	w.set(f)
	if f.State == Found && f.Auto {
		w.autoApply(f)
	}
}

func (w *Worker) autoApply(f Finding) {
	if _, err := w.Apply(context.WithoutCancel(w.ctx), f.Run, ledger.Provider(f.Upstream)); err != nil {
		w.log.Warn("evidence: auto_reconcile", "run", f.Run, "err", err)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
