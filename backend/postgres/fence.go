package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Fencing: a gateway cut off from the database past its lease is judged
// dead by the others, which delete its lease row and end its open runs
// interrupted (holds kept). When it comes back it must not overwrite what
// they decided. Every run records the epoch of the lease it was admitted
// under; an admission checks its epoch in its own transaction, and the
// relaying gateway's end of a run changes the run only if that run's lease
// row still exists, in the same UPDATE. A refused end is kept as a
// late_end audit row, never applied as a second end.

// fenceAdmission checks, in the admission's transaction, that the lease
// epoch it is made under is still this gateway's and unexpired on the
// database's clock, and keeps the lease row from being reaped until the
// transaction ends: a run is never admitted under a lease another gateway
// has judged dead, so the reaper that deletes the row sees every run of it.
func (s *Store) fenceAdmission(ctx context.Context, w *wtx, epoch int64) error {
	if epoch == 0 {
		return nil
	}
	var one int
	err := w.QueryRow(ctx, `SELECT 1 FROM instances WHERE name = $1 AND epoch = $2 AND expires_at >= `+dbNow+`
		FOR KEY SHARE`, s.opts.Instance, epoch).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		s.mu.Lock()
		l := s.lease
		s.mu.Unlock()
		retry := time.Duration(0)
		if l != nil {
			l.lost()
			retry = l.opts.Heartbeat
			select {
			case l.kick <- struct{}{}:
			default:
			}
		}
		return errLeaseLapsed(s.opts.Instance, retry)
	}
	if err != nil {
		return fmt.Errorf("check lease: %w", err)
	}
	return nil
}

// isEnd says rule ends a run as its relaying gateway does at the end of a
// call: the changes a cut-off gateway may still try to make.
func isEnd(rule ledger.Rule) bool {
	switch rule.Op {
	case "settle", "keep hold of", "release hold of":
		return true
	}
	return false
}

// leaseGone reports whether the lease run id was admitted under is gone.
func leaseGone(ctx context.Context, w *wtx, id ledger.RunID) (bool, error) {
	var gone bool
	err := w.QueryRow(ctx, `SELECT lease_epoch <> 0 AND NOT EXISTS (SELECT 1 FROM instances WHERE epoch = runs.lease_epoch)
		FROM runs WHERE id = $1`, string(id)).Scan(&gone)
	if err != nil {
		return false, fmt.Errorf("check the run's lease: %w", err)
	}
	return gone, nil
}

// errEndedElsewhere refuses an end of run whose lease is gone: another
// gateway ends it (or has ended it) for the gateway that lost the lease.
func errEndedElsewhere(run ledger.Run) error {
	return ledger.Errorf(ledger.CodeRunEnded, "run %s was ended by another gateway: the lease of instance %s lapsed while it relayed the run",
		run.ID, run.Instance)
}

// keepLateEnd records the end rule would have written for run, which
// another gateway ended (or is ending) because this gateway's lease
// lapsed, as a late_end audit row with the end's units and evidence — once
// per run — and answers refusal with ErrLateEnd in its chain. A run not
// ended for a lapsed lease is a plain run_ended: refusal as it is.
func (s *Store) keepLateEnd(ctx context.Context, run ledger.Run, rule ledger.Rule, refusal error) error {
	var reaped, kept bool
	err := s.pool.QueryRow(ctx, `SELECT
		lease_epoch <> 0 AND NOT EXISTS (SELECT 1 FROM instances WHERE epoch = runs.lease_epoch)
			OR EXISTS (SELECT 1 FROM audit WHERE run_id = $1 AND actor = $2),
		EXISTS (SELECT 1 FROM audit WHERE run_id = $1 AND kind = $3)
		FROM runs WHERE id = $1`, string(run.ID), ActorLeaseExpiry.String(), string(ledger.AuditLateEnd)).Scan(&reaped, &kept)
	if err != nil {
		return fmt.Errorf("%w (and reading whether its lease lapsed: %v)", refusal, err)
	}
	if !reaped {
		return refusal
	}
	if !kept {
		if err := s.AppendAudit(ctx, lateEndAudit(run, rule, s.opts.Instance)); err != nil {
			return fmt.Errorf("%w (and keeping it as evidence: %v)", refusal, err)
		}
		s.leaseLogger().Warn("a run this gateway relayed was ended by another while its lease had lapsed; its late end is kept as evidence on the hold",
			"run", run.ID, "instance", s.opts.Instance)
	}
	return fmt.Errorf("%w: %w", ledger.ErrLateEnd, refusal)
}

// lateEndAudit is the evidence of the end rule decides for run as it was
// while this gateway relayed it (active, usage pending).
func lateEndAudit(run ledger.Run, rule ledger.Rule, instance string) ledger.AuditEntry {
	relayed := run
	relayed.Status, relayed.Usage, relayed.SpentUnits, relayed.HeldUnits = ledger.RunActive, ledger.UsagePending, 0, run.ReserveUnits
	t, err := rule.Decide(relayed)
	e := ledger.AuditEntry{Kind: ledger.AuditLateEnd, TenantID: run.TenantID, RunID: run.ID,
		Actor: ledger.LeaseActor(instance), Reason: "lease_lapsed"}
	if err != nil {
		e.Detail = fmt.Sprintf("instance %s ended this run after its lease lapsed (not applied): %v", instance, err)
		return e
	}
	e.Units, e.Micros = t.Units, t.Micros
	e.Evidence = t.Evidence
	if e.Evidence == "" {
		e.Evidence = t.Reason
	}
	e.Detail = fmt.Sprintf("instance %s ended this run after its lease lapsed and another gateway had ended it; not applied: %s, %s, %d units",
		instance, t.After.Status, t.After.Usage, t.Units)
	return e
}
