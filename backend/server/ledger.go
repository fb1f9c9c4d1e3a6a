package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"github.com/quotagate/quotagate/backend/clock"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/postgres"
)

// configuredLedger returns the opener of the ledger cfg.Ledger chooses: the
// SQLite file in the data dir (the default), or the PostgreSQL database
// shared with other gateways, where this gateway's tenants and upstreams
// must match the shared definitions or be newer by ledger.version.
//
// On PostgreSQL the gateway also takes its instance's lease here, before
// Open recovers the instance's interrupted runs: a live twin with the same
// instance name makes the open fail instead.
func configuredLedger(cfg *config.Config, addr string, now clock.Func, log *slog.Logger) func(ctx context.Context, dataDir string) (ledger.Store, error) {
	if cfg.Ledger.Driver != config.DriverPostgres {
		return openLedgerAt(now)
	}
	return func(ctx context.Context, _ string) (ledger.Store, error) {
		for _, t := range cfg.Tenants {
			if len(t.KeyHashes) == 0 {
				// A generated key lives in one data dir: each gateway would
				// apply its own and revoke the others'.
				return nil, fmt.Errorf("tenant %s has no key in the config; on a shared ledger every gateway needs the same keys (key, keys or key_hashes)", t.ID)
			}
		}
		st, err := postgres.Open(ctx, cfg.Ledger.DSN, postgres.Options{Instance: instanceName(cfg, addr), Now: now, Logger: log})
		if err != nil {
			return nil, err
		}
		if err := st.ClaimConfig(ctx, cfg.Ledger.Version, fingerprint(cfg)); err != nil {
			st.Close()
			return nil, err
		}
		if err := st.TakeLease(ctx, postgres.LeaseOptions{Addr: addr, Heartbeat: cfg.Ledger.Heartbeat, Expiry: cfg.Ledger.LeaseExpiry, Logger: log}); err != nil {
			st.Close()
			return nil, err
		}
		return st, nil
	}
}

// joinPeers connects a gateway on a shared ledger to the others: their
// commits reach this gateway's commit hook (so its dashboards and quota
// guard), and cancels of runs this gateway relays are answered here.
// Nothing to do on SQLite.
func (s *Server) joinPeers(ctx context.Context) error {
	st, ok := s.store.(*postgres.Store)
	if !ok {
		return nil
	}
	o := postgres.PeerOptions{Logger: s.log}
	if s.assembly != nil {
		o.Cancel = s.assembly.gateway.CancelLocal
	}
	return st.Serve(ctx, o)
}

// elsewhere is the store's route to the other gateways, when it has one.
func elsewhere(st ledger.Store) gateway.Elsewhere {
	if e, ok := st.(gateway.Elsewhere); ok {
		return e
	}
	return nil
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
func verifyConfigured(ctx context.Context, cfg *config.Config, dataDir string, opts ledger.VerifyOptions) ([]string, error) {
	if cfg.Ledger.Driver == config.DriverPostgres {
		return postgres.VerifyWith(ctx, cfg.Ledger.DSN, opts)
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
	if cv, ok := store.(ledger.CheckpointVerifier); ok {
		return cv.VerifyWith(ctx, opts)
	}
	return store.Verify(ctx)
}
