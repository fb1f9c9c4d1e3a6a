package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// Seed 000 §15.2: "问题" is 6 bytes in, "你好 AI" 9 bytes out: settles 15.
func TestSeed000TrustedByteUsageSettles15(t *testing.T) {
	tests := []struct {
		name         string
		body         string
		stream       bool
		relayedUsage bool
	}{
		{name: "StreamWithoutClientUsage", stream: true,
			body: `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"问题"}]}`},
		{name: "StreamWithClientUsage", stream: true, relayedUsage: true,
			body: `{"model":"demo-chat","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"问题"}]}`},
		{name: "NonStreaming",
			body: `{"model":"demo-chat","messages":[{"role":"user","content":"问题"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, envOpts{plan: demo.Plan{Text: "你好 AI"}})
			resp := e.chat(ctxT(t), "key-a", tt.body, "")
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			id := runID(t, resp)
			if tt.stream {
				s := readSSE(resp.Body)
				if s.err != nil || !s.done() || s.text() != "你好 AI" {
					t.Fatalf("stream err=%v done=%v text=%q", s.err, s.done(), s.text())
				}
				gotUsage := strings.Contains(strings.Join(s.data, "\n"), `"prompt_tokens"`)
				if gotUsage != tt.relayedUsage {
					t.Errorf("usage chunk relayed = %v, want %v (only when the client asked)", gotUsage, tt.relayedUsage)
				}
			} else {
				c := decode[struct {
					Choices []struct{ Message struct{ Content string } } `json:"choices"`
				}](t, resp.Body)
				if c.Choices[0].Message.Content != "你好 AI" {
					t.Errorf("content %q", c.Choices[0].Message.Content)
				}
			}
			run := e.waitEnd(id)
			if run.Status != ledger.RunCompleted || run.Usage != ledger.UsageTrusted || run.SpentUnits != 15 || run.HeldUnits != 0 {
				t.Errorf("run %+v, want completed/trusted spent 15 held 0", run)
			}
			if b := e.balance("a"); b.SpentUnits != 15 || b.HeldUnits != 0 || b.AvailableUnits != 95 || b.Active != 0 {
				t.Errorf("balance %+v, want spent 15, available 95", b)
			}
			// The upstream was always asked for usage: it is the evidence.
			if r := e.demo.Stats().Requests; len(r) != 1 || (tt.stream && !r[0].IncludeUsage) {
				t.Errorf("upstream requests %d, include_usage %v", len(r), tt.stream && r[0].IncludeUsage)
			}
		})
	}
}

// Seed 000 §15.3: cap 20 + "hi" reserves 22; the upstream sends "part" and
// goes away: 22 held, 88 available, 0 active; a reconciliation at 6 leaves 104.
func TestSeed000CutStreamHolds22(t *testing.T) {
	e := newEnv(t, envOpts{})
	body := `{"model":"demo-chat","stream":true,"max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`
	resp := e.chat(ctxT(t), "key-a", body, demo.Plan{Kind: demo.KindCut, Parts: []string{"part", "more"}, CutAfter: 1}.Encode())
	defer resp.Body.Close()
	id := runID(t, resp)
	s := readSSE(resp.Body)
	if s.text() != "part" {
		t.Errorf("relayed text %q, want part", s.text())
	}
	if s.done() {
		t.Error("a cut stream ended with [DONE]: the cut was disguised as a normal end")
	}
	if s.errorCode() != ledger.CodeUpstreamInterrupt {
		t.Errorf("last event %q, want an error event with code upstream_interrupted", s.data[len(s.data)-1])
	}
	run := e.waitEnd(id)
	if run.Status != ledger.RunInterrupted || run.Usage != ledger.UsageUnknown || run.ReserveUnits != 22 || run.HeldUnits != 22 {
		t.Errorf("run %+v, want interrupted/unknown, reserve 22 held", run)
	}

	bresp := e.do(ctxT(t), http.MethodGet, "/v1/balance", "key-a", "", nil)
	defer bresp.Body.Close()
	var got map[string]any
	if err := json.NewDecoder(bresp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"budget_units": 110, "spent_units": 0, "held_units": 22, "available_units": 88, "active": 0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("balance JSON %s = %v, want %v (body %v)", k, got[k], v, got)
		}
	}

	// Only evidence releases it: "hi" (2) + "part" (4) = 6.
	if _, err := e.store.Reconcile(context.Background(), id, 6, "demo plan: 2 bytes in + part out", ledger.ActorAdmin); err != nil {
		t.Fatal(err)
	}
	if b := e.balance("a"); b.BudgetUnits != 110 || b.SpentUnits != 6 || b.HeldUnits != 0 || b.AvailableUnits != 104 || b.Active != 0 {
		t.Errorf("after reconciliation %+v, want 110/6/0/104/0", b)
	}
}

// Seed 000 §15.1: max_concurrent 1; after the first token of one call is
// read, a second call gets 429 and the upstream received only the first.
func TestSeed000ConcurrencyLimit429(t *testing.T) {
	e := newEnv(t, envOpts{plan: demo.Plan{Parts: []string{"tok "}, Repeat: 10000}})
	body := `{"model":"demo-chat","stream":true,"max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	first := e.chat(ctx, "key-a", body, demo.Plan{Parts: []string{"tok "}, Repeat: 10000, ChunkDelay: 5 * time.Millisecond}.Encode())
	defer first.Body.Close()
	id := runID(t, first)
	if tok := readFirstContent(t, first.Body); tok != "tok " {
		t.Fatalf("first token %q", tok)
	}
	second := e.chat(ctxT(t), "key-a", body, "")
	b, _ := io.ReadAll(second.Body)
	second.Body.Close()
	if second.StatusCode != http.StatusTooManyRequests || second.Header.Get("Retry-After") == "" ||
		!strings.Contains(string(b), `"code":"concurrency_limit"`) {
		t.Errorf("second call: %d Retry-After=%q %s", second.StatusCode, second.Header.Get("Retry-After"), b)
	}
	if second.Header.Get("X-Run-Id") != "" {
		t.Error("a refused call carries X-Run-Id")
	}
	if n := len(e.demo.Stats().Requests); n != 1 {
		t.Errorf("upstream received %d requests, want only the first", n)
	}
	cancel() // the client leaves: the upstream is closed, the hold kept
	if err := e.demo.WaitDisconnects(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	if run := e.waitEnd(id); run.Status != ledger.RunCancelled || run.HeldUnits != 22 {
		t.Errorf("run after client disconnect %+v, want cancelled, 22 held", run)
	}
}

// readFirstContent reads SSE lines until the first non-empty delta.content.
func readFirstContent(t *testing.T, r io.Reader) string {
	t.Helper()
	buf := make([]byte, 1)
	var line []byte
	for {
		if _, err := r.Read(buf); err != nil {
			t.Fatalf("stream ended before any content: %v", err)
		}
		if buf[0] != '\n' {
			line = append(line, buf[0])
			continue
		}
		if d, ok := strings.CutPrefix(string(line), "data: "); ok {
			var c struct {
				Choices []struct {
					Delta struct{ Content string } `json:"delta"`
				} `json:"choices"`
			}
			if json.Unmarshal([]byte(d), &c) == nil && len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
				return c.Choices[0].Delta.Content
			}
		}
		line = line[:0]
	}
}

// Seed 000 §15.4: cancel by another tenant is 404 and the run goes on; by
// the owner 202, the upstream observes the disconnect, and the run is
// cancelled with usage unknown and its 1002 units held.
func TestSeed000CancelIsTenantScopedAndReachesUpstream(t *testing.T) {
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 5000, 2), tenant("b", 5000, 2)},
		plan: demo.Plan{Kind: demo.KindStall}})
	body := `{"model":"demo-chat","stream":true,"max_tokens":1000,"messages":[{"role":"user","content":"hi"}]}`
	resp := e.chat(ctxT(t), "key-a", body, "")
	defer resp.Body.Close()
	id := runID(t, resp)

	other := e.do(ctxT(t), http.MethodDelete, "/v1/runs/"+string(id), "key-b", "", nil)
	ob, _ := io.ReadAll(other.Body)
	other.Body.Close()
	if other.StatusCode != http.StatusNotFound || !strings.Contains(string(ob), `"code":"run_not_found"`) {
		t.Errorf("cancel by another tenant: %d %s, want 404 run_not_found", other.StatusCode, ob)
	}
	if peek := e.do(ctxT(t), http.MethodGet, "/v1/runs/"+string(id), "key-b", "", nil); peek.StatusCode != http.StatusNotFound {
		t.Errorf("another tenant reads the run: %d", peek.StatusCode)
	}
	run, err := e.store.Run(context.Background(), id)
	if err != nil || run.Status != ledger.RunActive {
		t.Fatalf("after a foreign cancel the run is %+v (%v), want still active", run, err)
	}
	if st := e.demo.Stats(); st.Disconnects != 0 {
		t.Fatalf("a foreign cancel reached the upstream: %d disconnects", st.Disconnects)
	}

	own := e.do(ctxT(t), http.MethodDelete, "/v1/runs/"+string(id), "key-a", "", nil)
	own.Body.Close()
	if own.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel by the owner: %d, want 202", own.StatusCode)
	}
	if err := e.demo.WaitDisconnects(ctxT(t), 1); err != nil {
		t.Fatalf("upstream did not observe the disconnect: %v", err)
	}
	s := readSSE(resp.Body)
	if s.done() {
		t.Error("a cancelled stream ended with [DONE]")
	}
	run = e.waitEnd(id)
	if run.Status != ledger.RunCancelled || run.Usage != ledger.UsageUnknown || run.ReserveUnits != 1002 || run.HeldUnits != 1002 {
		t.Errorf("run %+v, want cancelled/unknown with 1002 held", run)
	}
	if b := e.balance("a"); b.HeldUnits != 1002 || b.Active != 0 {
		t.Errorf("balance %+v, want 1002 held, 0 active", b)
	}
	again := e.do(ctxT(t), http.MethodDelete, "/v1/runs/"+string(id), "key-a", "", nil)
	again.Body.Close()
	if again.StatusCode != http.StatusConflict {
		t.Errorf("cancel of an ended run: %d, want 409", again.StatusCode)
	}
	get := e.do(ctxT(t), http.MethodGet, "/v1/runs/"+string(id), "key-a", "", nil)
	got := decode[ledger.Run](t, get.Body)
	get.Body.Close()
	if got.ID != id || got.Status != ledger.RunCancelled || got.HeldUnits != 1002 {
		t.Errorf("GET own run %+v", got)
	}
}

// Seed 000 §15.2: missing usage and false usage each keep the hold.
func TestSeed000MissingOrFalseUsageKeepsHold(t *testing.T) {
	for _, kind := range []demo.Kind{demo.KindNoUsage, demo.KindFalseUsage} {
		for _, stream := range []bool{true, false} {
			name := string(kind) + map[bool]string{true: "/stream", false: "/complete"}[stream]
			t.Run(name, func(t *testing.T) {
				e := newEnv(t, envOpts{plan: demo.Plan{Kind: kind, Text: "你好 AI"}})
				body := `{"model":"demo-chat","stream":` + map[bool]string{true: "true", false: "false"}[stream] +
					`,"max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`
				resp := e.chat(ctxT(t), "key-a", body, "")
				id := runID(t, resp)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				run := e.waitEnd(id)
				if run.Usage != ledger.UsageUnknown || run.HeldUnits != 22 || run.SpentUnits != 0 || run.Status != ledger.RunCompleted {
					t.Errorf("run %+v, want completed with usage unknown and 22 held", run)
				}
				if b := e.balance("a"); b.HeldUnits != 22 || b.AvailableUnits != 88 {
					t.Errorf("balance %+v", b)
				}
			})
		}
	}
}

