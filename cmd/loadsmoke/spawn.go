package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
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

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
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
	dir, err := os.MkdirTemp("", "quotagate-loadsmoke-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	f := &Fleet{BaseURL: "http://" + addr, AdminToken: randomHex(16), RSSSource: "child process"}
	for range o.Users {
		f.Keys = append(f.Keys, "sk-load-"+randomHex(12))
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(configYAML(o, addr, f.AdminToken, f.Keys)), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(o.Binary, "serve", "--config", cfg, "--data", filepath.Join(dir, "data"), "--addr", addr)
	logPath := o.Log
	if logPath == "" {
		logPath = filepath.Join(dir, "gateway.log")
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", o.Binary, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	f.PID = cmd.Process.Pid
	f.stop = func() error {
		defer os.RemoveAll(dir)
		defer logf.Close()
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
			return nil
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("gateway pid %d ignored SIGINT for 10 s; killed", f.PID)
		}
	}
	hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	healthy := make(chan error, 1)
	go func() { healthy <- waitHealthy(hctx, c, f.BaseURL) }()
	select {
	case err = <-healthy:
	case err = <-exited:
		exited <- err // for stop
		err = fmt.Errorf("gateway exited before it was healthy (%v); log: %s", err, logPath)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
