package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/clock"
)

// TestServeClockOffset: with QUOTAGATE_CLOCK_OFFSET=72h, `quotagate serve`
// says so at start, its admin state shows the offset and a now 72 h ahead,
// and the run a call makes is written at the shifted time.
func TestServeClockOffset(t *testing.T) {
	t.Setenv(clock.EnvOffset, "72h")
	const offset = 72 * time.Hour
	before := time.Now()
	lines, stop := startServe(t, "--data", t.TempDir())
	defer stop()
	if got := lines["clock"]; !strings.HasPrefix(got, "clock offset +72h0m0s ("+clock.EnvOffset+"), now ") {
		t.Fatalf("clock line %q, want the offset and the shifted now (printed %v)", got, lines)
	}
	base, token, _ := strings.Cut(lines["dashboard"], "/#token=")

	var state struct {
		StartedAt time.Time `json:"started_at"`
		Clock     struct {
			Offset string    `json:"offset"`
			Now    time.Time `json:"now"`
		} `json:"clock"`
	}
	getJSON(t, base+"/admin/api/state", token, &state)
	after := time.Now()
	if state.Clock.Offset != "72h0m0s" {
		t.Errorf("state clock offset %q, want 72h0m0s", state.Clock.Offset)
	}
	shifted(t, "state clock now", state.Clock.Now, before.Add(offset), after.Add(offset))
	shifted(t, "state started_at", state.StartedAt, before.Add(offset), after.Add(offset))

	req, _ := http.NewRequest("POST", base+"/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+lines["local key"])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Header.Get("X-Run-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("chat: %d, run %q", resp.StatusCode, id)
	}
	var run struct {
		CreatedAt time.Time `json:"created_at"`
		UpdatedAt time.Time `json:"updated_at"`
	}
	getJSON(t, base+"/v1/runs/"+id, lines["local key"], &run)
	end := time.Now()
	shifted(t, "run created_at", run.CreatedAt, before.Add(offset), end.Add(offset))
	shifted(t, "run updated_at", run.UpdatedAt, before.Add(offset), end.Add(offset))
}

// TestServeClockOffsetRefused: a QUOTAGATE_CLOCK_OFFSET that is not a Go
// duration refuses the start with an error naming the variable.
func TestServeClockOffsetRefused(t *testing.T) {
	t.Setenv(clock.EnvOffset, "tomorrow")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), clock.EnvOffset+`="tomorrow"`) || out.Len() != 0 {
		t.Fatalf("serve with %s=tomorrow = %d, stdout %q, stderr %q; want 1 and the variable named", clock.EnvOffset, code, out.String(), errb.String())
	}
}

func getJSON(t *testing.T, url, bearer string, v any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// shifted fails t unless at lies within [from, to], allowing the second
// that RFC 3339 without fractions may drop.
func shifted(t *testing.T, what string, at, from, to time.Time) {
	t.Helper()
	if at.Before(from.Add(-time.Second)) || at.After(to.Add(time.Second)) {
		t.Errorf("%s %v, want between %v and %v", what, at, from, to)
	}
}
