package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// streamText reads an SSE chat stream: the content it carried, whether it
// ended in [DONE], and calls at(n) after the n-th data event.
func streamText(t *testing.T, resp *http.Response, at func(n int, data string) bool) (text string, done bool) {
	t.Helper()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var b strings.Builder
	n := 0
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if d == "[DONE]" {
			done = true
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(d), &c) == nil {
			for _, ch := range c.Choices {
				b.WriteString(ch.Delta.Content)
			}
		}
		n++
		if at != nil && !at(n, d) {
			return b.String(), done
		}
	}
	return b.String(), done
}

func (r *rig) stream(ctx context.Context, body string) *http.Response {
	r.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", r.s.URL()+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+r.keyA)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		r.t.Fatalf("stream: %d", resp.StatusCode)
	}
	return resp
}

// TestReliabilityCancelRacingDone, run 300 times: the
// owner's cancel lands at a random point of a stream whose last chunks,
// usage and [DONE] the upstream writes in one burst. Whatever the timing,
// a client that got [DONE] got the whole answer before it, and a run
// charged on trusted usage is one whose whole answer the client received;
// every other run ends cancelled with its hold.
func TestReliabilityCancelRacingDone(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	body := chatBody("/demo chunks=4&repeat=30", true, 4096)
	events := 0
	full, done := streamText(t, r.stream(context.Background(), body), func(n int, _ string) bool { events = n; return true })
	if !done || len(full) < 2000 {
		t.Fatalf("baseline: done=%v, %d bytes", done, len(full))
	}
	const races = 300
	var mu sync.Mutex
	tally := map[string]int{}
	for i := range races {
		resp := r.stream(context.Background(), body)
		id := ledger.RunID(resp.Header.Get("X-Run-Id"))
		cancelAt := events/2 + rand.IntN(events/2+2) // the second half, up to the very end
		var cancelled sync.WaitGroup
		text, done := streamText(t, resp, func(n int, _ string) bool {
			if n == cancelAt {
				cancelled.Add(1)
				go func() { defer cancelled.Done(); r.do("DELETE", "/v1/runs/"+string(id), r.keyA, "", "") }()
			}
			return true
		})
		resp.Body.Close()
		cancelled.Wait()
		run := r.waitRun(id)
		whole := text == full
		trusted := run.Usage == ledger.UsageTrusted
		if done && !whole {
			t.Fatalf("race %d: [DONE] after %d of %d bytes (run %s %s/%s)", i, len(text), len(full), id, run.Status, run.Usage)
		}
		if trusted && !whole {
			t.Fatalf("race %d: charged %d on trusted usage for %d of %d bytes", i, run.SpentUnits, len(text), len(full))
		}
		if !trusted && (run.Status != ledger.RunCancelled || run.HeldUnits != run.ReserveUnits) {
			t.Fatalf("race %d: run %+v, want cancelled with its hold", i, run)
		}
		mu.Lock()
		switch {
		case trusted && done:
			tally["whole, [DONE], settled"]++
		case trusted:
			tally["whole, settled, no [DONE]"]++
		default:
			tally["cancelled, held"]++
		}
		mu.Unlock()
	}
	t.Logf("%d races: %v", races, tally)
	r.verify()
}

// TestReliabilityFinishThenLeave: a client that closes
// the stream as soon as it has the finish_reason, while the usage comes
// 300 ms later, no longer leaves a full hold for a complete answer — the
// upstream is read on for the grace and the run settles on trusted usage.
func TestReliabilityFinishThenLeave(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := r.stream(ctx, chatBody("/demo usage_delay=300ms", true, 64))
	id := ledger.RunID(resp.Header.Get("X-Run-Id"))
	text, _ := streamText(t, resp, func(_ int, data string) bool {
		return !strings.Contains(data, `"finish_reason":"stop"`)
	})
	cancel() // the client leaves at finish_reason
	resp.Body.Close()
	if text == "" {
		t.Fatal("no answer before finish_reason")
	}
	run := r.waitRun(id)
	if run.Status != ledger.RunCompleted || run.Usage != ledger.UsageTrusted || run.HeldUnits != 0 {
		t.Fatalf("run after the client left at finish_reason: %+v; want completed on trusted usage", run)
	}
	// Before the finish reason, leaving still cancels at once, hold kept.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	resp = r.stream(ctx2, chatBody("/demo kind=slow&delay=50ms", true, 64))
	id = ledger.RunID(resp.Header.Get("X-Run-Id"))
	streamText(t, resp, func(n int, _ string) bool { return n < 2 })
	cancel2()
	resp.Body.Close()
	if run := r.waitRun(id); run.Status != ledger.RunCancelled || run.HeldUnits != run.ReserveUnits {
		t.Fatalf("run after the client left mid-answer: %+v; want cancelled with its hold", run)
	}
	r.verify()
}

