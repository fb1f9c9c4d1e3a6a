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

func run(args []string) error {
	fs := flag.NewFlagSet("loadsmoke", flag.ContinueOnError)
	var (
		usersFlag  = fs.String("users", "10,20", "virtual users per run, comma-separated: one run each")
		calls      = fs.Int("calls", 3, "streaming calls per user")
		ramp       = fs.Duration("ramp", 5*time.Second, "users start spread evenly over this")
		think      = fs.String("think", "5s-15s", "pause between a user's calls (reading the answer), min-max")
		plan       = fs.String("plan", "latency=2s-5s", "demo upstream plan per call (seed 003: 2–5 s); empty: none")
		model      = fs.String("model", "demo-chat", "model to call")
		timeout    = fs.Duration("timeout", 2*time.Minute, "per call, retries included")
		seed       = fs.Uint64("seed", 0, "randomness of starts and think pauses (0: from the clock)")
		noRetry    = fs.Bool("no-retry", false, "do not retry 429/503 (measure first answers only)")
		base       = fs.String("base", "", "gateway root URL of an existing gateway, e.g. http://127.0.0.1:8787")
		keys       = fs.String("keys", "", "tenant keys for -base, comma-separated (one per user, reused round-robin)")
		pid        = fs.Int("pid", 0, "gateway process id for RSS with -base")
		adminTok   = fs.String("admin-token", "", "admin token for -base (gate figures in the report)")
		binary     = fs.String("binary", "", "quotagate binary to start with a generated config (one tenant per user)")
		inprocess  = fs.Bool("inprocess", false, "assemble the gateway in this process")
		meterName  = fs.String("meter", "utf8-bytes-v1", "meter of the started gateway")
		maxConc    = fs.Int("max-concurrent", 2, "started gateway: upstream max_concurrent (seed 003: 2)")
		maxWaiters = fs.Int("max-waiters", 4, "started gateway: queue max_waiters (seed 003: 4)")
		maxWait    = fs.Duration("max-wait", 8*time.Second, "started gateway: queue max_wait (seed 003: 8s)")
		perMinute  = fs.Int("per-minute", 10, "started gateway: tenant rate limit per minute (seed 003: 10)")
		perHour    = fs.Int("per-hour", 120, "started gateway: tenant rate limit per hour (seed 003: 120)")
		tenantMax  = fs.Int("tenant-max-concurrent", 2, "started gateway: tenant max_concurrent")
		logPath    = fs.String("log", "", "started gateway: write its log here")
		jsonOut    = fs.String("json", "", "write every call and report as JSON to this file")
		assert     = fs.Bool("assert", false, "exit 1 when a 10-user run misses the pass line")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	var users []int
	for _, s := range strings.Split(*usersFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-users %q: want positive integers", *usersFlag)
		}
		users = append(users, n)
	}
	thinkMin, thinkMax, err := parseRange(*think)
	if err != nil {
		return fmt.Errorf("-think: %w", err)
	}
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0}}
	maxUsers := 0
	for _, n := range users {
		maxUsers = max(maxUsers, n)
	}
	spawnOpts := SpawnOptions{Binary: *binary, Users: maxUsers, Meter: *meterName, MaxConcurrent: *maxConc,
		MaxWaiters: *maxWaiters, MaxWait: *maxWait, PerMinute: *perMinute, PerHour: *perHour,
		TenantMax: *tenantMax, Log: *logPath}
	var fleet *Fleet
	switch {
	case *base != "":
		if *keys == "" {
			return errors.New("-base needs -keys")
		}
		fleet = &Fleet{BaseURL: strings.TrimRight(*base, "/"), Keys: strings.Split(*keys, ","), AdminToken: *adminTok,
			PID: *pid, RSSSource: "-pid"}
		if *pid == 0 {
			fleet.RSSSource = "no -pid given"
		}
	case *binary != "":
		if fleet, err = Spawn(ctx, client, spawnOpts); err != nil {
			return err
		}
	case *inprocess:
		if fleet, err = StartInProcess(ctx, spawnOpts); err != nil {
			return err
		}
	default:
		return errors.New("give -binary, -base or -inprocess")
	}
	defer fleet.Close()

	retry := gate.DefaultRetryPolicy
	if *noRetry {
		retry = gate.RetryPolicy{}
	}
	fmt.Printf("gateway %s · plan %q · %d calls/user · think %s · ramp %v · seed %d\n",
		fleet.BaseURL, *plan, *calls, *think, *ramp, *seed)
	var reports []Report
	var allCalls [][]Call
	missed := false
	for i, n := range users {
		l := Load{BaseURL: fleet.BaseURL, Keys: fleet.Keys, Users: n, Calls: *calls, Ramp: *ramp,
			ThinkMin: thinkMin, ThinkMax: thinkMax, Model: *model, Plan: *plan, Retry: retry,
			Timeout: *timeout, Seed: *seed + uint64(i), Client: client}
		before := gateStates(ctx, client, fleet.BaseURL, fleet.AdminToken)
		stopRSS := sampleRSS(fleet.PID, fleet.RSSSource)
		start := time.Now()
		cs := l.Run(ctx)
		wall := time.Since(start)
		r := Summarize(n, *calls, cs, wall)
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
	fmt.Println("\n| users | calls | final status mix | first byte p50 / p95 | whole call p95 | final 429 | 5xx | peak RSS | seed 003 line |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, r := range reports {
		fmt.Println(r.MarkdownRow())
	}
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{"reports": reports, "calls": allCalls}, "", "  ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	if *assert && missed {
		return errMissedPassLine
	}
	return nil
}
