package postgres

import (
	"github.com/quotagate/quotagate/backend/ledger"
)

// OnCommit sets the ledger's commit hook (ledger.Store): it is told what
// each transaction committed — this gateway's own, and, once Serve
// listens, the other gateways' (announced by NOTIFY, which PostgreSQL
// delivers on commit and in commit order) — one call at a time, in the
// order this gateway learnt of the commits.
func (s *Store) OnCommit(hook ledger.CommitHook) { s.hooks.SetHook(hook) }
