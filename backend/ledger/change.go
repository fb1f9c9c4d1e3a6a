package ledger

import "context"

// Change is one thing a committed transaction changed: one audit row, and
// the run, tenant and quota day it moved. The commit hook receives them.
type Change struct {
	Seq      int64     // the audit row's seq
	Kind     AuditKind // what happened (admit, settle, reject, sync, …)
	Actor    Actor     // who did it
	TenantID string    // the tenant whose balance or policy moved; "" for none (a sync)
	// RunID, Status and Usage: the run the change moved, with its state after
	// the change. Empty when no run moved (a sync, a refusal before admission,
	// a config change).
	RunID  RunID
	Status RunStatus
	Usage  UsageStatus
	// Upstream and Model of the run or snapshot; Day is the guarded model's
	// quota day the change belongs to, "" when the model is not guarded.
	Upstream string
	Model    string
	Day      string
	// FromPeer: another gateway sharing the ledger committed the change
	// (learnt by its notification); false for this gateway's own commits.
	// Work a change starts (a held run's lookup) is the committer's.
	FromPeer bool `json:"-"`
}

// Guarded reports whether the change belongs to a guarded model's quota day.
func (c Change) Guarded() bool { return c.Day != "" && c.Upstream != "" && c.Model != "" }

// CommitHook receives what each committed transaction changed, in commit
// order, after the commit returned. ctx marks the call as the hook's own:
// a store write made from inside the hook must be given ctx (or a context
// derived from it), so that the write does not wait for its own delivery,
// which comes after the hook returns.
type CommitHook func(ctx context.Context, changes []Change)

type hookKey struct{}

// HookContext returns ctx marked as a commit hook's context.
func HookContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, hookKey{}, true)
}

// InHook reports whether ctx is (derived from) a commit hook's context.
func InHook(ctx context.Context) bool {
	v, _ := ctx.Value(hookKey{}).(bool)
	return v
}
