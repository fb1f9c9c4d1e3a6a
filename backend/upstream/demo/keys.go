package demo

import (
	"net/http"
)

// keyBook is what the demo knows of the keys it is sent, under Server.mu.
type keyBook struct {
	refuse map[string]int // RefuseKey: the status answered per key
	calls  map[string]int // calls seen per key
}

// RefuseKey makes the demo answer every call carrying key as a provider
// answers a key it will not serve: 401 (unknown key), 403 (key without
// access) or 429 insufficient_quota (the account's quota is spent, not a
// rate limit). Status 0 serves the key again.
func (s *Server) RefuseKey(key string, status int) {
	s.update(func() {
		if s.keys.refuse == nil {
			s.keys.refuse = map[string]int{}
		}
		if status == 0 {
			delete(s.keys.refuse, key)
			return
		}
		s.keys.refuse[key] = status
	})
}

// KeyCalls is how many calls arrived carrying key, refused or served.
func (s *Server) KeyCalls(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys.calls[key]
}

// refusedKey counts the call's key and answers it when RefuseKey named it.
func (s *Server) refusedKey(w http.ResponseWriter, r *http.Request) bool {
	key := apiKey(r)
	if key == "" {
		return false
	}
	var status int
	s.update(func() {
		if s.keys.calls == nil {
			s.keys.calls = map[string]int{}
		}
		s.keys.calls[key]++
		status = s.keys.refuse[key]
	})
	// Each answer quotes the key, as OpenAI's 401 does: what quotagate
	// relays or keeps of it must be scrubbed.
	switch status {
	case 0:
		return false
	case http.StatusTooManyRequests:
		writeJSON(w, status, errorBody("You exceeded your current quota with key "+key+", please check your plan and billing details (demo upstream).",
			"insufficient_quota", "insufficient_quota"))
	case http.StatusForbidden:
		writeJSON(w, status, errorBody("the key "+key+" may not call the demo upstream", "permission_error", "permission_denied"))
	default:
		writeJSON(w, status, errorBody("Incorrect API key provided: "+key+" (demo upstream).", "invalid_request_error", "invalid_api_key"))
	}
	return true
}
