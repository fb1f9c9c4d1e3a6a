package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// rawUpstream is a provider on a raw loopback socket, for the faults the
// demo cannot script at the TCP level: a reset before the response headers
// and a reset mid-stream. The last user message names the fault.
type rawUpstream struct {
	ln       net.Listener
	received atomic.Int64
	wg       sync.WaitGroup
	redirect string // Location of the raw:redirect fault
}

func startRawUpstream(t *testing.T) *rawUpstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &rawUpstream{ln: ln}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.wg.Add(1)
			go func() {
				defer u.wg.Done()
				u.serve(c.(*net.TCPConn))
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); u.wg.Wait() })
	return u
}

func (u *rawUpstream) url() string { return "http://" + u.ln.Addr().String() + "/v1" }

func (u *rawUpstream) serve(c *net.TCPConn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, _ := io.ReadAll(req.Body)
		u.received.Add(1)
		var chat struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		_ = json.Unmarshal(body, &chat)
		fault := ""
		if n := len(chat.Messages); n > 0 {
			fault = chat.Messages[n-1].Content
		}
		rst := func() { _ = c.SetLinger(0) } // Close then sends RST, not FIN
		switch fault {
		case "raw:rst-before-headers":
			rst()
			return
		case "raw:redirect": // a provider (or a rebound name) pointing the call elsewhere
			fmt.Fprintf(c, "HTTP/1.1 307 Temporary Redirect\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n", u.redirect)
			continue
		case "raw:rst-mid-stream":
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
			for i := range 2 {
				ev := fmt.Sprintf("data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"part%d \"}}]}\n\n", i)
				fmt.Fprintf(c, "%x\r\n%s\r\n", len(ev), ev)
			}
			rst()
			return
		default:
			b := `{"error":{"message":"raw upstream: unknown fault","type":"invalid_request_error","code":"x"}}`
			fmt.Fprintf(c, "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(b), b)
		}
	}
}

// faultCase is one row of the upstream fault matrix.
type faultCase struct {
	name    string
	model   string
	content string
	stream  bool
	// What the client sees.
	status        int
	code          string // error.code of the HTTP answer, or of the stream's terminal event
	done          bool   // the stream ends with [DONE]
	contentEvents int    // content events relayed before the end (stream), -1: don't check
	// What the ledger records.
	runStatus ledger.RunStatus
	usage     ledger.UsageStatus
	evidence  string // a part of the run's evidence, "" not checked
	calls     int    // provider calls; 0 means exactly 1
}

