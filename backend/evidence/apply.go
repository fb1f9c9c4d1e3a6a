package evidence

import (
	"context"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

// Apply reconciles held run id with the figure its provider gave, as
// actor: provider:<upstream> for auto_reconcile, else the operator who
// clicked, with the provider named as the source in the evidence. It is
// the ledger's reconcile (one settle path): a figure above the reserve
// charges the reserve and records the overrun. Errors: CodeInvalidRequest
// when there is no figure to apply (none found yet, or refused), and the
// ledger's (CodeNotHeld when the run holds nothing any more).
func (w *Worker) Apply(ctx context.Context, id ledger.RunID, actor ledger.Actor) (ledger.Run, error) {
	f, ok := w.Finding(id)
	if !ok || f.State != Found {
		why := "the provider has not been asked about it"
		if ok {
			why = "its lookup is " + string(f.State)
			if f.Note != "" {
				why += ": " + f.Note
			}
		}
		return ledger.Run{}, ledger.Errorf(ledger.CodeInvalidRequest, "run %s has no provider figure to apply: %s", id, why)
	}
	run, err := w.o.Store.Run(ctx, id)
	if err != nil {
		return ledger.Run{}, err
	}
	if why := contradiction(run, f); why != "" {
		f.State, f.Note = Refused, why
		w.finish(run, f)
		return ledger.Run{}, ledger.Errorf(ledger.CodeInvalidRequest, "run %s: %s", id, why)
	}
	evidence := f.Says() + ": " + f.Answer
	if actor.Kind != ledger.ActorProvider {
		evidence = "source: " + ledger.Provider(f.Upstream).String() + "; " + evidence
	}
	c := ledger.Reconciliation{Units: f.Units(), Evidence: evidence, FromProvider: true}
	if t, err := price.ChatTokens(f.Input, f.Cached, f.Output, f.Reasoning); err == nil {
		c.Tokens = &t
	}
	out, err := w.o.Store.ReconcileCost(ctx, id, c, actor)
	if err != nil {
		return ledger.Run{}, err
	}
	f.State = Applied
	w.set(f)
	return out, nil
}