// newNativeRig is a rig with a second upstream, `native`, serving
// demo-native from the same demo and speaking every protocol, so that the
// Responses and Messages doors relay its answers natively (the rig's own
// `up`, serving demo-chat, speaks chat only: those doors translate).
func newNativeRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	if o.demo == nil {
		d, err := demo.Start(demo.Options{APIKey: canaryUpstream, Models: []string{"demo-chat", "demo-native"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		o.demo = d
	}
	o.extraUpstreams = fmt.Sprintf("  - {name: native, kind: openai, base_url: %q, api_key: %q, models: [demo-native], protocols: [chat, responses, messages]}",
		o.demo.URL(), canaryUpstream)
	return newRig(t, o)
}

// TestReliabilityFinishThenLeaveDoors is the same for the other doors: the
// Responses door marks its finish (the output_item.done that leaves no item
// open, natively; translated, the items close on the chat chunk with the
// finish reason), so a client that leaves there while response.completed
// and its usage come 400 ms later settles on that usage, as at the chat
// door; so does the Messages door natively, where message_delta is the
// finish and message_stop comes 400 ms later; and with `finish_grace: off`
// a client that leaves at the finish cancels the upstream at once and its
// run keeps its hold, at every door.
func TestReliabilityFinishThenLeaveDoors(t *testing.T) {
	t.Parallel()
	const directive = "/demo usage_delay=400ms"
	chat := func(model string) (string, string) {
		return "/v1/chat/completions", strings.Replace(chatBody(directive, true, 64), `"demo-chat"`, `"`+model+`"`, 1)
	}
	resp := func(model string) (string, string) {
		return "/v1/responses", fmt.Sprintf(`{"model":%q,"stream":true,"max_output_tokens":64,"input":%q}`, model, directive)
	}
	msgs := func(model string) (string, string) {
		return "/v1/messages", fmt.Sprintf(`{"model":%q,"stream":true,"max_tokens":64,"messages":[{"role":"user","content":%q}]}`, model, directive)
	}
	isChatFinish := func(data string) bool { return strings.Contains(data, `"finish_reason":"stop"`) }
	isMessageDelta := func(data string) bool { return strings.Contains(data, `"type":"message_delta"`) }
	isItemDone := func(data string) bool { return strings.Contains(data, `"type":"response.output_item.done"`) }
	for _, grace := range []string{"", "off"} {
		r := newNativeRig(t, rigOptions{finishGrace: grace})
		for _, tc := range []struct {
			name   string
			req    func(model string) (string, string)
			model  string
			finish func(data string) bool
		}{
			{"Chat", chat, "demo-chat", isChatFinish},
			{"ResponsesNative", resp, "demo-native", isItemDone},
			{"ResponsesTranslated", resp, "demo-chat", isItemDone},
			{"MessagesNative", msgs, "demo-native", isMessageDelta},
		} {
			name := tc.name + "/GraceDefault"
			if grace != "" {
				name = tc.name + "/Grace_" + grace
			}
			t.Run(name, func(t *testing.T) {
				path, body := tc.req(tc.model)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "POST", r.s.URL()+path, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+r.keyA)
				req.Header.Set("Content-Type", "application/json")
				res, err := http.DefaultClient.Do(req)
				if err != nil || res.StatusCode != 200 {
					t.Fatalf("%s: %v %v", path, res, err)
				}
				id := ledger.RunID(res.Header.Get("X-Run-Id"))
				sc := bufio.NewScanner(res.Body)
				sawFinish, sawUsage := false, false
				for sc.Scan() {
					data, ok := strings.CutPrefix(sc.Text(), "data: ")
					if !ok {
						continue
					}
					sawUsage = sawUsage || strings.Contains(data, `"response.completed"`) || strings.Contains(data, `"message_stop"`) || data == "[DONE]"
					if tc.finish(data) {
						sawFinish = true
						break // the client leaves at the finish
					}
				}
				cancel()
				res.Body.Close()
				if !sawFinish || sawUsage {
					t.Fatalf("finish seen %v, usage or end seen before it %v", sawFinish, sawUsage)
				}
				run := r.waitRun(id)
				if grace == "off" {
					if run.Status != ledger.RunCancelled || run.HeldUnits != run.ReserveUnits {
						t.Fatalf("grace off: run %+v; want cancelled with its hold", run)
					}
					return
				}
				if run.Status != ledger.RunCompleted || run.Usage != ledger.UsageTrusted || run.HeldUnits != 0 {
					t.Fatalf("run after the client left at the finish: %+v; want completed on trusted usage", run)
				}
			})
		}
		r.verify()
	}
}
