package gate_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quotagate/quotagate/backend/gate"
)

// scripted is a real loopback upstream answering statuses in order.
func scripted(t *testing.T, statuses ...int) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		st := statuses[min(i, len(statuses)-1)]
		if st != http.StatusOK {
			w.Header().Set("Retry-After", "0")
		}
		w.WriteHeader(st)
		fmt.Fprintf(w, "answer %d", i+1)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// doHTTP is the loop a gateway writes around its upstream call.
func doHTTP(t *testing.T, ctx context.Context, p gate.RetryPolicy, url string) (*http.Response, []gate.Answer, int, error) {
	t.Helper()
	var last *http.Response
	discarded := 0
	answers, err := p.Do(ctx, func(ctx context.Context) (int, string, func(), error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", nil, err
		}
		last = resp
		return resp.StatusCode, resp.Header.Get("Retry-After"), func() {
			discarded++
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}, nil
	})
	return last, answers, discarded, err
}

func TestDoUpstream429ThenSuccess(t *testing.T) {
	srv, n := scripted(t, 429, 200)
	resp, answers, discarded, err := doHTTP(t, t.Context(), gate.DefaultRetryPolicy, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "answer 2" || n.Load() != 2 || discarded != 1 {
		t.Fatalf("final %d %q after %d attempts, %d discarded; want 200 \"answer 2\" after 2, 1 discarded", resp.StatusCode, body, n.Load(), discarded)
	}
	if gate.Evidence(answers) != "429 Retry-After=0" {
		t.Fatalf("answers %q", gate.Evidence(answers))
	}
}

func TestDoThree429sFail(t *testing.T) {
	srv, n := scripted(t, 429, 429, 429, 200)
	resp, answers, discarded, err := doHTTP(t, t.Context(), gate.DefaultRetryPolicy, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body) // the final answer stays readable for the evidence
	if resp.StatusCode != 429 || string(body) != "answer 3" || n.Load() != 3 || discarded != 2 || len(answers) != 3 {
		t.Fatalf("final %d %q after %d attempts, %d discarded, answers %v; want the 3rd 429 kept", resp.StatusCode, body, n.Load(), discarded, answers)
	}
}

func TestDoNotRetried(t *testing.T) {
	for _, st := range []int{200, 400, 500, 502} {
		srv, n := scripted(t, st, 200)
		resp, answers, _, err := doHTTP(t, t.Context(), gate.DefaultRetryPolicy, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != st || n.Load() != 1 || len(answers) != 0 {
			t.Fatalf("status %d: %d attempts, answers %v; want 1 attempt, no answers", st, n.Load(), answers)
		}
	}
}

func TestDoWaitsAndStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		statuses := []struct {
			status int
			ra     string
		}{{503, ""}, {429, "3"}, {503, ""}}
		var at []time.Duration
		start := time.Now()
		i := 0
		answers, err := gate.DefaultRetryPolicy.Do(t.Context(), func(context.Context) (int, string, func(), error) {
			at = append(at, time.Since(start))
			s := statuses[i]
			i++
			return s.status, s.ra, nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// 503 without Retry-After: 1 s backoff; then the 429 asks for 3 s; then no retries left.
		if want := []time.Duration{0, time.Second, 4 * time.Second}; fmt.Sprint(at) != fmt.Sprint(want) {
			t.Fatalf("attempts at %v, want %v", at, want)
		}
		if got := gate.Evidence(answers); got != "503 waited=1s; 429 Retry-After=3 waited=3s; 503" {
			t.Fatalf("evidence %q", got)
		}
	})
}

func TestDoCancelledDuringWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(2*time.Second, cancel)
		discarded := false
		answers, err := gate.DefaultRetryPolicy.Do(ctx, func(context.Context) (int, string, func(), error) {
			return 429, "10", func() { discarded = true }, nil
		})
		if !errors.Is(err, context.Canceled) || !discarded || len(answers) != 1 {
			t.Fatalf("err %v, discarded %v, answers %v; want Canceled after discarding the one answer", err, discarded, answers)
		}
	})
}

func TestDoAttemptError(t *testing.T) {
	boom := errors.New("connection refused")
	calls := 0
	_, err := gate.DefaultRetryPolicy.Do(t.Context(), func(context.Context) (int, string, func(), error) {
		calls++
		return 0, "", nil, boom
	})
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("err %v after %d calls, want the attempt's error at once", err, calls)
	}
}
