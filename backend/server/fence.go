package server

import (
	"context"
	"sync"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// tenantFence makes deleting a tenant one step against this gateway's
// admissions: Delete closes the tenant (waiting out admissions already in
// the ledger's hands), checks that nothing is in flight or held, and
// revokes its keys, or reopens it when the check refuses. A call that
// passed the key check before the revocation reaches Admit after it and is
// refused there, so a deleted tenant never gains a run. Other gateways on a
// shared ledger are not fenced (their admissions are their own).
type tenantFence struct {
	mu    sync.RWMutex
	state map[string]fenceState // guarded by mu; absent: open
}

type fenceState int

const (
	fenceClosing fenceState = iota + 1 // a delete is checking: retry shortly
	fenceDeleted                       // deleted: its keys no longer open quotagate
)

func newTenantFence() *tenantFence { return &tenantFence{state: map[string]fenceState{}} }

// close shuts id's admissions; it returns once no admission of any tenant
// is between its fence check and the ledger's answer.
func (f *tenantFence) close(id string) {
	f.mu.Lock()
	f.state[id] = fenceClosing
	f.mu.Unlock()
}

// settle ends a delete: deleted keeps id shut, else it is open again.
func (f *tenantFence) settle(id string, deleted bool) {
	f.mu.Lock()
	if deleted {
		f.state[id] = fenceDeleted
	} else {
		delete(f.state, id)
	}
	f.mu.Unlock()
}

// reopen opens the tenants configured again (a tenant created anew under a
// deleted id, a discard that brings the file's back).
func (f *tenantFence) reopen(ids []string) {
	f.mu.Lock()
	for _, id := range ids {
		if f.state[id] == fenceDeleted {
			delete(f.state, id)
		}
	}
	f.mu.Unlock()
}

// wrap returns st with Admit behind the fence.
func (f *tenantFence) wrap(st ledger.Store) ledger.Store {
	if f == nil {
		return st
	}
	return fencedStore{Store: st, f: f}
}

type fencedStore struct {
	ledger.Store
	f *tenantFence
}

// Admit refuses a closed tenant; the read lock is held across the ledger's
// Admit so that close waits until that admission is visible to the check.
func (s fencedStore) Admit(ctx context.Context, req ledger.AdmitRequest) (ledger.Run, error) {
	s.f.mu.RLock()
	defer s.f.mu.RUnlock()
	switch s.f.state[req.TenantID] {
	case fenceClosing:
		return ledger.Run{}, &ledger.Error{Code: ledger.CodeConcurrencyLimit, RetryAfter: time.Second,
			Message: "tenant " + req.TenantID + " is being deleted by the operator; nothing was charged — retry in a second"}
	case fenceDeleted:
		return ledger.Run{}, ledger.Errorf(ledger.CodeInvalidAPIKey, "the API key is not known to this quotagate")
	}
	return s.Store.Admit(ctx, req)
}
