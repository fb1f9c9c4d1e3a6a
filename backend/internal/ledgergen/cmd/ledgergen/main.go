// Command ledgergen builds a big SQLite ledger of settled calls for the
// benchmarks and the archive's tests (see backend/internal/ledgergen): the
// calls are written through the store's own statements, spread evenly over
// [-from, -to), and the ledger is verified (from its checkpoints) and its
// spend rollup checked before the command ends. It appends to an existing
// ledger whose newest row is before -from.
//
//	go run ./backend/internal/ledgergen/cmd/ledgergen -ledger /work/big/year.db -runs 20000000 -from 2025-12-01 -verify-every 2000000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/quotagate/quotagate/backend/internal/ledgergen"
)

func main() {
	var cfg ledgergen.Config
	var path, from, to string
	flag.StringVar(&path, "ledger", "", "the ledger file to create or append to (required)")
	flag.IntVar(&cfg.Runs, "runs", 100_000, "settled calls to write")
	flag.StringVar(&from, "from", "", "the first call's time, RFC 3339 or a date (default: -to minus a year)")
	flag.StringVar(&to, "to", "", "the end of the calls' span, RFC 3339 or a date (default: now)")
	flag.IntVar(&cfg.Tenants, "tenants", ledgergen.DefaultTenants, "tenants t0… sharing the calls round robin")
	flag.IntVar(&cfg.Chunk, "chunk", ledgergen.DefaultChunk, "calls per transaction")
	flag.IntVar(&cfg.VerifyEvery, "verify-every", 0, "verify from the last checkpoint after every N calls (0: at the end only)")
	sizes := flag.Bool("sizes", false, "write nothing: print the ledger's bytes per run by table and index (dbstat)")
	flag.Parse()
	var err error
	if *sizes {
		err = printSizes(path)
	} else {
		err = run(path, from, to, cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledgergen:", err)
		os.Exit(1)
	}
}

func run(path, from, to string, cfg ledgergen.Config) error {
	if path == "" {
		return fmt.Errorf("-ledger is required")
	}
	var err error
	if cfg.To, err = parseTime(to, time.Now()); err != nil {
		return fmt.Errorf("-to: %w", err)
	}
	if cfg.From, err = parseTime(from, cfg.To.AddDate(-1, 0, 0)); err != nil {
		return fmt.Errorf("-from: %w", err)
	}
	cfg.Progress = func(runs int, took time.Duration) {
		fmt.Printf("%d runs in %s (%.0f runs/s)\n", runs, took.Round(time.Second), float64(runs)/took.Seconds())
	}
	rep, err := ledgergen.Build(context.Background(), path, cfg)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d settled runs from %s to %s in %s (%.0f runs/s; verify %s), verified clean\n", path, rep.Runs,
		cfg.From.UTC().Format(time.RFC3339), cfg.To.UTC().Format(time.RFC3339), rep.Took.Round(time.Second),
		float64(rep.Runs)/rep.Took.Seconds(), rep.Verify.Round(time.Second))
	return nil
}

func printSizes(path string) error {
	runs, sizes, err := ledgergen.Sizes(context.Background(), path)
	if err != nil {
		return err
	}
	var total int64
	for _, s := range sizes {
		total += s.Bytes
		if s.Bytes*20 >= runs { // at least 0.05 byte a run
			fmt.Printf("%-32s %8.1f bytes/run\n", s.Name, float64(s.Bytes)/float64(max(runs, 1)))
		}
	}
	fmt.Printf("%-32s %8.1f bytes/run (%d runs, %d bytes)\n", "(all)", float64(total)/float64(max(runs, 1)), runs, total)
	return nil
}

// parseTime reads s as RFC 3339 or a date (midnight UTC); "" is def.
func parseTime(s string, def time.Time) (time.Time, error) {
	if s == "" {
		return def, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Parse(time.DateOnly, s)
}
