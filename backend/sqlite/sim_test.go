package sqlite_test

import (
	"flag"
	"os"
	"runtime"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

var (
	simSeed  = flag.Uint64("seed", 0, "replay one simulation seed (TestSimulation)")
	simSeeds = flag.Int("seeds", 1000, "number of simulation seeds (TestSimulation)")
	simOps   = flag.Int("ops", 12, "operations per simulation seed (TestSimulation)")
)

// simOptions trades durability for speed: the simulation checks the ledger's
// logic; TestCrash checks durability with synchronous=FULL.
var simOptions = sqlite.Options{Synchronous: "OFF"}

func openReopenable(tb testing.TB) (ledger.Store, func(ledger.Store) (ledger.Store, error)) {
	st := MustOpenStoreNoCleanup(tb, simOptions)
	reopen := func(old ledger.Store) (ledger.Store, error) {
		path := old.(*sqlite.Store).Path()
		if err := old.Close(); err != nil {
			return nil, err
		}
		return sqlite.Open(path, simOptions)
	}
	return st, reopen
}

// TestSimulation runs seeded random interleavings of admit, start, settle,
// keep hold, release, reconcile, budget changes and restarts against the real
// store and an in-memory model, checking every step. QUOTAGATE_LONG=1 runs
// 20× the seeds; -seed N replays one.
func TestSimulation(t *testing.T) {
	first, n := uint64(1), *simSeeds
	if *simSeed != 0 {
		first, n = *simSeed, 1
	} else if os.Getenv("QUOTAGATE_LONG") == "1" {
		n *= 20
	}
	ledgertest.Simulate(t, ledgertest.SimOptions{
		FirstSeed: first, Seeds: n, Ops: *simOps, Open: openReopenable, Workers: runtime.GOMAXPROCS(0), SeedsPerStore: 20,
		Replay: "go test ./backend/sqlite -run 'TestSimulation$' -seed %d -v",
	})
}

// FuzzLedgerOps decodes the input as a program of ledger operations and runs
// it against a fresh real store, checking the model and the invariants after
// every step and Verify at the end.
func FuzzLedgerOps(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(ledgertest.Program(seed, 16))
	}
	f.Add([]byte{})
	f.Add([]byte{200, 0, 255, 255, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, prog []byte) {
		if len(prog) > 400 {
			prog = prog[:400]
		}
		st, reopen := openReopenable(t)
		m := &ledgertest.Machine{Store: st, Reopen: reopen, Prefix: "f"}
		err := m.Run(prog)
		if cerr := m.Store.Close(); cerr != nil && err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	})
}
