package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/quotagate/quotagate/backend/clock"
	"github.com/quotagate/quotagate/backend/gate"
)

// Load is one smoke run: Users virtual users, each making Calls streaming
// calls with a think pause between them, against one gateway.
type Load struct {
	BaseURL  string   // gateway root, e.g. http://127.0.0.1:8787
	Keys     []string // one tenant key per user, reused round-robin when fewer
	Users    int
	Calls    int           // calls per user
	Ramp     time.Duration // users start spread evenly over this
	ThinkMin time.Duration // pause between a user's calls, drawn from [ThinkMin, ThinkMax]
	ThinkMax time.Duration
	Model    string
	Plan     string // demo upstream plan, sent as X-Demo-Plan and as a "/demo …" directive
	Retry    gate.RetryPolicy
	Timeout  time.Duration // per call, retries included
	Seed     uint64
	Client   *http.Client
}

// Call is what one user call came to, after client-side retries.
type Call struct {
	User      int           `json:"user"`
	Attempts  int           `json:"attempts"`
	Statuses  []int         `json:"statuses"`          // every attempt's HTTP status (0: transport error)
	Retries   []string      `json:"retry_after"`       // every refused attempt's Retry-After header
	Final     int           `json:"final"`             // last attempt's status
	Code      string        `json:"code,omitempty"`    // error code of the final answer, if any
	RunID     string        `json:"run_id,omitempty"`  // X-Run-Id of the final answer
	TTFB      time.Duration `json:"ttfb_ns,omitempty"` // first attempt sent → first body byte of the 200
	Total     time.Duration `json:"total_ns"`          // first attempt sent → stream end or final error
	Complete  bool          `json:"complete"`          // 200 that ended with [DONE] and no error event
	StreamErr string        `json:"stream_error,omitempty"`
	Err       string        `json:"err,omitempty"` // transport error
}

// Run drives the load and returns every call, in completion order.
func (l Load) Run(ctx context.Context) []Call {
	var (
		mu    sync.Mutex
		calls []Call
		wg    sync.WaitGroup
	)
	rng := rand.New(rand.NewPCG(l.Seed, 3))
	for u := range l.Users {
		var delay time.Duration
		if l.Users > 1 {
			delay = l.Ramp * time.Duration(u) / time.Duration(l.Users)
		}
		useed := rng.Uint64()
		wg.Go(func() {
			r := rand.New(rand.NewPCG(useed, uint64(u)))
			if !clock.Sleep(ctx, delay) {
				return
			}
			key := l.Keys[u%len(l.Keys)]
			for i := range l.Calls {
				if i > 0 {
					think := l.ThinkMin
					if l.ThinkMax > l.ThinkMin {
						think += time.Duration(r.Int64N(int64(l.ThinkMax - l.ThinkMin)))
					}
					if !clock.Sleep(ctx, think) {
						return
					}
				}
				c := l.call(ctx, u, key, i)
				mu.Lock()
				calls = append(calls, c)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return calls
}

// call makes one user call, retrying 429/503 answers the way seed 003's
// client does (honour Retry-After, at most 2 retries and 15 s), so that a
// "final 429" is one the user actually saw.
func (l Load) call(ctx context.Context, user int, key string, n int) Call {
	ctx, cancel := context.WithTimeout(ctx, l.Timeout)
	defer cancel()
	c := Call{User: user}
	content := fmt.Sprintf("load smoke user %d call %d", user, n)
	if l.Plan != "" {
		content = "/demo " + l.Plan
	}
	body, _ := json.Marshal(map[string]any{
		"model":          l.Model,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"max_tokens":     256,
		"messages":       []map[string]string{{"role": "user", "content": content}},
	})
	start := time.Now()
	for {
		c.Attempts++
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, l.BaseURL+"/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		if l.Plan != "" {
			req.Header.Set("X-Demo-Plan", l.Plan)
		}
		resp, err := l.Client.Do(req)
		if err != nil {
			c.Statuses = append(c.Statuses, 0)
			c.Final, c.Err, c.Total = 0, err.Error(), time.Since(start)
			return c
		}
		c.Statuses = append(c.Statuses, resp.StatusCode)
		c.Final = resp.StatusCode
		c.RunID = resp.Header.Get("X-Run-Id")
		if resp.StatusCode != http.StatusOK {
			raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			c.Code = errorCode(raw)
			c.Retries = append(c.Retries, resp.Header.Get("Retry-After"))
			wait, ok := l.Retry.Next(c.Attempts, resp.StatusCode, resp.Header.Get("Retry-After"), time.Since(start))
			if !ok {
				c.Total = time.Since(start)
				return c
			}
			if !clock.Sleep(ctx, wait) {
				c.Err, c.Total = ctx.Err().Error(), time.Since(start)
				return c
			}
			continue
		}
		c.Code = ""
		c.TTFB, c.Complete, c.StreamErr = readStream(resp.Body, start)
		resp.Body.Close()
		c.Total = time.Since(start)
		return c
	}
}

// readStream reads an SSE body to its end: the time of the first body byte,
// whether it ended with [DONE] and no error event, and the error event if any.
func readStream(body io.Reader, start time.Time) (ttfb time.Duration, complete bool, streamErr string) {
	br := bufio.NewReaderSize(body, 32<<10)
	if _, err := br.Peek(1); err != nil {
		return time.Since(start), false, "empty body: " + err.Error()
	}
	ttfb = time.Since(start)
	sawDone := false
	for {
		line, err := br.ReadString('\n')
		data, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data:")
		if ok {
			data = strings.TrimSpace(data)
			switch {
			case data == "[DONE]":
				sawDone = true
			case strings.HasPrefix(data, `{"error"`):
				if c := errorCode([]byte(data)); c != "" {
					streamErr = c
				} else {
					streamErr = data
				}
			}
		}
		if err != nil {
			if err != io.EOF && streamErr == "" {
				streamErr = err.Error()
			}
			return ttfb, sawDone && streamErr == "", streamErr
		}
	}
}

func errorCode(raw []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return ""
	}
	return e.Error.Code
}
