package e2e_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/alert"
)

// hookAlert is one webhook body as the contract writes it.
type hookAlert struct {
	Kind      alert.Kind `json:"kind"`
	Tenant    string     `json:"tenant"`
	Threshold int        `json:"threshold"`
	Period    string     `json:"period"`
	Used      string     `json:"used"`
	Budget    string     `json:"budget"`
	Currency  string     `json:"currency"`
	At        time.Time  `json:"at"`
	Run       string     `json:"run"`
}

// hookReceiver is the alerts' webhook on loopback: it checks each POST's
// X-Quotagate-Signature against the secret (failing the test otherwise),
// answers 204 and keeps the alerts in arrival order.
type hookReceiver struct {
	t       *testing.T
	url     string
	secret  string
	mu      sync.Mutex
	got     []hookAlert
	arrived chan struct{} // a token per arrival
}

func newHookReceiver(t *testing.T, secret string) *hookReceiver {
	h := &hookReceiver{t: t, secret: secret, arrived: make(chan struct{}, 256)}
	srv := httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/quotagate-alerts"
	return h
}

func (h *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	mac := hmac.New(sha256.New, []byte(h.secret))
	mac.Write(body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if got := r.Header.Get("X-Quotagate-Signature"); !hmac.Equal([]byte(got), []byte(want)) {
		h.t.Errorf("webhook signature %q does not verify with the secret (want %q) for %s", got, want, body)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var a hookAlert
	if err := json.Unmarshal(body, &a); err != nil || r.Method != "POST" {
		h.t.Errorf("webhook %s: %v: %s", r.Method, err, body)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.got = append(h.got, a)
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
	h.arrived <- struct{}{}
}

// wait returns the first alert of kind received, waiting for arrivals (not
// a sleep) up to 20 s.
func (h *hookReceiver) wait(kind alert.Kind) hookAlert {
	h.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		h.mu.Lock()
		for _, a := range h.got {
			if a.Kind == kind {
				h.mu.Unlock()
				return a
			}
		}
		h.mu.Unlock()
		select {
		case <-h.arrived:
		case <-timeout:
			h.t.Fatalf("no %s alert reached the webhook in 20 s (got %+v)", kind, h.all())
		}
	}
}

// waitCount waits until n alerts have arrived.
func (h *hookReceiver) waitCount(n int) {
	h.t.Helper()
	timeout := time.After(20 * time.Second)
	for len(h.all()) < n {
		select {
		case <-h.arrived:
		case <-timeout:
			h.t.Fatalf("%d alerts reached the webhook in 20 s, want %d: %+v", len(h.all()), n, h.all())
		}
	}
}

// count counts the alerts received of kind in period ("": any).
func (h *hookReceiver) count(kind alert.Kind, period string) int {
	n := 0
	for _, a := range h.all() {
		if (kind == "" || a.Kind == kind) && (period == "" || a.Period == period) {
			n++
		}
	}
	return n
}

func (h *hookReceiver) all() []hookAlert {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookAlert(nil), h.got...)
}