// TestReliabilityUpstreamFaults is T14's matrix and T33 (mid-stream cut
// after 1, 10 and 100 chunks), with T11 (a stream without usage) and T13's
// contradicting usage: every fault before any output releases the hold with
// the answer as evidence; every fault after the request may have reached
// the provider keeps it (usage unknown); a stream cut after its headers
// ends with an error event and never with [DONE]; the provider is called
// exactly once per request (no silent retry).
func TestReliabilityUpstreamFaults(t *testing.T) {
	t.Parallel()
	raw := startRawUpstream(t)
	// Where a redirect points: it must never be called, least of all with the key.
	thief := startRawUpstream(t)
	raw.redirect = thief.url() + "/chat/completions"
	gone := closedPort(t)
	r := newRig(t, rigOptions{upstreamTimeout: "1s", extraUpstreams: fmt.Sprintf(
		"  - {name: raw, kind: openai, base_url: %q, models: [raw-chat]}\n  - {name: gone, kind: openai, base_url: %q, models: [gone-chat]}",
		raw.url(), "http://"+gone+"/v1")})
	cut := func(n int) faultCase {
		return faultCase{name: fmt.Sprintf("CutAfter%d", n), model: "demo-chat",
			content: fmt.Sprintf("/demo kind=cut&after=%d&chunks=40&repeat=4", n), stream: true,
			status: 200, code: "upstream_interrupted", contentEvents: n,
			runStatus: ledger.RunInterrupted, usage: ledger.UsageUnknown, evidence: "the upstream"}
	}
	for _, tc := range []faultCase{
		cut(1), cut(10), cut(100),
		{name: "HTTP500", model: "demo-chat", content: "/demo kind=error&status=500", status: 502, code: "upstream_error", contentEvents: -1,
			runStatus: ledger.RunFailed, usage: ledger.UsageReleased, evidence: "upstream_status=500 body_sha256="},
		{name: "HTTP400Stream", model: "demo-chat", content: "/demo kind=error&status=400", stream: true, status: 400, code: "demo_error", contentEvents: -1,
			runStatus: ledger.RunFailed, usage: ledger.UsageReleased, evidence: "upstream_status=400 body_sha256="},
		// A 429/503 proves the provider did no work: the gateway may retry
		// (twice, honouring Retry-After) and releases with every refusal as
		// evidence.
		{name: "HTTP429Exhausted", model: "demo-chat", content: "/demo kind=error&status=429&retry_after=1", status: 429, code: "upstream_busy", contentEvents: -1,
			runStatus: ledger.RunFailed, usage: ledger.UsageReleased, evidence: "final upstream_status=429 body_sha256=", calls: 3},
		{name: "HTTP503ThenSuccess", model: "demo-chat", content: "/demo kind=error&status=503&retry_after=1&times=1", stream: true, status: 200, done: true, contentEvents: -1,
			runStatus: ledger.RunCompleted, usage: ledger.UsageTrusted, calls: 2},
		{name: "ConnectionRefused", model: "gone-chat", content: "hi", stream: true, status: 502, code: "upstream_error", contentEvents: -1,
			runStatus: ledger.RunFailed, usage: ledger.UsageReleased, evidence: "upstream_connect_error"},
		{name: "RSTBeforeHeaders", model: "raw-chat", content: "raw:rst-before-headers", stream: true, status: 502, code: "upstream_error", contentEvents: -1,
			runStatus: ledger.RunFailed, usage: ledger.UsageUnknown, evidence: "upstream_no_response"},
		{name: "RedirectNotFollowed", model: "raw-chat", content: "raw:redirect", stream: true, status: 502, code: "upstream_error", contentEvents: -1,
			runStatus: ledger.RunFailed, usage: ledger.UsageReleased, evidence: "upstream_status=307"},
		{name: "RSTMidStream", model: "raw-chat", content: "raw:rst-mid-stream", stream: true, status: 200, code: "upstream_interrupted", contentEvents: 2,
			runStatus: ledger.RunInterrupted, usage: ledger.UsageUnknown},
		{name: "StallAfterHeaders", model: "demo-chat", content: "/demo kind=stall", stream: true, status: 200, code: "upstream_timeout", contentEvents: 0,
			runStatus: ledger.RunInterrupted, usage: ledger.UsageUnknown},
		{name: "NoUsageChunk", model: "demo-chat", content: "/demo kind=no-usage", stream: true, status: 200, done: true, contentEvents: -1,
			runStatus: ledger.RunCompleted, usage: ledger.UsageUnknown},
		{name: "ContradictingUsage", model: "demo-chat", content: "/demo kind=false-usage", stream: true, status: 200, done: true, contentEvents: -1,
			runStatus: ledger.RunCompleted, usage: ledger.UsageUnknown},
		{name: "UsageShapedText", model: "demo-chat", content: "/demo kind=usage-text", stream: true, status: 200, done: true, contentEvents: -1,
			runStatus: ledger.RunCompleted, usage: ledger.UsageTrusted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			demoBefore, rawBefore := r.demo.Stats().Received, raw.received.Load()
			body := fmt.Sprintf(`{"model":%q,"stream":%v,"max_tokens":64,"messages":[{"role":"user","content":%q}]}`, tc.model, tc.stream, tc.content)
			got := r.chat(r.keyA, body)
			if got.status != tc.status {
				t.Fatalf("status %d, want %d: %s", got.status, tc.status, got.body)
			}
			id := got.runID()
			if id == "" {
				t.Fatal("no X-Run-Id on an admitted call")
			}
			if got.status == 200 && tc.stream {
				events := sseEvents(got.body)
				if len(events) == 0 {
					t.Fatal("empty stream")
				}
				last := events[len(events)-1]
				hasDone := last == "[DONE]"
				if hasDone != tc.done {
					t.Fatalf("stream ends with %q; want [DONE]: %v", last, tc.done)
				}
				if !tc.done {
					var e struct{ Error struct{ Code string } }
					if err := json.Unmarshal([]byte(last), &e); err != nil || e.Error.Code != tc.code {
						t.Fatalf("terminal event %q, want error code %s", last, tc.code)
					}
					if strings.Contains(string(got.body), "[DONE]") {
						t.Fatal("a cut stream carries [DONE]")
					}
				}
				if tc.contentEvents >= 0 {
					n := 0
					for _, ev := range events {
						if strings.Contains(ev, `"content":"`) && !strings.Contains(ev, `"content":""`) {
							n++
						}
					}
					if n != tc.contentEvents {
						t.Errorf("relayed %d content events, want %d", n, tc.contentEvents)
					}
				}
			} else if got.status != 200 {
				if got.errorCode() != tc.code {
					t.Fatalf("error %s, want %s", got.body, tc.code)
				}
				if tc.status == 429 && got.header.Get("Retry-After") != "1" {
					t.Errorf("Retry-After %q, want the upstream's 1", got.header.Get("Retry-After"))
				}
			}
			run := r.waitRun(id)
			if run.Status != tc.runStatus || run.Usage != tc.usage {
				t.Fatalf("run %s/%s (%s), want %s/%s", run.Status, run.Usage, run.Evidence, tc.runStatus, tc.usage)
			}
			switch run.Usage {
			case ledger.UsageReleased:
				if run.SpentUnits != 0 || run.HeldUnits != 0 || run.Evidence == "" {
					t.Errorf("released run %+v: want 0 spent, 0 held, evidence", run)
				}
			case ledger.UsageUnknown:
				if run.HeldUnits != run.ReserveUnits || run.SpentUnits != 0 {
					t.Errorf("unknown run %+v: want the whole reserve held", run)
				}
			case ledger.UsageTrusted:
				if run.HeldUnits != 0 || run.SpentUnits <= 0 {
					t.Errorf("settled run %+v", run)
				}
			}
			if !strings.Contains(run.Evidence, tc.evidence) {
				t.Errorf("evidence %q, want it to contain %q", run.Evidence, tc.evidence)
			}
			calls := int64(r.demo.Stats().Received-demoBefore) + raw.received.Load() - rawBefore
			want := int64(max(tc.calls, 1))
			if tc.model == "gone-chat" {
				want = 0 // nothing listens
			}
			if calls != want {
				t.Errorf("provider calls %d, want exactly %d (a call that may have run is never retried)", calls, want)
			}
		})
	}
	if n := thief.received.Load(); n != 0 {
		t.Errorf("a redirect target received %d calls (T29: redirects are not followed)", n)
	}
	// The stalled upstream's connection was closed when the run was cut.
	if err := r.demo.WaitDisconnects(ctxTimeout(t, 10*time.Second), 1); err != nil {
		t.Fatal(err)
	}

	// T32(a) for a non-streaming call: headers, then a body that never
	// comes, must be cut after the upstream timeout (1 s here) like a
	// stream, keeping the hold.
	t.Run("StallAfterHeadersNonStreaming", func(t *testing.T) {
		req, _ := http.NewRequest("POST", r.s.URL()+"/v1/chat/completions", strings.NewReader(chatBody("/demo kind=stall", false, 10)))
		req.Header.Set("Authorization", "Bearer "+r.keyA)
		client := &http.Client{Timeout: 3 * time.Second}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("no answer within 3 s (upstream_timeout 1s): %v", err)
		}
		defer resp.Body.Close()
		var e struct{ Error struct{ Code string } }
		json.NewDecoder(resp.Body).Decode(&e)
		if resp.StatusCode != http.StatusGatewayTimeout || e.Error.Code != "upstream_timeout" {
			t.Fatalf("status %d code %q, want 504 upstream_timeout", resp.StatusCode, e.Error.Code)
		}
		run := r.waitRun(ledger.RunID(resp.Header.Get("X-Run-Id")))
		if run.Usage != ledger.UsageUnknown || run.HeldUnits != run.ReserveUnits {
			t.Fatalf("run %+v, want the reserve held with usage unknown", run)
		}
	})
	r.verify()
}

