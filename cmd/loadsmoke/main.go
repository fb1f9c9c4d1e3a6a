// Command loadsmoke is seed 003's load smoke: N virtual users (10 and 20)
// each make a few streaming calls through a quotagate gateway to the demo
// upstream at 2–5 s per call, and it reports the status mix, time to first
// byte p50/p95, whole-call p95, the share of final 429s (after the client's
// own Retry-After retries: at most 2, at most 15 s), the 5xx count and the
// gateway's RSS. It is a program, not a unit test: it takes minutes.
//
// Three ways to get a gateway:
//
//	loadsmoke -binary ./quotagate            # write a config, start `quotagate serve`, measure its RSS
//	loadsmoke -base http://127.0.0.1:8787 -keys k1,k2 [-pid N] [-admin-token T]   # an existing gateway
//	loadsmoke -inprocess                      # assemble the server in this process (see inprocess.go)
//
// The pass line at 10 users (seed 003): final 429 ≤ 2 %, 5xx = 0, first byte
// p95 ≤ 15 s, whole call p95 ≤ 90 s, gateway memory < 1.5 GB. With -assert
// the exit status is 1 when a 10-user run misses it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/gate"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "loadsmoke:", err)
		os.Exit(1)
	}
}

// errMissedPassLine is returned under -assert when a 10-user run fails seed 003's line.
var errMissedPassLine = errors.New("a 10-user run missed seed 003's pass line")

func parseRange(s string) (lo, hi time.Duration, err error) {
	a, b, found := strings.Cut(s, "-")
	if lo, err = time.ParseDuration(a); err != nil {
		return 0, 0, err
	}
	hi = lo
	if found {
		if hi, err = time.ParseDuration(b); err != nil {
			return 0, 0, err
		}
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("range %q: upper bound below lower", s)
	}
	return lo, hi, nil
}

// smoke is a parsed command line.
type smoke struct {
	users              []int
	calls              int
	ramp, timeout      time.Duration
	think, plan, model string
	thinkMin, thinkMax time.Duration
	seed               uint64
	noRetry            bool
	base, keys         string
	pid                int
	adminToken         string
	binary             string
	inprocess          bool
	spawn              SpawnOptions
	jsonOut            string
	assert             bool
}

func parseFlags(args []string) (*smoke, error) {
	fs := flag.NewFlagSet("loadsmoke", flag.ContinueOnError)
	var (
		sm         smoke
		usersFlag  = fs.String("users", "10,20", "virtual users per run, comma-separated: one run each")
		meterName  = fs.String("meter", "utf8-bytes-v1", "meter of the started gateway")
		maxConc    = fs.Int("max-concurrent", 2, "started gateway: upstream max_concurrent (seed 003: 2)")
		maxWaiters = fs.Int("max-waiters", 4, "started gateway: queue max_waiters (seed 003: 4)")
		maxWait    = fs.Duration("max-wait", 8*time.Second, "started gateway: queue max_wait (seed 003: 8s)")
		perMinute  = fs.Int("per-minute", 10, "started gateway: tenant rate limit per minute (seed 003: 10)")
		perHour    = fs.Int("per-hour", 120, "started gateway: tenant rate limit per hour (seed 003: 120)")
		tenantMax  = fs.Int("tenant-max-concurrent", 2, "started gateway: tenant max_concurrent")
		logPath    = fs.String("log", "", "started gateway: write its log here")
	)
	fs.IntVar(&sm.calls, "calls", 3, "streaming calls per user")
	fs.DurationVar(&sm.ramp, "ramp", 5*time.Second, "users start spread evenly over this")
	fs.StringVar(&sm.think, "think", "5s-15s", "pause between a user's calls (reading the answer), min-max")
	fs.StringVar(&sm.plan, "plan", "latency=2s-5s", "demo upstream plan per call (seed 003: 2–5 s); empty: none")
	fs.StringVar(&sm.model, "model", "demo-chat", "model to call")
	fs.DurationVar(&sm.timeout, "timeout", 2*time.Minute, "per call, retries included")
	fs.Uint64Var(&sm.seed, "seed", 0, "randomness of starts and think pauses (0: from the clock)")
	fs.BoolVar(&sm.noRetry, "no-retry", false, "do not retry 429/503 (measure first answers only)")
	fs.StringVar(&sm.base, "base", "", "gateway root URL of an existing gateway, e.g. http://127.0.0.1:8787")
	fs.StringVar(&sm.keys, "keys", "", "tenant keys for -base, comma-separated (one per user, reused round-robin)")
	fs.IntVar(&sm.pid, "pid", 0, "gateway process id for RSS with -base")
	fs.StringVar(&sm.adminToken, "admin-token", "", "admin token for -base (gate figures in the report)")
	fs.StringVar(&sm.binary, "binary", "", "quotagate binary to start with a generated config (one tenant per user)")
	fs.BoolVar(&sm.inprocess, "inprocess", false, "assemble the gateway in this process")
	fs.StringVar(&sm.jsonOut, "json", "", "write every call and report as JSON to this file")
	fs.BoolVar(&sm.assert, "assert", false, "exit 1 when a 10-user run misses the pass line")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	for _, s := range strings.Split(*usersFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-users %q: want positive integers", *usersFlag)
		}
		sm.users = append(sm.users, n)
	}
	var err error
	if sm.thinkMin, sm.thinkMax, err = parseRange(sm.think); err != nil {
		return nil, fmt.Errorf("-think: %w", err)
	}
	if sm.seed == 0 {
		sm.seed = uint64(time.Now().UnixNano())
	}
	sm.spawn = SpawnOptions{Binary: sm.binary, Users: slices.Max(sm.users), Meter: *meterName, MaxConcurrent: *maxConc,
		MaxWaiters: *maxWaiters, MaxWait: *maxWait, PerMinute: *perMinute, PerHour: *perHour,
		TenantMax: *tenantMax, Log: *logPath}
	return &sm, nil
}

