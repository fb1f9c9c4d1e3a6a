package server

import (
	"cmp"
	"context"
	"fmt"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/evidence"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/live"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/scrub"
	"github.com/quotagate/quotagate/backend/upstream/lookup"
)

// startEvidence follows held runs at the providers of the upstreams with a
// usage_lookup (none: no worker), picking up what the last exit left.
func (s *Server) startEvidence(ctx context.Context, sc *scrub.Scrubber) error {
	var ups []evidence.Upstream
	for _, u := range s.cfg.Upstreams {
		l := u.UsageLookup
		if l == nil {
			continue
		}
		key := u.APIKey
		if key == "" && len(u.APIKeys) > 0 {
			key = u.APIKeys[0]
		}
		base := u.BaseURL
		if d := s.assembly.demos[u.Name]; d != nil {
			base = d.URL() // the built-in demo answers the lookup for its own calls
		}
		c, err := lookup.New(lookupSpec(l), base, key, nil)
		if err != nil {
			return fmt.Errorf("upstream %s: %w", u.Name, err)
		}
		ups = append(ups, evidence.Upstream{Name: u.Name, Looker: c, Delay: l.Delay, Window: l.Window,
			Auto: u.AutoReconcile, MaxInFlight: l.MaxInFlight, PerMinute: l.PerMinute})
	}
	if len(ups) == 0 {
		return nil
	}
	follows, err := s.followsAfterRestart(ctx)
	if err != nil {
		return err
	}
	w := evidence.New(evidence.Options{Store: s.store, Upstreams: ups, Scrub: sc.String, Now: s.opts.Clock.Now,
		Logger: s.log, Changed: func(evidence.Finding) { s.hub.Publish(live.Change{Kind: live.KindLedger}) }, Follows: follows})
	s.evidence = w
	s.commits.evidence.Store(w)
	if st, ok := s.store.(*postgres.Store); ok {
		st.OnReaped(w.Adopt) // this gateway found them dead: their holds are its to look up
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	return nil
}

// followsAfterRestart is which held runs this gateway looks up again after
// a restart: on a ledger it shares, the runs it admitted, and those of
// gateways no longer alive when it is the first live one by name (one
// gateway takes them up, not every one); on its own ledger, all (nil).
func (s *Server) followsAfterRestart(ctx context.Context) (func(ledger.Run) bool, error) {
	st, ok := s.store.(*postgres.Store)
	if !ok {
		return nil, nil
	}
	gateways, err := st.Instances(ctx)
	if err != nil {
		return nil, err
	}
	self, first := st.Instance(), ""
	live := map[string]bool{}
	for _, g := range gateways { // by name
		if g.Live {
			live[g.Name] = true
			first = cmp.Or(first, g.Name)
		}
	}
	return func(run ledger.Run) bool { return run.Instance == self || (!live[run.Instance] && first == self) }, nil
}

func lookupSpec(l *config.UsageLookup) lookup.Spec {
	return lookup.Spec{Kind: l.Kind, URL: l.URL, Input: l.Input, Output: l.Output, Cached: l.Cached,
		Reasoning: l.Reasoning, Cost: l.Cost, ID: l.ID}
}

// providerEvidence is the admin API's way to the worker: Apply, and the
// findings of the holds the state lists.
type providerEvidence struct{ s *Server }

func (p providerEvidence) Apply(ctx context.Context, id ledger.RunID, actor ledger.Actor) (ledger.Run, error) {
	if p.s.evidence == nil {
		return ledger.Run{}, ledger.Errorf(ledger.CodeInvalidRequest, "no upstream has a usage_lookup: there is no provider figure to apply to run %s", id)
	}
	return p.s.evidence.Apply(ctx, id, actor)
}

// holdFindings are the findings of holds, by run; nil when there are none.
func (s *Server) holdFindings(holds []ledger.Run) map[ledger.RunID]evidence.Finding {
	if s.evidence == nil {
		return nil
	}
	all := s.evidence.Findings()
	var out map[ledger.RunID]evidence.Finding
	for _, h := range holds {
		if f, ok := all[h.ID]; ok {
			if out == nil {
				out = map[ledger.RunID]evidence.Finding{}
			}
			out[h.ID] = f
		}
	}
	return out
}