// TestReliabilityClientDisconnect is T12 under the "cancel upstream"
// policy: a client that leaves before the headers or mid-stream ends its
// run cancelled with the hold kept (no release without evidence) and the
// provider's connection closed; a client that leaves after [DONE] settles.
func TestReliabilityClientDisconnect(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	for _, tc := range []struct {
		name             string
		content          string
		leaveAfterEvents int  // the client leaves after this many data events; -1: before the response headers
		readAll          bool // the client reads to the end, then leaves
		want             ledger.UsageStatus
		wantStatus       ledger.RunStatus
	}{
		{"BeforeHeaders", "/demo latency=30s", -1, false, ledger.UsageUnknown, ledger.RunCancelled},
		{"AfterFirstChunk", "/demo kind=slow&delay=100ms&repeat=20", 2, false, ledger.UsageUnknown, ledger.RunCancelled},
		{"MidStream", "/demo kind=slow&delay=50ms&repeat=20", 20, false, ledger.UsageUnknown, ledger.RunCancelled},
		{"AfterDone", "hello", 0, true, ledger.UsageTrusted, ledger.RunCompleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			disc := r.demo.Stats().Disconnects
			received := r.demo.Stats().Received
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", r.s.URL()+"/v1/chat/completions",
				strings.NewReader(chatBody(tc.content, true, 64)))
			req.Header.Set("Authorization", "Bearer "+r.keyA)
			type answer struct {
				resp *http.Response
				err  error
			}
			ans := make(chan answer, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				ans <- answer{resp, err}
			}()
			var id ledger.RunID
			if tc.leaveAfterEvents < 0 {
				// Leave while the gateway waits for the provider's headers:
				// the run id is only in the ledger then.
				if err := r.demo.WaitRequests(ctxTimeout(t, 10*time.Second), received+1); err != nil {
					t.Fatal(err)
				}
				runs, err := r.s.Store().Runs(context.Background(), ledger.RunFilter{TenantID: "a", HoldingOnly: true, Limit: 1})
				if err != nil || len(runs) == 0 {
					t.Fatalf("no run in flight: %v", err)
				}
				id = runs[0].ID
				cancel()
				if a := <-ans; a.err == nil {
					a.resp.Body.Close()
				}
			} else {
				a := <-ans
				if a.err != nil {
					t.Fatal(a.err)
				}
				id = ledger.RunID(a.resp.Header.Get("X-Run-Id"))
				br := bufio.NewReader(a.resp.Body)
				if tc.readAll {
					io.Copy(io.Discard, br)
				} else {
					for n := 0; n < tc.leaveAfterEvents; {
						line, err := br.ReadString('\n')
						if err != nil {
							t.Fatalf("stream ended early: %v", err)
						}
						if strings.HasPrefix(line, "data: ") {
							n++
						}
					}
				}
				cancel()
				a.resp.Body.Close()
			}
			run := r.waitRun(id)
			if run.Usage != tc.want || run.Status != tc.wantStatus {
				t.Fatalf("run %s/%s (%s), want %s/%s", run.Status, run.Usage, run.Evidence, tc.wantStatus, tc.want)
			}
			if tc.want == ledger.UsageUnknown {
				if run.HeldUnits != run.ReserveUnits {
					t.Errorf("hold %d of reserve %d; a client's leaving is no evidence", run.HeldUnits, run.ReserveUnits)
				}
				if err := r.demo.WaitDisconnects(ctxTimeout(t, 5*time.Second), disc+1); err != nil {
					t.Errorf("the provider's connection stayed open: %v", err)
				}
			}
		})
	}
	r.verify()
}

