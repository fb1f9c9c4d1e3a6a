package server

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/postgres"
)

// configuredLedger returns the opener of the ledger cfg.Ledger chooses: the
// SQLite file in the data dir (the default), or the PostgreSQL database
// shared with other gateways, where this gateway's tenants and upstreams
// must match the shared definitions or be newer by ledger.version.
func configuredLedger(cfg *config.Config, addr string) func(ctx context.Context, dataDir string) (ledger.Store, error) {
	if cfg.Ledger.Driver != config.DriverPostgres {
		return OpenLedger
	}
	return func(ctx context.Context, _ string) (ledger.Store, error) {
		st, err := postgres.Open(ctx, cfg.Ledger.DSN, postgres.Options{Instance: instanceName(cfg, addr)})
		if err != nil {
			return nil, err
		}
		if err := st.ClaimConfig(ctx, cfg.Ledger.Version, cfg.Fingerprint()); err != nil {
			st.Close()
			return nil, err
		}
		return st, nil
	}
}

// instanceName is ledger.instance, or host:port of this gateway.
func instanceName(cfg *config.Config, addr string) string {
	if cfg.Ledger.Instance != "" {
		return cfg.Ledger.Instance
	}
	host, _ := os.Hostname()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		port = addr
	}
	return net.JoinHostPort(host, port)
}

// verifyConfigured is `quotagate verify` on the configured ledger.
func verifyConfigured(ctx context.Context, cfg *config.Config, dataDir string) ([]string, error) {
	if cfg.Ledger.Driver == config.DriverPostgres {
		return postgres.Verify(ctx, cfg.Ledger.DSN)
	}
	path := filepath.Join(dataDir, LedgerFile)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no ledger at %s: %w", path, err)
	}
	store, err := OpenLedger(ctx, dataDir)
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	defer store.Close()
	return store.Verify(ctx)
}
