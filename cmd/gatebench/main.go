// Command gatebench measures what quotagate adds to a call, against a direct
// call to the same fake upstream in the same run, so that both see the same
// machine. It starts the
// fake upstreams (the demo upstream: 20 chunks 5 ms apart for streams, an
// immediate answer for non-streaming calls) in this process, `quotagate
// serve` as its own child process (durable ledger, synchronous=FULL), and a
// load generator, all on loopback; then, interleaving direct and gateway runs
// for each client count, it reports calls/s and their ratio, the added time
// to first byte and total (p50/p99), the gateway's CPU seconds per 1,000
// calls and its RSS, and a run of many concurrent slow streams for memory.
//
//	go build -o /tmp/quotagate . && go run ./cmd/gatebench -binary /tmp/quotagate
//
// Figures are medians over -reps repetitions. This is a program, not a test:
// it takes a few minutes (make bench runs it).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	var o Options
	var clients string
	flag.StringVar(&o.Binary, "binary", "build/bin/quotagate", "the quotagate binary to run as `serve`")
	flag.StringVar(&clients, "clients", "1,16,64,256", "client counts, comma-separated")
	flag.IntVar(&o.Reps, "reps", 3, "repetitions; figures are medians")
	flag.DurationVar(&o.Duration, "duration", 3*time.Second, "how long each measurement runs")
	flag.IntVar(&o.SlowStreams, "slow", 1000, "concurrent slow streams for the memory run (0: skip)")
	flag.StringVar(&o.Meter, "meter", "tiktoken", "the gateway's meter (tiktoken or utf8-bytes-v1)")
	flag.StringVar(&o.Pprof, "pprof", "", "save CPU profiles of the gateway during the first non-stream and stream runs at -pprof-clients to `FILE` and FILE.stream (and its heap with the slow streams in flight to FILE.heap and FILE.heap.txt, its goroutines to FILE.goroutines.txt)")
	flag.IntVar(&o.PprofClients, "pprof-clients", 64, "the client count -pprof profiles")
	flag.Parse()
	for _, s := range strings.Split(clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "gatebench: -clients: %q is not a positive count\n", s)
			os.Exit(2)
		}
		o.Clients = append(o.Clients, n)
	}
	if err := Run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gatebench:", err)
		os.Exit(1)
	}
}
