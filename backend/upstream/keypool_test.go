package upstream_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// fakeClock is the pool's injectable clock: tests move it, never sleep.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

var poolKeys = []string{"sk-pool-aaaa-1111", "sk-pool-bbbb-2222", "sk-pool-cccc-3333"}

func newPool(t *testing.T, d *demo.Server, keys []string) (*upstream.Client, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)}
	c := newClient(t, upstream.Options{Name: "pool", BaseURL: d.URL(), APIKeys: keys,
		KeyCooldown: 10 * time.Minute, Now: clock.Now})
	return c, clock
}

// call sends one chat call and returns its status, the body read whole.
func call(t *testing.T, c *upstream.Client) (int, string, error) {
	t.Helper()
	resp, err := c.Send(deadline(t), []byte(body), nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), nil
}

func keyCalls(d *demo.Server) []int {
	out := make([]int, len(poolKeys))
	for i, k := range poolKeys {
		out[i] = d.KeyCalls(k)
	}
	return out
}

func TestPoolRestsARefusedKeyAndTriesItAfterTheCooldown(t *testing.T) {
	d := startDemo(t, demo.Options{Plan: demo.Plan{Text: "ok"}})
	d.RefuseKey(poolKeys[0], http.StatusUnauthorized)
	c, clock := newPool(t, d, poolKeys)
	for i := range 5 {
		if status, b, err := call(t, c); err != nil || status != 200 {
			t.Fatalf("call %d: status %d err %v body %s", i, status, err, b)
		}
	}
	// The first call met the refused key and went on to the next within
	// itself; the refused key is never sent again while it rests.
	if got := keyCalls(d); got[0] != 1 || got[1]+got[2] != 5 || got[1] < 2 || got[2] < 2 {
		t.Fatalf("calls per key %v, want the first once and the other two taking turns", got)
	}
	keys := c.Keys()
	if keys[0].Last4 != "1111" || keys[0].Why != "401" || !keys[0].RestingUntil.Equal(clock.Now().Add(10*time.Minute)) {
		t.Errorf("resting key shown as %+v", keys[0])
	}
	if !keys[1].RestingUntil.IsZero() || keys[2].Last4 != "3333" {
		t.Errorf("keys in use shown as %+v", keys[1:])
	}

	clock.Advance(10 * time.Minute)
	d.RefuseKey(poolKeys[0], 0)
	before := keyCalls(d)[0]
	for range 3 {
		if status, b, err := call(t, c); err != nil || status != 200 {
			t.Fatalf("after the cooldown: status %d err %v body %s", status, err, b)
		}
	}
	if got := keyCalls(d)[0] - before; got != 1 {
		t.Errorf("after the cooldown the rested key took %d of 3 calls, want 1", got)
	}
	if !c.Keys()[0].RestingUntil.IsZero() {
		t.Errorf("key still shown resting: %+v", c.Keys()[0])
	}
}

func TestPoolAllRestingRefuses(t *testing.T) {
	d := startDemo(t, demo.Options{})
	keys := poolKeys[:2]
	d.RefuseKey(keys[0], http.StatusForbidden)
	d.RefuseKey(keys[1], http.StatusTooManyRequests) // insufficient_quota
	c, clock := newPool(t, d, keys)
	// One call tries a key and the next: the second refusal is the answer.
	status, b, err := call(t, c)
	if err != nil || status != http.StatusTooManyRequests || !strings.Contains(b, "insufficient_quota") {
		t.Fatalf("status %d err %v body %s, want the second key's 429", status, err, b)
	}
	received := d.Stats().Received
	clock.Advance(4 * time.Minute)
	_, _, err = call(t, c)
	var se *upstream.SendError
	var kr *upstream.KeysRestingError
	if !errors.As(err, &se) || se.Sent || !errors.As(err, &kr) {
		t.Fatalf("err %v, want a SendError not sent wrapping KeysRestingError", err)
	}
	if kr.RetryAfter() != 6*time.Minute {
		t.Errorf("retry after %s, want the first key's remaining 6m", kr.RetryAfter())
	}
	if !strings.HasPrefix(se.Evidence(), "upstream_keys_resting: ") || strings.Contains(err.Error(), "sk-pool") {
		t.Errorf("evidence %q, error %q", se.Evidence(), err)
	}
	if n := d.Stats().Received; n != received {
		t.Errorf("the demo received %d more calls while every key rested", n-received)
	}
	if got := c.Keys(); got[0].Why != "403" || got[1].Why != "quota_exhausted" {
		t.Errorf("keys %+v, want 403 and quota_exhausted", got)
	}
}

func TestPoolKeepsABusyKey(t *testing.T) {
	d := startDemo(t, demo.Options{})
	c, _ := newPool(t, d, poolKeys)
	resp, err := c.Send(deadline(t), []byte(body), http.Header{demo.PlanHeader: {"kind=error&status=429"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || len(b) == 0 {
		t.Fatalf("status %d body %q, want the demo's 429 whole", resp.StatusCode, b)
	}
	if got := keyCalls(d); got[0]+got[1]+got[2] != 1 {
		t.Errorf("calls per key %v: a rate limit is not the key's fault and is not sent again here", got)
	}
	for _, k := range c.Keys() {
		if !k.RestingUntil.IsZero() {
			t.Errorf("key %s rests after a rate limit", k.Last4)
		}
	}
}

func TestNewRefusesBadPools(t *testing.T) {
	for name, opts := range map[string]upstream.Options{
		"both":  {APIKey: "sk-one", APIKeys: []string{"sk-two"}},
		"empty": {APIKeys: []string{"sk-two", ""}},
	} {
		opts.Name, opts.BaseURL = "x", "http://127.0.0.1:1/v1"
		if _, err := upstream.New(opts); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Concurrent calls share the turn: 90 calls over three keys send each
// exactly 30, however they interleave.
func TestPoolTurnsUnderConcurrency(t *testing.T) {
	d := startDemo(t, demo.Options{})
	c, _ := newPool(t, d, poolKeys)
	var wg sync.WaitGroup
	errs := make(chan error, 90)
	for range 90 {
		wg.Go(func() {
			resp, err := c.Send(deadline(t), []byte(body), nil)
			if err != nil {
				errs <- err
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := keyCalls(d); got[0] != 30 || got[1] != 30 || got[2] != 30 {
		t.Errorf("calls per key %v, want 30 each", got)
	}
}

// The demo's scripted error rests the key a call meets, as a provider's
// would: `kind=error&status=401&times=1` is answered once, and the same
// call is served by the next key.
func TestPoolRestsAKeyOnAScriptedRefusal(t *testing.T) {
	d := startDemo(t, demo.Options{})
	c, _ := newPool(t, d, poolKeys)
	resp, err := c.Send(deadline(t), []byte(body), http.Header{demo.PlanHeader: {"kind=error&status=401&times=1"}})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || c.Keys()[0].Why != "401" || !c.Keys()[1].RestingUntil.IsZero() {
		t.Errorf("status %d keys %+v, want 200 from the second key and the first resting", resp.StatusCode, c.Keys())
	}
}
