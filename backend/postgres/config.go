package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/ledger"
)

// configClaim is the definitions version this gateway brought.
type configClaim struct {
	version     int64
	fingerprint string
}

type configRow struct {
	version     int64
	fingerprint string
	instance    string
}

// ClaimConfig records that this gateway's tenants and upstreams (digested
// as fingerprint) are the shared definitions at version. It succeeds when
// the database has none yet, when they match what is there, or when
// version is higher than the one recorded (the newer definitions win);
// otherwise it refuses with a message naming both gateways' versions. After
// a claim, ApplyTenants applies only while the claim still stands, so a
// gateway that claimed an older version cannot overwrite a newer one
// applied meanwhile.
func (s *Store) ClaimConfig(ctx context.Context, version int64, fingerprint string) error {
	claim := configClaim{version: version, fingerprint: fingerprint}
	err := s.write(ctx, func(w *wtx) error {
		if _, err := w.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(configLock)); err != nil {
			return fmt.Errorf("lock config: %w", err)
		}
		row, ok, err := readConfigRow(ctx, w)
		if err != nil {
			return err
		}
		if ok {
			if err := s.checkClaim(claim, row); err != nil {
				return err
			}
			if row.fingerprint == fingerprint && version <= row.version {
				return nil // the same definitions: nothing to record
			}
		}
		_, err = w.Exec(ctx, `INSERT INTO config_version (id, version, fingerprint, instance, applied_at)
			VALUES (true, $1, $2, $3, $4) ON CONFLICT (id) DO UPDATE SET version = excluded.version,
			fingerprint = excluded.fingerprint, instance = excluded.instance, applied_at = excluded.applied_at`,
			version, fingerprint, s.opts.Instance, nanos(w.now))
		if err != nil {
			return fmt.Errorf("record config version: %w", err)
		}
		return s.insertAudit(ctx, w, ledger.AuditEntry{Kind: ledger.AuditConfig, Actor: ledger.ActorConfig,
			Reason: "shared definitions", Detail: fmt.Sprintf("ledger.version %d fingerprint %s from instance %s (was %s)",
				version, fingerprint, s.opts.Instance, describeRow(row, ok))}, false)
	})
	if err != nil {
		return fmt.Errorf("claim config version %d: %w", version, err)
	}
	s.mu.Lock()
	s.claim = &claim
	s.mu.Unlock()
	return nil
}

func describeRow(r configRow, ok bool) string {
	if !ok {
		return "none"
	}
	return fmt.Sprintf("version %d fingerprint %s from instance %s", r.version, r.fingerprint, r.instance)
}

func readConfigRow(ctx context.Context, w *wtx) (configRow, bool, error) {
	var r configRow
	err := w.QueryRow(ctx, `SELECT version, fingerprint, instance FROM config_version WHERE id`).
		Scan(&r.version, &r.fingerprint, &r.instance)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("read config version: %w", err)
	}
	return r, true, nil
}

// checkClaim refuses definitions that differ from the recorded ones at the
// same or a lower version.
func (s *Store) checkClaim(c configClaim, row configRow) error {
	if row.fingerprint == c.fingerprint {
		return nil
	}
	if c.version > row.version {
		return nil
	}
	how := "the same version as"
	if c.version < row.version {
		how = "older than"
	}
	return ledger.Errorf(ledger.CodeConflict,
		"this gateway (instance %s, ledger.version %d, fingerprint %s) and instance %s (ledger.version %d, fingerprint %s) define tenants and upstreams differently, and this one's version is %s that: give every gateway the same tenants and upstreams, or raise ledger.version above %d to replace them",
		s.opts.Instance, c.version, c.fingerprint, row.instance, row.version, row.fingerprint, how, row.version)
}

// checkClaimIn re-checks this gateway's claim inside a transaction that
// holds the config lock (ApplyTenants).
func (s *Store) checkClaimIn(ctx context.Context, w *wtx) error {
	s.mu.Lock()
	claim := s.claim
	s.mu.Unlock()
	if claim == nil {
		return nil
	}
	row, ok, err := readConfigRow(ctx, w)
	if err != nil || !ok {
		return err
	}
	if row.version > claim.version || (row.version == claim.version && row.fingerprint != claim.fingerprint) {
		return s.checkClaim(*claim, row)
	}
	return nil
}
