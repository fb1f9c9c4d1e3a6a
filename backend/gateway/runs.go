package gateway

import (
	"context"
	"net/http"
	"sort"

	"github.com/quotagate/quotagate/backend/ledger"
)

func (g *Gateway) register(c *call) {
	g.rmu.Lock()
	g.runs[c.id] = c
	g.rmu.Unlock()
}

func (g *Gateway) unregister(c *call) {
	g.rmu.Lock()
	if g.runs[c.id] == c {
		delete(g.runs, c.id)
	}
	g.rmu.Unlock()
}

// Queued counts this gateway's calls waiting at a gate, by tenant: the
// real queue, not a page of listed runs.
func (g *Gateway) Queued() map[string]int {
	g.rmu.Lock()
	defer g.rmu.Unlock()
	out := map[string]int{}
	for _, c := range g.runs {
		if c.waiting.Load() {
			out[c.tenant.ID]++
		}
	}
	return out
}

func (g *Gateway) lookup(id ledger.RunID) *call {
	g.rmu.Lock()
	defer g.rmu.Unlock()
	return g.runs[id]
}

// Streams returns the queue figures of every stream in flight, oldest run
// id first.
func (g *Gateway) Streams() []StreamState {
	g.rmu.Lock()
	out := make([]StreamState, 0, len(g.runs))
	for _, c := range g.runs {
		if c.relay.stream != nil {
			out = append(out, c.streamState())
		}
	}
	g.rmu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].RunID < out[j].RunID })
	return out
}

// Stream returns the queue figures of the stream of run id while it is in flight.
func (g *Gateway) Stream(id ledger.RunID) (StreamState, bool) {
	c := g.lookup(id)
	if c == nil || c.relay.stream == nil {
		return StreamState{}, false
	}
	return c.streamState(), true
}

func (c *call) streamState() StreamState {
	s := c.relay.stream
	n := 0
	if q := s.queue.Load(); q != nil {
		n = len(*q)
	}
	return StreamState{RunID: c.id, TenantID: c.tenant.ID, QueueCap: s.queueCap,
		QueueLen: n, QueuePeak: int(s.queuePeak.Load()),
		Backpressure: s.backpressure.Load(), Relayed: s.relayed.Load(), Grace: c.relay.left.Load()}
}

// Cancel is the operator's cancel (admin API): it closes the upstream
// connection of run id, whoever owns it. The run ends cancelled with its
// hold kept, and its end is audited as actor's. Errors: CodeRunNotFound,
// CodeRunEnded, CodeConflict (the run is open in the ledger but not in
// flight in this process).
func (g *Gateway) Cancel(ctx context.Context, id ledger.RunID, actor ledger.Actor) error {
	if c := g.lookup(id); c != nil {
		c.line.cancelBy(actor)
		return nil
	}
	run, err := g.opts.Store.Run(ctx, id)
	if err != nil {
		return err
	}
	return g.cancelElsewhere(ctx, run, true)
}

func notInFlight(run ledger.Run) error {
	if run.Status.Ended() {
		return ledger.Errorf(ledger.CodeRunEnded, "the run %s already ended (%s)", run.ID, run.Status)
	}
	return ledger.Errorf(ledger.CodeConflict, "the run %s is %s but not in flight in this gateway", run.ID, run.Status)
}

func (g *Gateway) getRun(w http.ResponseWriter, r *http.Request, t ledger.Tenant) {
	run, err := g.ownRun(r.Context(), t, ledger.RunID(r.PathValue("id")))
	if err != nil {
		g.internal(w, err, "run")
		return
	}
	writeJSON(w, http.StatusOK, run)
}

// ownRun reads a run of tenant t; another tenant's run is not found.
func (g *Gateway) ownRun(ctx context.Context, t ledger.Tenant, id ledger.RunID) (ledger.Run, error) {
	run, err := g.opts.Store.Run(ctx, id)
	if err == nil && run.TenantID != t.ID {
		err = ledger.Errorf(ledger.CodeRunNotFound, "no run %s", id)
	}
	return run, err
}

// deleteRun is the owner's cancel: 202 and the upstream connection closed;
// 404 for unknown ids and other tenants' runs (the run goes on); 409 when
// the run already ended.
func (g *Gateway) deleteRun(w http.ResponseWriter, r *http.Request, t ledger.Tenant) {
	id := ledger.RunID(r.PathValue("id"))
	if c := g.lookup(id); c != nil {
		if c.tenant.ID != t.ID {
			writeError(w, ledger.Errorf(ledger.CodeRunNotFound, "no run %s", id))
			return
		}
		c.line.abort(errCancelOwner)
		writeJSON(w, http.StatusAccepted, map[string]string{"id": string(id), "status": "cancelling"})
		return
	}
	run, err := g.ownRun(r.Context(), t, id)
	if err != nil {
		g.internal(w, err, "run")
		return
	}
	if err := g.cancelElsewhere(r.Context(), run, false); err != nil {
		g.internal(w, err, "cancel")
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": string(id), "status": "cancelling"})
}
