package ledger

import (
	"context"
	"strings"
)

// Actor names who made a state change; every transition records one in its
// audit row (the CSV's actor column). Three shapes: a tenant's own call is
// the tenant id (TenantActor), an operator's action is "operator:<how>"
// (Operator: the dashboard, the config file), and quotagate's own work is
// "system:<job>" (System: recovery at start, the quota guard, the top-up).
type Actor string

// TenantActor is the actor of a change made by tenant id's own call.
func TenantActor(id string) Actor { return Actor(id) }

// Operator is the actor of an operator's change, made through how (for
// example "admin" for the admin API and dashboard, "config" for the config file).
func Operator(how string) Actor { return Actor("operator:" + how) }

// System is the actor of quotagate's own work: job is "recovery", "quota", …
func System(job string) Actor { return Actor("system:" + job) }

// Actors of quotagate's own fixed jobs.
const (
	ActorRecovery Actor = "system:recovery" // RecoverInterrupted at start
	ActorConfig   Actor = "operator:config" // tenants applied from the config file
	ActorAdmin    Actor = "operator:admin"  // the admin API and the dashboard
)

// CheckActor reports CodeInvalidRequest when a is empty. Stores call it on
// every transition so that no audit row goes without its actor.
func CheckActor(a Actor) error {
	if strings.TrimSpace(string(a)) == "" {
		return Errorf(CodeInvalidRequest, "a change needs an actor (a tenant id, operator:<how> or system:<job>)")
	}
	return nil
}

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
