package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// Pool keys shaped like no provider's key, so that only the gateway's list
// of configured secrets can mask them.
var poolCanaries = []string{"pool-canary-one-Zq8-Lm3-Xv7-Np2-Rt5",
	"pool-canary-two-Hb4-Wd9-Kc1-Pf6-Ys0", "pool-canary-three-Tg2-Jn7-Qe3-Vu8-Ma4"}

// TestKeyPoolRefusalsKeepKeysSecret: an upstream with a pool of three keys
// whose provider refuses the first (401) and the second (403), each answer
// quoting the key it was sent. The first call meets both within one
// attempt and gets the second refusal; the next is served by the third
// key; once the third is refused too (a spent quota), the upstream refuses
// with 429 upstream_busy and a Retry-After until the first key is back. No
// pool key reaches a tenant, a run, the admin state, audit.csv or the logs.
func TestKeyPoolRefusalsKeepKeysSecret(t *testing.T) {
	t.Parallel()
	d, err := demo.Start(demo.Options{Models: []string{"demo-pool"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	r := newRig(t, rigOptions{extraUpstreams: fmt.Sprintf("  - {name: pool, base_url: %q, api_keys: [%s], key_cooldown: 1h, models: [demo-pool]}",
		d.URL(), strings.Join(poolCanaries, ", "))})
	d.RefuseKey(poolCanaries[0], http.StatusUnauthorized)
	d.RefuseKey(poolCanaries[1], http.StatusForbidden)
	body := strings.Replace(chatBody("hello", false, 16), `"demo-chat"`, `"demo-pool"`, 1)
	var got []reply

	got = append(got, r.chat(r.keyA, body))
	if got[0].status != http.StatusForbidden {
		t.Fatalf("first call: %d %s, want the second key's 403", got[0].status, got[0].body)
	}
	got = append(got, r.chat(r.keyA, body))
	if got[1].status != http.StatusOK || d.KeyCalls(poolCanaries[2]) != 1 {
		t.Fatalf("second call: %d %s, want the third key's answer", got[1].status, got[1].body)
	}
	d.RefuseKey(poolCanaries[2], http.StatusTooManyRequests)
	got = append(got, r.chat(r.keyA, body))
	received := d.Stats().Received
	got = append(got, r.chat(r.keyA, body))
	last := got[len(got)-1]
	if last.status != http.StatusTooManyRequests || last.errorCode() != "upstream_busy" ||
		!strings.Contains(string(last.body), "every API key of upstream pool is resting") || last.header.Get("Retry-After") == "" {
		t.Fatalf("all keys resting: %d %s (Retry-After %q)", last.status, last.body, last.header.Get("Retry-After"))
	}
	// The other doors say it in their own shapes.
	msgs := r.do("POST", "/v1/messages", r.keyA, "application/json", `{"model":"demo-pool","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`)
	gem := r.do("POST", "/v1beta/models/demo-pool:generateContent", r.keyA, "application/json", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	for _, g := range []struct {
		door  string
		reply reply
		shape string
	}{{"messages", msgs, `"overloaded_error"`}, {"gemini", gem, `"RESOURCE_EXHAUSTED"`}} {
		if g.reply.status != http.StatusTooManyRequests || !strings.Contains(string(g.reply.body), g.shape) ||
			!strings.Contains(string(g.reply.body), "is resting") || g.reply.header.Get("Retry-After") == "" {
			t.Errorf("%s door, all keys resting: %d %s", g.door, g.reply.status, g.reply.body)
		}
	}
	got = append(got, msgs, gem)
	if n := d.Stats().Received; n != received {
		t.Errorf("the provider got %d calls while every key rested", n-received)
	}
	for i, k := range poolCanaries {
		if d.KeyCalls(k) != 1+i/2 {
			t.Errorf("key %d sent %d times", i, d.KeyCalls(k))
		}
	}
	for _, g := range got {
		var hdr strings.Builder
		g.header.Write(&hdr)
		poolLeak(t, "the tenant's answer", string(g.body)+hdr.String())
		if id := g.runID(); id != "" {
			run := r.waitRun(id)
			poolLeak(t, "the run", run.Evidence+string(r.do("GET", "/v1/runs/"+string(id), r.keyA, "", "").body))
		}
	}
	if run := r.waitRun(last.runID()); !strings.HasPrefix(run.Evidence, "upstream_keys_resting: ") || run.HeldUnits != 0 {
		t.Errorf("the refused run: evidence %q held %d, want its hold released as keys resting", run.Evidence, run.HeldUnits)
	}
	state := r.admin("GET", "/admin/api/state", "").body
	poolLeak(t, "/admin/api/state", string(state))
	var shown struct {
		Keys map[string][]struct {
			Last4        string    `json:"last4"`
			RestingUntil time.Time `json:"resting_until"`
			Why          string    `json:"why"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(state, &shown); err != nil {
		t.Fatal(err)
	}
	pool := shown.Keys["pool"]
	if len(pool) != 3 || len(shown.Keys) != 1 {
		t.Fatalf("state keys %+v, want the pool's three", shown.Keys)
	}
	for i, why := range []string{"401", "403", "quota_exhausted"} {
		k := pool[i]
		if k.Last4 != poolCanaries[i][len(poolCanaries[i])-4:] || k.Why != why || time.Until(k.RestingUntil) < 50*time.Minute {
			t.Errorf("key %d shown as %+v, want its last 4, resting about an hour after %s", i, k, why)
		}
	}
	poolLeak(t, "audit.csv", string(r.admin("GET", "/admin/api/audit.csv", "").body))
	poolLeak(t, "the logs", r.logs.String())
}

// poolLeak fails t when s holds a pool key, or its first 20 characters.
func poolLeak(t *testing.T, where, s string) {
	t.Helper()
	for _, k := range poolCanaries {
		if strings.Contains(s, k[:20]) {
			t.Errorf("%s holds the pool key %s…:\n%s", where, k[:20], s)
		}
	}
}

// TestKeyPoolRestingFailsOver: a model whose first target has a pool of
// one key the provider refuses is served by the next target — the first
// call after the refusal within the same call, the next ones without
// calling the provider behind the resting pool at all.
func TestKeyPoolRestingFailsOver(t *testing.T) {
	t.Parallel()
	d, err := demo.Start(demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	r := newRig(t, rigOptions{extraUpstreams: fmt.Sprintf("  - {name: pool, base_url: %q, api_keys: [%s], priority: -1, models: [demo-chat]}",
		d.URL(), poolCanaries[0])})
	d.RefuseKey(poolCanaries[0], http.StatusUnauthorized)
	for i := range 3 {
		got := r.chat(r.keyA, chatBody("hello", false, 16))
		if got.status != http.StatusOK {
			t.Fatalf("call %d: %d %s, want the second target's answer", i, got.status, got.body)
		}
		poolLeak(t, "the answer", string(got.body))
	}
	if n := d.KeyCalls(poolCanaries[0]); n != 1 {
		t.Errorf("the resting key was sent %d times, want once", n)
	}
	if n := r.demo.Stats().Received; n != 3 {
		t.Errorf("the second target served %d calls, want 3", n)
	}
}