// TestReliabilitySlowClientCut is T34's cut: a client that stops reading
// (a 4 KiB receive buffer, never read) while the provider streams ~16 MB is
// cut after the 1 s write timeout: the run ends cancelled with its hold
// kept, the provider's connection is closed, and another tenant is served
// meanwhile.
func TestReliabilitySlowClientCut(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{writeTimeout: "1s"})
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", r.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := chatBody("/demo text="+strings.Repeat("x", 2000)+"&repeat=8000", true, 1000)
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		r.addr(), r.keyA, len(body), body)
	// Read the status line and the run id, then stop reading.
	br := bufio.NewReaderSize(c, 4096)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := ledger.RunID(resp.Header.Get("X-Run-Id"))
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("status %d, run id %q", resp.StatusCode, id)
	}
	start := time.Now()
	other := r.chat(r.keyB, chatBody("hi", false, 8))
	if other.status != 200 || time.Since(start) > 2*time.Second {
		t.Errorf("another tenant during the stall: %d after %v", other.status, time.Since(start))
	}
	run := r.waitRun(id)
	if run.Status != ledger.RunCancelled || run.Usage != ledger.UsageUnknown || run.HeldUnits != run.ReserveUnits {
		t.Fatalf("run %+v, want cancelled with the reserve held", run)
	}
	if err := r.demo.WaitDisconnects(ctxTimeout(t, 10*time.Second), 1); err != nil {
		t.Fatalf("the provider kept streaming to a cut run: %v", err)
	}
	if st := r.demo.Stats(); len(st.Requests) > 0 && st.Requests[0].BytesWritten >= 16_000_000 {
		t.Errorf("the provider wrote its whole answer (%d bytes): backpressure did not reach it", st.Requests[0].BytesWritten)
	}
	t.Run("EvidenceNamesWriteTimeout", func(t *testing.T) {
		// A wrapper whose Flush() drops the error (promhttp's did) would
		// make this look like a client that went away.
		if !strings.Contains(run.Evidence, "stopped reading") {
			t.Fatalf("evidence %q does not name the write timeout", run.Evidence)
		}
	})
}
