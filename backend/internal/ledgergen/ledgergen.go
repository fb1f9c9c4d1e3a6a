// Package ledgergen builds big SQLite ledgers for the benchmarks and the
// archive's tests: millions of settled calls written through the store's
// own statements (sqlite.Store.Bulk, the statements and books of Admit and
// Settle), spread evenly over a span of time by a clock the store reads,
// so that a year of books can be built in minutes and then read, archived
// and verified like a gateway's.
//
//	go run ./backend/internal/ledgergen/cmd/ledgergen -ledger /work/big/x.db -runs 1500000 -from 2026-01-01 -to 2026-02-01
package ledgergen

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"sync/atomic"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// Config says what Build writes.
type Config struct {
	// Runs is how many calls are admitted and settled.
	Runs int
	// From and To bound the calls' times: admissions and settlements are
	// spread evenly over [From, To). From may not be before the ledger's
	// newest audit row (a ledger's times only grow).
	From, To time.Time
	// Tenants is how many tenants share the calls, t0, t1, …, round
	// robin (default 10), each with an unlimited unit budget.
	Tenants int
	// Chunk is how many calls share one transaction (default 5,000).
	Chunk int
	// VerifyEvery, when above 0, verifies the ledger from its last
	// checkpoint and writes a new one after every VerifyEvery calls, so
	// that the replay a whole build needs is spread over it and a later
	// verify starts near the end. The last check is made at the end
	// either way.
	VerifyEvery int
	// Progress, when set, hears how many calls are written, after each
	// verify (or every million calls without one).
	Progress func(runs int, took time.Duration)
}

// Report is what Build did.
type Report struct {
	Runs int
	Took time.Duration
	// Verify is the time spent verifying, within Took.
	Verify time.Duration
}

// DefaultTenants and DefaultChunk are Config's defaults.
const (
	DefaultTenants = 10
	DefaultChunk   = 5000
)

// The call every run is: a chat call of tenant tI to the demo model,
// reserving ReserveUnits, settled on the provider's usage.
const (
	Upstream     = "demo"
	Model        = "demo-model"
	ReserveUnits = ledger.Units(102)
	Evidence     = "usage"
)

// Build opens (creating if needed) the ledger at path, writes cfg.Runs
// settled calls to it, checks it (the books verify clean and the spend
// rollup adds up to what the tenants spent) and closes it.
func Build(ctx context.Context, path string, cfg Config) (Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Report{}, err
	}
	c := newClock(cfg)
	st, err := sqlite.Open(path, sqlite.Options{Synchronous: "OFF", Now: c.now})
	if err != nil {
		return Report{}, fmt.Errorf("ledgergen: %w", err)
	}
	rep, err := build(ctx, st, cfg)
	if cerr := st.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("ledgergen: close %s: %w", path, cerr)
	}
	return rep, err
}

func (cfg Config) withDefaults() (Config, error) {
	if cfg.Tenants <= 0 {
		cfg.Tenants = DefaultTenants
	}
	if cfg.Chunk <= 0 {
		cfg.Chunk = DefaultChunk
	}
	if cfg.To.IsZero() {
		cfg.To = time.Now()
	}
	if cfg.From.IsZero() {
		cfg.From = cfg.To.Add(-time.Hour)
	}
	switch {
	case cfg.Runs < 0:
		return cfg, fmt.Errorf("ledgergen: %d runs", cfg.Runs)
	case !cfg.From.Before(cfg.To):
		return cfg, fmt.Errorf("ledgergen: from %s is not before to %s", cfg.From, cfg.To)
	}
	return cfg, nil
}

func build(ctx context.Context, st *sqlite.Store, cfg Config) (Report, error) {
	t0 := time.Now()
	if err := checkStart(ctx, st, cfg.From); err != nil {
		return Report{}, err
	}
	tenants := make([]ledger.Tenant, cfg.Tenants)
	for i := range tenants {
		tenants[i] = ledger.Tenant{ID: TenantID(i), BudgetUnits: ledger.MaxUnits, MaxConcurrent: 1 << 30}
	}
	if err := st.ApplyTenants(ctx, tenants, ledger.ActorConfig); err != nil {
		return Report{}, fmt.Errorf("ledgergen: tenants: %w", err)
	}
	rep := Report{}
	step := cfg.To.Sub(cfg.From) / time.Duration(max(cfg.Runs, 1))
	calls := make([]sqlite.BulkCall, 0, cfg.Chunk)
	for rep.Runs < cfg.Runs {
		calls = calls[:0]
		for i := rep.Runs; i < min(rep.Runs+cfg.Chunk, cfg.Runs); i++ {
			calls = append(calls, Call(i, cfg.Tenants, cfg.From.Add(time.Duration(i)*step)))
		}
		if err := st.Bulk(ctx, calls); err != nil {
			return rep, fmt.Errorf("ledgergen: after %d runs: %w", rep.Runs, err)
		}
		before := rep.Runs
		rep.Runs += len(calls)
		if err := rep.progress(ctx, st, cfg, before, t0); err != nil {
			return rep, err
		}
	}
	if err := rep.check(ctx, st); err != nil {
		return rep, err
	}
	rep.Took = time.Since(t0)
	return rep, nil
}

