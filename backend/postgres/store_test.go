package postgres_test

import (
	"context"
	"flag"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var (
	simSeed  = flag.Uint64("seed", 0, "replay one simulation seed (TestSimulation)")
	simSeeds = flag.Int("seeds", 1000, "number of simulation seeds (TestSimulation)")
	simOps   = flag.Int("ops", 12, "operations per simulation seed (TestSimulation)")
)

// MustOpenStore opens a store on a fresh database of the shared test
// cluster and closes it when the test ends.
func MustOpenStore(tb testing.TB, opts postgres.Options) *postgres.Store {
	tb.Helper()
	st := mustOpen(tb, pgtest.DSN(tb), opts)
	tb.Cleanup(func() {
		if err := st.Close(); err != nil {
			tb.Error(err)
		}
	})
	return st
}

func mustOpen(tb testing.TB, dsn string, opts postgres.Options) *postgres.Store {
	tb.Helper()
	if opts.Instance == "" {
		opts.Instance = "test"
	}
	st, err := postgres.Open(context.Background(), dsn, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func TestContract(t *testing.T) {
	ledgertest.Run(t, func(tb testing.TB) ledger.Store { return MustOpenStore(tb, postgres.Options{}) })
}

// TestSimulation runs the seeded simulation of backend/ledger/ledgertest (as
// backend/sqlite does) against PostgreSQL; a restart closes the pool and
// opens the same database again under the same instance name.
func TestSimulation(t *testing.T) {
	first, n := uint64(1), *simSeeds
	if *simSeed != 0 {
		first, n = *simSeed, 1
	} else if os.Getenv("QUOTAGATE_LONG") == "1" {
		n *= 20
	}
	ledgertest.Simulate(t, ledgertest.SimOptions{
		FirstSeed: first, Seeds: n, Ops: *simOps, Workers: 4 * runtime.GOMAXPROCS(0), SeedsPerStore: 50,
		Open: func(tb testing.TB) (ledger.Store, func(ledger.Store) (ledger.Store, error)) {
			dsn := pgtest.DSN(tb)
			st := mustOpen(tb, dsn, postgres.Options{})
			return st, func(old ledger.Store) (ledger.Store, error) {
				if err := old.Close(); err != nil {
					return nil, err
				}
				return postgres.Open(context.Background(), dsn, postgres.Options{Instance: "test"})
			}
		},
		Replay: "go test ./backend/postgres -run 'TestSimulation$' -seed %d -v",
	})
}

func TestIdempotencyWindow(t *testing.T) {
	ledgertest.RunIdempotencyWindow(t, func(tb testing.TB, now func() time.Time) ledger.Store {
		return MustOpenStore(tb, postgres.Options{Now: now})
	})
}

func TestPeriods(t *testing.T) {
	ledgertest.RunPeriods(t, func(tb testing.TB, now func() time.Time) ledger.Store {
		return MustOpenStore(tb, postgres.Options{Now: now})
	})
}
