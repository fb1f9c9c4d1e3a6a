package sqlite

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// A BulkCall is one call as Bulk writes it: admitted as Admit admits it,
// then settled at Spent units on Evidence by the admission's actor (the
// tenant itself when the request names none).
type BulkCall struct {
	Admit    ledger.AdmitRequest
	Spent    ledger.Units
	Evidence string
}

// Bulk admits and settles calls in order in one writer transaction,
// through the statements and books Admit and Settle use, each change at
// the store's clock read once per change (as the writer reads it once per
// op). It builds ledgers of millions of calls for the benchmarks
// (backend/internal/ledgergen): an op per Admit and per Settle costs a
// queue round trip and two goroutine wake-ups each, which were most of the
// time such a build took. Every call is written or none: the first refusal
// or failure rolls the whole bulk back and is returned naming its run.
func (s *Store) Bulk(ctx context.Context, calls []BulkCall) error {
	return s.write(ctx, func(w *wtx) error {
		w.bulk = true
		defer func() { w.bulk = false }()
		for _, c := range calls {
			if err := bulkCall(ctx, w, s.opts.Now, c); err != nil {
				return fmt.Errorf("bulk call %s: %w", c.Admit.RunID, err)
			}
		}
		return w.flushAudit(ctx) // while w.bulk holds
	}, nil)
}

func bulkCall(ctx context.Context, w *wtx, now func() time.Time, c BulkCall) error {
	req, err := c.Admit.Validated()
	if err != nil {
		return err
	}
	actor := req.Actor
	if actor == (ledger.Actor{}) {
		actor = ledger.TenantActor(req.TenantID)
	}
	rule := ledger.SettleRule(c.Spent, c.Evidence)
	if err := cmp.Or(rule.Err, ledger.CheckActor(actor)); err != nil {
		return err
	}
	w.now = now().UTC()
	if _, err := admit(ctx, w, req); err != nil {
		return err
	}
	w.now = now().UTC()
	_, err = applyRule(ctx, w, req.RunID, actor, rule)
	return err
}
