package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseService(t *testing.T) {
	got, err := parse([]string{"service", "install", "--data", "/d"}, io.Discard)
	if want := (cli{command: "service", action: "install", data: "/d"}); err != nil || got != want {
		t.Fatalf("parse = %+v, %v; want %+v", got, err, want)
	}
	if _, err := parse([]string{"service", "install", "extra"}, io.Discard); err == nil {
		t.Fatal("service install extra: want an error")
	}
}

// TestServiceInstall: `quotagate service install` writes an enabled systemd
// user unit that starts this program headless on the data dir; uninstall
// removes both; a missing action is a usage error.
func TestServiceInstall(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	data := t.TempDir()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"service", "install", "--data", data}, &out, &errb); code != 0 {
		t.Fatalf("service install = %d: %s%s", code, out.String(), errb.String())
	}
	unit := filepath.Join(home, ".config", "systemd", "user", "quotagate.service")
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatalf("no unit: %v (stdout %q)", err, out.String())
	}
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	if want := "ExecStart=" + exe + " serve --data " + data + "\n"; !strings.Contains(string(b), want) {
		t.Fatalf("unit lacks %q:\n%s", want, b)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(unit), "default.target.wants", "quotagate.service")); err != nil {
		t.Fatalf("unit not enabled: %v", err)
	}
	if code := run(context.Background(), []string{"service", "uninstall"}, &out, &errb); code != 0 {
		t.Fatalf("service uninstall = %d: %s", code, errb.String())
	}
	if _, err := os.Stat(unit); !os.IsNotExist(err) {
		t.Fatalf("uninstall left %s", unit)
	}
	errb.Reset()
	if code := run(context.Background(), []string{"service"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "install or uninstall") {
		t.Fatalf("service with no action = %d, %q; want 2 and a usage error", code, errb.String())
	}
}

// syncBuffer is a bytes.Buffer written by the serving goroutine's logger
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSecondLaunchHandsOver: launching quotagate on a data dir that a
// running `serve` holds hands over to it and exits 0 — the running one gets
// the request, no second gateway starts, and its live run is untouched (a
// second recovery would have ended it interrupted).
func TestSecondLaunchHandsOver(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var firstLog syncBuffer
	done := make(chan int, 1)
	data := filepath.Join(t.TempDir(), "data")
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", data}, pw, &firstLog)
		pw.Close()
	}()
	lines := serveLines(pr)
	base, key := strings.TrimSuffix(lines["base URL"], "/v1"), lines["local key"]

	// A stream that stays open (the demo stalls after its headers).
	body := `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("X-Demo-Plan", "kind=stall")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream: %v %v", resp, err)
	}
	defer resp.Body.Close()
	runID := resp.Header.Get("X-Run-Id")

	var out, errb bytes.Buffer
	if code := run(ctx, []string{"--data", data}, &out, &errb); code != 0 {
		t.Fatalf("second launch = %d; stdout %q stderr %q", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "already running headless") || !strings.Contains(out.String(), base) {
		t.Fatalf("second launch said %q; want it to name the running gateway at %s", out.String(), base)
	}
	if !strings.Contains(firstLog.String(), "a second launch asked for the dashboard") {
		t.Fatalf("the running serve never got the request; its log:\n%s", firstLog.String())
	}
	r, _ := http.NewRequest("GET", base+"/v1/runs/"+runID, nil)
	r.Header.Set("Authorization", "Bearer "+key)
	rr, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	var run struct{ Status string }
	json.NewDecoder(rr.Body).Decode(&run)
	rr.Body.Close()
	if run.Status != "active" {
		t.Fatalf("the running serve's live run is %q after the second launch, want active (a second recovery ran?)", run.Status)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}
