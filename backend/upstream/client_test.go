package upstream_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

const body = `{"model":"demo-chat","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`

func startDemo(t *testing.T, opts demo.Options) *demo.Server {
	t.Helper()
	s, err := demo.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newClient(t *testing.T, opts upstream.Options) *upstream.Client {
	t.Helper()
	c, err := upstream.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func deadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestSendStreamsAndSendsKey(t *testing.T) {
	d := startDemo(t, demo.Options{APIKey: "sk-up", Plan: demo.Plan{Text: "ok"}})
	c := newClient(t, upstream.Options{Name: "demo", BaseURL: d.URL(), APIKey: "sk-up", Models: d.Models()})
	resp, err := c.Send(deadline(t), []byte(body), http.Header{demo.PlanHeader: {"kind=normal&text=hello"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"content":"hello"`) || !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
		t.Errorf("status %d body %s", resp.StatusCode, b)
	}
	if !c.Serves("demo-chat") || c.Serves("gpt-4o") {
		t.Error("Serves is wrong")
	}
}

func TestConnectionRefusedIsNotSent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := newClient(t, upstream.Options{Name: "gone", BaseURL: "http://" + addr + "/v1"})
	_, err = c.Send(deadline(t), []byte(body), nil)
	var se *upstream.SendError
	if !errors.As(err, &se) || se.Sent {
		t.Fatalf("err %v, want SendError with Sent=false", err)
	}
	if !strings.HasPrefix(se.Evidence(), "upstream_connect_error") {
		t.Errorf("evidence %q", se.Evidence())
	}
}

func TestResponseHeaderTimeoutIsSent(t *testing.T) {
	d := startDemo(t, demo.Options{Plan: demo.Plan{LatencyMin: time.Minute}})
	c := newClient(t, upstream.Options{Name: "demo", BaseURL: d.URL(), ResponseHeaderTimeout: 50 * time.Millisecond})
	_, err := c.Send(deadline(t), []byte(body), nil)
	var se *upstream.SendError
	if !errors.As(err, &se) || !se.Sent || !se.Timeout {
		t.Fatalf("err %#v, want SendError with Sent and Timeout", err)
	}
	if err := d.WaitDisconnects(deadline(t), 1); err != nil {
		t.Fatal(err)
	}
}

func TestCancelClosesUpstreamConnection(t *testing.T) {
	d := startDemo(t, demo.Options{Plan: demo.Plan{Kind: demo.KindStall}})
	c := newClient(t, upstream.Options{Name: "demo", BaseURL: d.URL()})
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := c.Send(ctx, []byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	cancel()
	if err := d.WaitDisconnects(deadline(t), 1); err != nil {
		t.Fatal(err)
	}
}

func TestNewRejectsBadBaseURL(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "127.0.0.1:1/v1"} {
		if _, err := upstream.New(upstream.Options{Name: "x", BaseURL: u}); err == nil {
			t.Errorf("base URL %q accepted", u)
		}
	}
}

func TestCancelledBeforeSendIsNotSent(t *testing.T) {
	d := startDemo(t, demo.Options{})
	c := newClient(t, upstream.Options{Name: "demo", BaseURL: d.URL()})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Send(ctx, []byte(body), nil)
	var se *upstream.SendError
	if !errors.As(err, &se) || se.Sent || !strings.HasPrefix(se.Evidence(), "upstream_not_sent") {
		t.Fatalf("err %v, want SendError not sent with upstream_not_sent evidence", err)
	}
	if n := d.Stats().Received; n != 0 {
		t.Errorf("demo received %d requests", n)
	}
}
