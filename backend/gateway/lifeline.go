package gateway

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Why a run's upstream context was cancelled. Owner, operator, client and
// write-timeout cancels end the run cancelled; an upstream silence ends it
// interrupted. None of them is evidence: the hold is kept.
var (
	errCancelOwner    = errors.New("cancelled by its owner")
	errCancelOperator = errors.New("cancelled by the operator")
	errWriteTimeout   = errors.New("the client stopped reading for longer than the write timeout")
	errUpstreamIdle   = errors.New("the upstream sent nothing for longer than the upstream timeout")
)

// lifeline is a run's upstream context and the one cause that ended it.
// The upstream call's context does not end with the client's request: the
// relay decides when a client that left ends the run.
//
// The write to the client in progress shares its lock: abort must cut a
// write that blocks on a client that does not read, and a departure seen
// while a write is in progress must be acted on once it is over.
type lifeline struct {
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	reason  error                    // the first abort's cause
	by      ledger.Actor             // who cancelled, when it was not the run's tenant (the operator)
	rc      *http.ResponseController // set once the response started
	writing bool                     // a write to the client is in progress
	leftMid bool                     // the client left while a write was in progress (that write may still succeed)
}

// abort cancels the upstream call with cause (the first cause wins) and,
// if a write to a client that does not read is blocking, ends that write now.
func (l *lifeline) abort(cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reason == nil {
		l.reason = cause
	}
	l.cancel(cause)
	if l.writing && l.rc != nil {
		_ = l.rc.SetWriteDeadline(time.Now())
	}
}

// cancelBy is the operator's cancel: the run's end is audited as actor's,
// unless another cause ended it first.
func (l *lifeline) cancelBy(actor ledger.Actor) {
	l.mu.Lock()
	if l.reason == nil {
		l.by = actor
	}
	l.mu.Unlock()
	l.abort(errCancelOperator)
}

// operator is who cancelled the run when the operator did, else no actor.
func (l *lifeline) operator() ledger.Actor {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.by.IsZero() && errors.Is(l.reason, errCancelOperator) {
		return l.by
	}
	return ledger.Actor{}
}

// cause says why the upstream context ended, or nil while it runs. Without
// an abort, the request context ended: the client closed its connection.
func (l *lifeline) cause() error {
	if l.ctx.Err() == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reason != nil {
		return l.reason
	}
	return errClientGone
}

func statusFor(cause error) ledger.RunStatus {
	if errors.Is(cause, errUpstreamIdle) {
		return ledger.RunInterrupted
	}
	return ledger.RunCancelled
}

// clientError is what the client of a cancelled run is told, when it can
// still hear it.
func clientError(cause error) error {
	switch {
	case errors.Is(cause, errUpstreamIdle):
		return ledger.Errorf(ledger.CodeUpstreamTimeout, "the upstream stopped sending; the run was cut and its reservation is held until reconciled")
	case errors.Is(cause, errCancelOwner), errors.Is(cause, errCancelOperator):
		return ledger.Errorf(ledger.CodeRunEnded, "the run was %s; its reservation is held until reconciled", cause.Error())
	}
	return ledger.Errorf(ledger.CodeRunEnded, "the run ended: %s", cause.Error())
}