func run(args []string) error {
	sm, err := parseFlags(args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0}}
	fleet, err := sm.fleet(ctx, client)
	if err != nil {
		return err
	}
	defer fleet.Close()
	fmt.Printf("gateway %s · plan %q · %d calls/user · think %s · ramp %v · seed %d\n",
		fleet.BaseURL, sm.plan, sm.calls, sm.think, sm.ramp, sm.seed)
	reports, allCalls, missed := sm.runs(ctx, client, fleet)
	fmt.Println("\n| users | calls | final status mix | first byte p50 / p95 | whole call p95 | final 429 | 5xx | peak RSS | seed 003 line |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, r := range reports {
		fmt.Println(r.MarkdownRow())
	}
	if sm.jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{"reports": reports, "calls": allCalls}, "", "  ")
		if err := os.WriteFile(sm.jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	if sm.assert && missed {
		return errMissedPassLine
	}
	return nil
}

// fleet is the gateway the command line names: an existing one (-base), a
// started binary (-binary) or one in this process (-inprocess).
func (sm *smoke) fleet(ctx context.Context, client *http.Client) (*Fleet, error) {
	switch {
	case sm.base != "":
		if sm.keys == "" {
			return nil, errors.New("-base needs -keys")
		}
		f := &Fleet{BaseURL: strings.TrimRight(sm.base, "/"), Keys: strings.Split(sm.keys, ","), AdminToken: sm.adminToken,
			PID: sm.pid, RSSSource: "-pid"}
		if sm.pid == 0 {
			f.RSSSource = "no -pid given"
		}
		return f, nil
	case sm.binary != "":
		return Spawn(ctx, client, sm.spawn)
	case sm.inprocess:
		return StartInProcess(ctx, sm.spawn)
	}
	return nil, errors.New("give -binary, -base or -inprocess")
}

// runs makes one run per user count, printing each report; missed is
// whether a 10-user run missed the pass line.
func (sm *smoke) runs(ctx context.Context, client *http.Client, fleet *Fleet) (reports []Report, allCalls [][]Call, missed bool) {
	retry := gate.DefaultRetryPolicy
	if sm.noRetry {
		retry = gate.RetryPolicy{}
	}
	for i, n := range sm.users {
		l := Load{BaseURL: fleet.BaseURL, Keys: fleet.Keys, Users: n, Calls: sm.calls, Ramp: sm.ramp,
			ThinkMin: sm.thinkMin, ThinkMax: sm.thinkMax, Model: sm.model, Plan: sm.plan, Retry: retry,
			Timeout: sm.timeout, Seed: sm.seed + uint64(i), Client: client}
		before := gateStates(ctx, client, fleet.BaseURL, fleet.AdminToken)
		stopRSS := sampleRSS(fleet.PID, fleet.RSSSource)
		start := time.Now()
		cs := l.Run(ctx)
		wall := time.Since(start)
		r := Summarize(n, sm.calls, cs, wall)
		r.RSS = stopRSS()
		r.GateBefore = before
		r.GateAfter = gateStates(ctx, client, fleet.BaseURL, fleet.AdminToken)
		fmt.Printf("\n== %d users ==\n", n)
		r.Write(os.Stdout)
		reports = append(reports, r)
		allCalls = append(allCalls, cs)
		if n == 10 && len(r.Verdict()) > 0 {
			missed = true
		}
		if ctx.Err() != nil {
			break
		}
	}
	return reports, allCalls, missed
}
