package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/quota"
)

// Delete removes a tenant on the operator's behalf (admin.TenantDeleter).
// It is refused while the tenant has runs in flight or money held: those
// runs must end and their holds be reconciled first, or the reserve would
// sit on a tenant nobody can see in Settings. Otherwise its keys are
// revoked at once (the ledger audits "tenant no longer configured" as the
// operator) and its balance row stays as history. A tenant of the config
// file keeps its generated key in the data dir, so a discard brings it back
// as it was; a tenant added on the dashboard loses its key file, so a
// tenant created later under the same id gets a new key.
//
// The check and the revocation are one step for this gateway: the tenant's
// admissions are fenced (fence.go) from before the check, so a call
// admitted meanwhile is in the check, and one that passed its key check
// before the revocation is refused at admission (429 with Retry-After while
// the check runs, 401 once deleted). Gateways of other processes on a
// shared ledger are not fenced.
func (a tenantAdmin) Delete(ctx context.Context, id string) error {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.tenants, func(t config.Tenant) bool { return t.ID == id })
	if i < 0 || id == quota.DefaultTopUpTenant {
		return errNoTenant(id)
	}
	s.fence.close(id)
	deleted := false
	defer func() { s.fence.settle(id, deleted) }()
	if err := deletable(ctx, s.store, id); err != nil {
		return err
	}
	next := slices.Delete(slices.Clone(s.tenants), i, i+1)
	if err := s.applyTenantsLocked(ctx, next, ledger.ActorAdmin); err != nil {
		return err
	}
	deleted = true
	inFile := slices.ContainsFunc(s.cfg.Tenants, func(f config.Tenant) bool { return f.ID == id })
	if !inFile && s.keys[id] != "" {
		delete(s.keys, id)
		if err := removeKeyFile(s.opts.DataDir, id); err != nil {
			return err
		}
	}
	return nil
}

// deletable refuses a tenant with runs in flight or units held, saying what
// to do first.
func deletable(ctx context.Context, store ledger.Store, id string) error {
	b, err := store.Balance(ctx, id)
	if err != nil {
		return fmt.Errorf("delete tenant %s: %w", id, err)
	}
	held, err := store.Runs(ctx, ledger.RunFilter{TenantID: id, HoldingOnly: true, Limit: 1000})
	if err != nil {
		return fmt.Errorf("delete tenant %s: %w", id, err)
	}
	var inFlight, kept int
	for _, r := range held {
		switch r.Status {
		case ledger.RunQueued, ledger.RunActive:
			inFlight++
		default:
			kept++
		}
	}
	inFlight = max(inFlight, b.Active)
	switch {
	case inFlight > 0:
		return ledger.Errorf(ledger.CodeConflict,
			"tenant %s cannot be deleted: %s still active or queued; cancel %s or let %s finish, then reconcile any hold it keeps",
			id, count(inFlight, "run is", "runs are"), them(inFlight), them(inFlight)).
			Because(ledger.ReasonTenantInFlight, map[string]any{"tenant": id, "runs": inFlight})
	case kept > 0 || b.HeldUnits > 0:
		return ledger.Errorf(ledger.CodeConflict,
			"tenant %s cannot be deleted: %d units are held by %s; reconcile %s on the Holds tab first",
			id, b.HeldUnits, count(kept, "run", "runs"), them(kept)).
			Because(ledger.ReasonTenantHolds, map[string]any{"tenant": id, "units": b.HeldUnits, "runs": kept})
	}
	return nil
}

func errNoTenant(id string) error {
	return ledger.Errorf(ledger.CodeInvalidRequest, "no tenant %q", id).Because(ledger.ReasonTenantUnknown, map[string]any{"tenant": id})
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func removeKeyFile(dataDir, id string) error {
	err := os.Remove(filepath.Join(dataDir, keysDir, id+".key"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the key of deleted tenant %s: %w", id, err)
	}
	return nil
}
