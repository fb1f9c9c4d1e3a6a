package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
	"github.com/quotagate/quotagate/cmd/internal/child"
)

// Fleet is the gateway under test and how to reach it.
type Fleet struct {
	BaseURL    string
	Keys       []string
	AdminToken string
	PID        int    // gateway process, for RSS; 0: not measured
	RSSSource  string // how PID was found
	stop       func() error

	// In-process only: the ledger and the demo upstreams, for tests.
	store ledger.Store
	demos []*demo.Server
}

// Close stops what the loadsmoke started (nothing for an external gateway).
func (f *Fleet) Close() error {
	if f.stop == nil {
		return nil
	}
	return f.stop()
}

// SpawnOptions are the gateway config the loadsmoke writes when it starts
// the quotagate binary itself: seed 003's upstream bounds and rate limits,
// one tenant per virtual user.
type SpawnOptions struct {
	Binary        string
	Users         int
	Meter         string
	MaxConcurrent int
	MaxWaiters    int
	MaxWait       time.Duration
	PerMinute     int
	PerHour       int
	TenantMax     int // tenant max_concurrent
	Log           string
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// configYAML is the config the spawned gateway runs with.
func configYAML(o SpawnOptions, addr, adminToken string, keys []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "addr: %s\nmeter: %s\nadmin_token: %s\ntenants:\n", addr, o.Meter, adminToken)
	for i, k := range keys {
		fmt.Fprintf(&b, "  - id: user%02d\n    key: %s\n    budget_units: 100000000\n    max_concurrent: %d\n", i+1, k, o.TenantMax)
		if o.PerMinute > 0 || o.PerHour > 0 {
			fmt.Fprintf(&b, "    rate_limits: {per_minute: %d, per_hour: %d}\n", o.PerMinute, o.PerHour)
		}
	}
	fmt.Fprintf(&b, "upstreams:\n  - name: demo\n    kind: demo\n    models: [demo-chat]\n    max_concurrent: %d\n    queue: {max_waiters: %d, max_wait: %s}\n",
		o.MaxConcurrent, o.MaxWaiters, o.MaxWait)
	return b.String()
}

// Spawn writes a config into a temporary data dir, starts
// `<binary> serve --config … --data … --addr …` and waits for /healthz.
func Spawn(ctx context.Context, c *http.Client, o SpawnOptions) (*Fleet, error) {
	f := &Fleet{AdminToken: randomHex(16), RSSSource: "child process"}
	for range o.Users {
		f.Keys = append(f.Keys, "sk-load-"+randomHex(12))
	}
	g, err := child.Start(child.Options{Binary: o.Binary, Prefix: "quotagate-loadsmoke-", Log: o.Log,
		Config: func(addr string) string { return configYAML(o, addr, f.AdminToken, f.Keys) }})
	if err != nil {
		return nil, err
	}
	f.BaseURL, f.PID, f.stop = "http://"+g.Addr, g.PID, g.Stop
	hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	healthy := make(chan error, 1)
	go func() { healthy <- waitHealthy(hctx, c, f.BaseURL) }()
	select {
	case err = <-healthy:
	case <-g.Exited():
		err = fmt.Errorf("gateway exited before it was healthy (%v); log: %s", g.Err(), g.Log)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
