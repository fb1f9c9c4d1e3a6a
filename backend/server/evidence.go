package server

import (
	"context"
	"fmt"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/evidence"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/live"
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
	w := evidence.New(evidence.Options{Store: s.store, Upstreams: ups, Scrub: sc.String, Now: s.opts.Clock.Now,
		Logger: s.log, Changed: func(evidence.Finding) { s.hub.Publish(live.Change{Kind: live.KindLedger}) }})
	s.evidence = w
	s.commits.evidence.Store(w)
	if err := w.Start(ctx); err != nil {
		return err
	}
	return nil
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
