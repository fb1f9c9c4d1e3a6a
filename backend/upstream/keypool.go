package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultKeyCooldown is how long a pool key rests after the provider refused
// it (Options.KeyCooldown).
const DefaultKeyCooldown = 10 * time.Minute

// KeyState is one key of a pool as the dashboard shows it: never the key,
// only its last four characters, and until when it rests (zero: in use).
type KeyState struct {
	Last4        string    `json:"last4"`
	RestingUntil time.Time `json:"resting_until,omitzero"`
	// Why it rests: the provider's answer ("401", "403", "402" or
	// "quota_exhausted"), empty while in use.
	Why string `json:"why,omitempty"`
}

// KeysRestingError is the refusal of an upstream whose every pool key
// rests: nothing was sent, and the earliest key is back at Until.
type KeysRestingError struct {
	Upstream string
	Until    time.Time
	Now      time.Time
}

func (e *KeysRestingError) Error() string {
	return fmt.Sprintf("every API key of upstream %s is resting, each refused by the provider; the first is back at %s",
		e.Upstream, e.Until.UTC().Format(time.RFC3339))
}

// RetryAfter is how long until the earliest key is back (at least a second).
func (e *KeysRestingError) RetryAfter() time.Duration {
	return max(e.Until.Sub(e.Now).Round(time.Second), time.Second)
}

// keyPool hands out an upstream's keys in turn and rests a key the provider
// refused. The rest is this gateway's memory only: a restart, or another
// gateway on the same ledger, tries every key again.
type keyPool struct {
	upstream string
	cooldown time.Duration
	now      func() time.Time

	mu    sync.Mutex
	keys  []string
	next  int         // where the next turn starts
	until []time.Time // resting until; zero or past: in use
	why   []string
}

func newKeyPool(upstream string, keys []string, cooldown time.Duration, now func() time.Time) *keyPool {
	if cooldown <= 0 {
		cooldown = DefaultKeyCooldown
	}
	if now == nil {
		now = time.Now
	}
	return &keyPool{upstream: upstream, cooldown: cooldown, now: now, keys: keys,
		until: make([]time.Time, len(keys)), why: make([]string, len(keys))}
}

// take returns the next key in turn that is not resting, or a SendError
// (not sent) wrapping *KeysRestingError when all are.
func (p *keyPool) take() (int, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	first := time.Time{}
	for n := range p.keys {
		i := (p.next + n) % len(p.keys)
		if !p.until[i].After(now) {
			p.next = i + 1
			return i, p.keys[i], nil
		}
		if first.IsZero() || p.until[i].Before(first) {
			first = p.until[i]
		}
	}
	return 0, "", &SendError{Upstream: p.upstream, Err: &KeysRestingError{Upstream: p.upstream, Until: first, Now: now}}
}

// rest puts key i to rest for the cooldown, why being the provider's answer.
func (p *keyPool) rest(i int, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.until[i] = p.now().Add(p.cooldown)
	p.why[i] = why
}

// states is the pool as the dashboard shows it, in config order.
func (p *keyPool) states() []KeyState {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	out := make([]KeyState, len(p.keys))
	for i, k := range p.keys {
		out[i].Last4 = k[max(len(k)-4, 0):]
		if p.until[i].After(now) {
			out[i].RestingUntil, out[i].Why = p.until[i].UTC(), p.why[i]
		}
	}
	return out
}

// keyRefusalBytes bounds how much of a 402/429 body is read to tell a spent
// account from a busy one; the body is handed on whole either way.
const keyRefusalBytes = 64 << 10

// keyRefused says why resp refuses the key it was sent with rather than the
// call: 401 and 403 (a revoked or unknown key), 402 (the account cannot
// pay), and a 429 saying the account's quota is spent, not that it is busy.
// It returns resp with its body still whole.
func keyRefused(resp *Response) (string, *Response) {
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusPaymentRequired:
		return fmt.Sprint(resp.StatusCode), resp
	case http.StatusTooManyRequests:
	default:
		return "", resp
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, keyRefusalBytes))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	if err == nil && quotaExhausted(head) {
		return "quota_exhausted", resp
	}
	return "", resp
}

// Error codes by which providers say an account's quota (not its rate) is
// spent: OpenAI's insufficient_quota; Volcengine Ark's QuotaExceeded (a
// model's free trial spent) and SetLimitExceeded (the account's own
// inference limit reached); Anthropic's billing_error.
var quotaCodes = map[string]bool{"insufficient_quota": true, "QuotaExceeded": true,
	"SetLimitExceeded": true, "billing_error": true}

// quotaExhausted reads a 429 body in the OpenAI, Anthropic, Ark or Google
// shape. A Google RESOURCE_EXHAUSTED is a spent quota only when a violated
// quota is a daily one: a per-minute one is a rate, which the gateway's
// retry waits out.
func quotaExhausted(body []byte) bool {
	var e struct {
		Error struct {
			Code    any    `json:"code"`
			Type    string `json:"type"`
			Details []struct {
				Violations []struct {
					QuotaID string `json:"quotaId"`
				} `json:"violations"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return false
	}
	if code, ok := e.Error.Code.(string); ok && quotaCodes[code] || quotaCodes[e.Error.Type] {
		return true
	}
	for _, d := range e.Error.Details {
		for _, v := range d.Violations {
			if strings.Contains(v.QuotaID, "PerDay") {
				return true
			}
		}
	}
	return false
}
