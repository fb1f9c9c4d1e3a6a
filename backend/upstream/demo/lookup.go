package demo

import (
	"fmt"
	"net/http"
)

// The demo answers the usage lookup OpenRouter publishes, for its own chat
// calls: GET /v1/generation?id=chatcmpl-demo-N gives the call's usage as
// the plan reports it (the whole answer's, even of a stream it cut: the
// provider did the work), in OpenRouter's shape. SetLookup scripts it.

// Lookup scripts the demo's usage lookup.
type Lookup struct {
	// Late answers 404 to the first Late lookups of each call (a provider
	// that has not recorded the call yet).
	Late int
	// Never answers 404 to every lookup; Error answers 500.
	Never, Error bool
}

// SetLookup scripts the usage lookup from now on.
func (s *Server) SetLookup(l Lookup) {
	s.mu.Lock()
	s.lookup = l
	s.mu.Unlock()
}

// Lookups is how many usage lookups the demo answered.
func (s *Server) Lookups() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookups
}

// remember keeps a chat call's usage for its lookup.
func (s *Server) remember(x *exchange) {
	u := x.usage()
	s.update(func() {
		if s.usages == nil {
			s.usages = map[string]lookupUsage{}
		}
		s.usages[x.id()] = lookupUsage{prompt: u.PromptTokens, completion: u.CompletionTokens}
	})
}

type lookupUsage struct{ prompt, completion int64 }

func (s *Server) generation(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	s.mu.Lock()
	l := s.lookup
	u, ok := s.usages[id]
	s.lookups++
	s.asked[id]++
	asked := s.asked[id]
	s.mu.Unlock()
	switch {
	case l.Error:
		writeJSON(w, http.StatusInternalServerError, errorBody("the demo's usage lookup is scripted to fail", "server_error", "server_error"))
	case !ok || l.Never || asked <= l.Late:
		writeJSON(w, http.StatusNotFound, errorBody(fmt.Sprintf("generation %s not found", id), "not_found", "not_found"))
	default:
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"id": id, "model": "demo-chat",
			"native_tokens_prompt": u.prompt, "native_tokens_completion": u.completion, "total_cost": 0, "cancelled": false}})
	}
}
