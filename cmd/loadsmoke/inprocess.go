package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/server"
)

// StartInProcess runs quotagate in this process with the same config
// -binary would write: server.Open's default assembly, with a real SQLite
// ledger in a temporary data dir and the demo upstream on its own loopback
// listener. RSS is then this process's (load generator included), so prefer
// -binary for the memory figure.
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
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	closers = append(closers, srv.Close)
	f.demos = append(f.demos, srv.Demo("demo"))
	f.BaseURL = srv.URL()
	f.store = srv.Store()
	return f, nil
}
