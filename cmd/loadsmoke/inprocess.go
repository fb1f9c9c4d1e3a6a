package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/metrics"
	"github.com/quotagate/quotagate/backend/ratelimit"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/backend/sqlite"
	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// StartInProcess assembles the gateway in this process with the same
// config -binary would write: server.Open with a real SQLite ledger in a
// temporary data dir, the demo upstream on its own loopback listener, the
// gates and the rate limiter. RSS is then this process's (load generator
// included), so prefer -binary for the memory figure once main.go wires the
// gateway.
//
// This wiring mirrors what main.go's wire() must do; it lives here so that
// the load smoke can run before that lands.
func StartInProcess(ctx context.Context, o SpawnOptions) (*Fleet, error) {
	dir, err := os.MkdirTemp("", "quotagate-loadsmoke-")
	if err != nil {
		return nil, err
	}
	f := &Fleet{AdminToken: randomHex(16), PID: os.Getpid(), RSSSource: "in-process (gateway + load generator)"}
	for range o.Users {
		f.Keys = append(f.Keys, "sk-load-"+randomHex(12))
	}
	cfg, err := config.Parse([]byte(configYAML(o, "127.0.0.1:0", f.AdminToken, f.Keys)),
		func(string) (string, bool) { return "", false })
	if err != nil {
		return nil, fmt.Errorf("in-process config: %w", err)
	}
	var closers []func() error
	f.stop = func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		errs = append(errs, os.RemoveAll(dir))
		return errors.Join(errs...)
	}
	logger := slog.New(slog.DiscardHandler)
	if o.Log != "" {
		lf, err := os.Create(o.Log)
		if err != nil {
			return nil, err
		}
		closers = append(closers, lf.Close)
		logger = slog.New(slog.NewTextHandler(lf, nil))
	}
	srv, err := server.Open(ctx, server.Options{
		Config: cfg, DataDir: filepath.Join(dir, "data"), Addr: "127.0.0.1:0", Version: "loadsmoke", Logger: logger,
		OpenStore: func(ctx context.Context, dataDir string) (ledger.Store, error) {
			return sqlite.Open(filepath.Join(dataDir, "ledger.db"), sqlite.Options{})
		},
		Gateway: func(p server.Parts) (http.Handler, error) {
			m, err := meter.New(p.Config.Meter)
			if err != nil {
				return nil, err
			}
			var ups []gateway.Upstream
			for _, u := range p.Config.Upstreams {
				d, err := demo.Start(demo.Options{Models: u.Models})
				if err != nil {
					return nil, err
				}
				closers = append(closers, d.Close)
				f.demos = append(f.demos, d)
				c, err := upstream.New(upstream.Options{Name: u.Name, BaseURL: d.URL(), Models: u.Models})
				if err != nil {
					return nil, err
				}
				ups = append(ups, c)
			}
			rl := ratelimit.New(ratelimit.Options{})
			for _, t := range p.Config.Tenants {
				rl.SetLimits(t.ID, ratelimit.Limits{PerMinute: t.RateLimits.PerMinute, PerHour: t.RateLimits.PerHour})
			}
			if err := metrics.Register(p.Registry, p.Gates, rl); err != nil {
				return nil, err
			}
			return gateway.New(gateway.Options{
				Store: p.Store, Meter: m, Upstreams: ups, Logger: p.Logger,
				Reserve: meter.ReservePolicy{DefaultOutputUnits: ledger.Units(p.Config.Limits.DefaultOutputUnits),
					ReasoningFloorUnits: ledger.Units(p.Config.Limits.ReasoningFloorUnits)},
				ForwardHeaders: []string{demo.PlanHeader},
				RateLimiter:    rl,
				Gate:           gateway.FromGates(p.Gates),
			}), nil
		},
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	closers = append(closers, srv.Close)
	f.BaseURL = srv.URL()
	f.store = srv.Store()
	return f, nil
}