// progress verifies after each VerifyEvery runs, and tells cfg.Progress.
func (rep *Report) progress(ctx context.Context, st *sqlite.Store, cfg Config, before int, t0 time.Time) error {
	every := cfg.VerifyEvery
	if every <= 0 {
		every = 1_000_000
	}
	if before/every == rep.Runs/every {
		return nil
	}
	if cfg.VerifyEvery > 0 {
		if err := rep.check(ctx, st); err != nil {
			return err
		}
	}
	if cfg.Progress != nil {
		cfg.Progress(rep.Runs, time.Since(t0))
	}
	return nil
}

// check verifies from the last checkpoint, writes a new one, and checks
// the spend rollup against the tenants' spent units.
func (rep *Report) check(ctx context.Context, st *sqlite.Store) error {
	t0 := time.Now()
	defer func() { rep.Verify += time.Since(t0) }()
	problems, err := st.VerifyWith(ctx, ledger.VerifyOptions{Checkpoint: true})
	if err != nil {
		return fmt.Errorf("ledgergen: verify after %d runs: %w", rep.Runs, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("ledgergen: verify after %d runs: %d problems, the first: %s", rep.Runs, len(problems), problems[0])
	}
	return CheckSpend(ctx, st)
}

// checkStart refuses a start before the ledger's newest audit row.
func checkStart(ctx context.Context, st *sqlite.Store, from time.Time) error {
	newest, err := st.Audit(ctx, ledger.AuditFilter{Newest: true, Limit: 1})
	if err != nil {
		return fmt.Errorf("ledgergen: newest audit row: %w", err)
	}
	if len(newest) > 0 && from.Before(newest[0].At) {
		return fmt.Errorf("ledgergen: from %s is before the ledger's newest audit row (%s): a ledger's times only grow",
			from.UTC().Format(time.RFC3339), newest[0].At.UTC().Format(time.RFC3339))
	}
	return nil
}

// CheckSpend checks that the hourly spend rollup adds up, tenant by
// tenant, to the units each tenant spent (what the spend chart draws is
// what the books hold). Verify does not read the rollup.
func CheckSpend(ctx context.Context, st *sqlite.Store) error {
	hours, err := st.SpendHours(ctx, time.Unix(0, 0), time.Now().Add(100*365*24*time.Hour))
	if err != nil {
		return fmt.Errorf("ledgergen: spend rollup: %w", err)
	}
	rolled := map[string]ledger.Units{}
	for _, h := range hours {
		rolled[h.TenantID] += h.SpentUnits
	}
	balances, err := st.Balances(ctx)
	if err != nil {
		return fmt.Errorf("ledgergen: balances: %w", err)
	}
	var errs []error
	for _, b := range balances {
		if rolled[b.TenantID] != b.SpentUnits {
			errs = append(errs, fmt.Errorf("ledgergen: tenant %s spent %d units, its spend rollup holds %d",
				b.TenantID, b.SpentUnits, rolled[b.TenantID]))
		}
	}
	return errors.Join(errs...)
}

// TenantID is the i-th tenant's id.
func TenantID(i int) string { return fmt.Sprint("t", i) }

// Call is the i-th call of a ledger of tenants tenants, admitted about
// at: tenant t(i mod tenants)'s chat call, its run id time-ordered as the
// gateway's ("run_", the milliseconds, then i where the gateway draws
// random bytes), its body's fingerprint set as an SDK's call has one, and
// its spent units between 20 and 99.
func Call(i, tenants int, at time.Time) sqlite.BulkCall {
	tenant := TenantID(i % tenants)
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"call %d"}]}`, Model, i)
	return sqlite.BulkCall{
		Admit: ledger.AdmitRequest{
			RunID:    ledger.RunID(fmt.Sprintf("run_%012x%012x", at.UnixMilli(), i)),
			TenantID: tenant, Upstream: Upstream, Model: Model,
			ReserveUnits: ReserveUnits, InputUnits: 12,
			Door: "chat", UpstreamProtocol: "chat",
			Fingerprint: fmt.Sprintf("chat-%d-%08x", len(body), crc32.Checksum([]byte(body), castagnoli)),
			Actor:       ledger.TenantActor(tenant),
		},
		Spent:    ledger.Units(20 + i*37%80),
		Evidence: Evidence,
	}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// clock is the store's clock while Build writes: each reading is one step
// after the one before, from From, so that the calls' times are spread
// over [From, To) whatever the machine's speed. The store reads it about
// twice a call (admission and settlement) and a few times a transaction.
type clock struct {
	from  time.Time
	step  time.Duration
	ticks atomic.Int64
}

func newClock(cfg Config) *clock {
	chunks := cfg.Runs/cfg.Chunk + 1
	readings := 2*cfg.Runs + 4*chunks + 64 // calls, transactions and verifies, with room
	return &clock{from: cfg.From, step: max(cfg.To.Sub(cfg.From)/time.Duration(readings), time.Nanosecond)}
}

func (c *clock) now() time.Time {
	return c.from.Add(time.Duration(c.ticks.Add(1)-1) * c.step)
}