// Seed 000 §15.2: output text shaped like usage JSON is data: counted by bytes.
func TestSeed000UsageShapedTextIsCountedAsText(t *testing.T) {
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 1000, 1)}, plan: demo.Plan{Kind: demo.KindUsageText}})
	resp := e.chat(ctxT(t), "key-a", `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "")
	defer resp.Body.Close()
	id := runID(t, resp)
	s := readSSE(resp.Body)
	if s.text() != demo.UsageShapedText {
		t.Fatalf("relayed %q", s.text())
	}
	run := e.waitEnd(id)
	want := ledger.Units(2 + len(demo.UsageShapedText))
	if run.Usage != ledger.UsageTrusted || run.SpentUnits != want {
		t.Errorf("run %+v, want trusted spend %d (2 in + %d bytes of text)", run, want, len(demo.UsageShapedText))
	}
}

// Trusted usage above the reserve charges the tenant the reserve (the ledger
// never spends more than it holds); the rest is the run's overrun, which a
// guarded model's quota day counts, and the evidence names it.
func TestUsageAboveReserveSettlesAtReserve(t *testing.T) {
	e := newEnv(t, envOpts{plan: demo.Plan{Text: "你好 AI"}})
	resp := e.chat(ctxT(t), "key-a", `{"model":"demo-chat","stream":true,"max_tokens":2,"messages":[{"role":"user","content":"hi"}]}`, "")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	run := e.waitEnd(runID(t, resp))
	if run.Usage != ledger.UsageTrusted || run.ReserveUnits != 4 || run.SpentUnits != 4 || run.OverrunUnits != 7 ||
		!strings.Contains(run.Evidence, "above the reserve") {
		t.Errorf("run %+v, want trusted, settled at the reserve 4 with an overrun of 2+9−4 = 7, evidence naming it", run)
	}
}

// heldUpstream holds every Send until open is closed, so that calls admitted
// together are still in flight while the others are decided.
type heldUpstream struct {
	gateway.Upstream
	open <-chan struct{}
}

func (u heldUpstream) Send(ctx context.Context, body []byte, hdr http.Header) (*upstream.Response, error) {
	select {
	case <-u.open:
	case <-ctx.Done():
		return nil, &upstream.SendError{Upstream: u.Name(), Err: ctx.Err()}
	}
	return u.Upstream.Send(ctx, body, hdr)
}

// Seed 000 §15.1: six clients at once cannot overspend. Each reserves 22 of
// 110; while the admitted calls are held before the upstream, exactly five
// are admitted and the sixth is refused, nothing goes negative, and the
// ledger verifies once they settle.
func TestSeed000ParallelReservationCannotOverspend(t *testing.T) {
	open := make(chan struct{})
	e := newEnv(t, envOpts{tenants: []ledger.Tenant{tenant("a", 110, 10)},
		plan: demo.Plan{Parts: []string{"a", "b", "c"}},
		modify: func(o *gateway.Options) {
			o.Upstreams = []gateway.Upstream{heldUpstream{Upstream: o.Upstreams[0], open: open}}
		}})
	type result struct {
		status int
		id     ledger.RunID
	}
	results := make(chan result, 6)
	for range 6 {
		go func() {
			resp := e.chat(ctxT(t), "key-a", hiBody, "")
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			results <- result{resp.StatusCode, ledger.RunID(resp.Header.Get("X-Run-Id"))}
		}()
	}
	// Every call is decided (admitted, or refused) before any can settle.
	e.log.until(t, "6 admissions or refusals", func(evs []event) bool {
		return len(kinds(evs, evAdmit))+len(kinds(evs, evReject)) == 6
	})
	if b := e.balance("a"); b.HeldUnits != 110 || b.AvailableUnits != 0 || b.Active != 5 {
		t.Errorf("with five held in flight: balance %+v, want 110 held, 0 available, 5 active", b)
	}
	close(open)
	admitted := 0
	for range 6 {
		r := <-results
		switch r.status {
		case 200:
			admitted++
			e.waitEnd(r.id)
		case http.StatusPaymentRequired:
		default:
			t.Errorf("status %d, want 200 or 402", r.status)
		}
	}
	if admitted != 5 {
		t.Errorf("%d calls admitted, want 5 (5 × 22 = 110)", admitted)
	}
	b := e.balance("a")
	if err := b.Check(); err != nil || b.AvailableUnits < 0 || b.SpentUnits != ledger.Units(admitted*5) {
		t.Errorf("balance %+v (%v), want spent %d (each 2 in + 3 out)", b, err, admitted*5)
	}
	if diffs, err := e.store.Verify(context.Background()); err != nil || len(diffs) != 0 {
		t.Errorf("verify: %v %v", diffs, err)
	}
}
