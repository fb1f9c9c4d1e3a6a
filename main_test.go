package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/datadir"
	"github.com/quotagate/quotagate/backend/server"
)

func TestParse(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/xdg")
	for _, tc := range []struct {
		name string
		args []string
		want cli
	}{
		{"Window", nil, cli{data: "/xdg/quotagate"}},
		{"FlagsAfterCommand", []string{"serve", "--addr", "127.0.0.1:9", "--data", "/d"}, cli{command: "serve", addr: "127.0.0.1:9", data: "/d"}},
		{"FlagsBeforeCommand", []string{"--config", "c.yaml", "verify"}, cli{command: "verify", config: "c.yaml", data: "/xdg/quotagate"}},
		{"SingleDash", []string{"-addr=127.0.0.1:1", "serve"}, cli{command: "serve", addr: "127.0.0.1:1", data: "/xdg/quotagate"}},
		{"VersionFlag", []string{"--version"}, cli{command: "version", data: "/xdg/quotagate"}},
		{"Pprof", []string{"serve", "--pprof", "127.0.0.1:6060"}, cli{command: "serve", pprof: "127.0.0.1:6060", data: "/xdg/quotagate"}},
		{"LogLevel", []string{"--log-level", "debug", "serve"}, cli{command: "serve", logLevel: "debug", data: "/xdg/quotagate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse(tc.args, io.Discard)
			if err != nil || got != tc.want {
				t.Fatalf("parse(%q) = %+v, %v; want %+v", tc.args, got, err, tc.want)
			}
		})
	}
	t.Setenv("XDG_DATA_HOME", "relative/ignored")
	t.Setenv("HOME", "/home/u")
	if got, _ := parse(nil, io.Discard); got.data != "/home/u/.local/share/quotagate" {
		t.Fatalf("data dir %q, want ~/.local/share/quotagate when XDG_DATA_HOME is not absolute", got.data)
	}
}

func TestRunExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		code     int
		stdout   string
		stderrIn string
	}{
		{[]string{"--help"}, 0, "Commands:", ""},
		{[]string{"help"}, 0, "--config FILE", ""},
		{[]string{"help"}, 0, "--log-level", ""},
		{[]string{"serve", "--log-level", "loud"}, 2, "", `--log-level is debug, info, warn or error, not "loud"`},
		{[]string{"version"}, 0, "quotagate dev", ""},
		{[]string{"bogus"}, 2, "", `unknown command "bogus"`},
		{[]string{"serve", "extra"}, 2, "", `unexpected argument "extra"`},
		{[]string{"--nope"}, 2, "", "flag provided but not defined"},
		{[]string{"serve", "--addr", "0.0.0.0:0", "--data", "DATA"}, 1, "", "loopback only"},
		{[]string{"serve", "--pprof", "0.0.0.0:6060", "--data", "DATA"}, 2, "", "loopback only"},
		{[]string{"serve", "--pprof", "6060", "--data", "DATA"}, 2, "", "want HOST:PORT"},
		{[]string{"serve", "--config", "/does/not/exist.yaml", "--data", "DATA"}, 1, "", "read config"},
		{[]string{"verify", "--data", "DATA"}, 1, "", "no ledger"},
	} {
		var out, errb bytes.Buffer
		args := append([]string(nil), tc.args...)
		for i, a := range args {
			if a == "DATA" {
				args[i] = t.TempDir()
			}
		}
		code := run(context.Background(), args, &out, &errb)
		if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errb.String(), tc.stderrIn) {
			t.Errorf("run(%q) = %d\nstdout %q\nstderr %q\nwant %d, stdout ∋ %q, stderr ∋ %q", tc.args, code, out.String(), errb.String(), tc.code, tc.stdout, tc.stderrIn)
		}
	}
}

// TestLogLevel: the terminal shows info and above unless --log-level says
// otherwise; routine events (a dashboard connecting) are at debug.
func TestLogLevel(t *testing.T) {
	for _, tc := range []struct {
		flag        string
		lowestShown slog.Level
	}{
		{"", slog.LevelInfo},
		{"debug", slog.LevelDebug},
		{"info", slog.LevelInfo},
		{"warn", slog.LevelWarn},
		{"error", slog.LevelError},
	} {
		var args []string
		if tc.flag != "" {
			args = []string{"--log-level", tc.flag}
		}
		c, err := parse(args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		log := c.logger(io.Discard)
		for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
			if got, want := log.Enabled(context.Background(), l), l >= tc.lowestShown; got != want {
				t.Errorf("--log-level %q: %v shown = %v, want %v", tc.flag, l, got, want)
			}
		}
	}
}

// TestServeArgs: without a display the window serves instead, from the
// headless build when there is one; the command line handed to it is serve
// with every flag the launch had.
func TestServeArgs(t *testing.T) {
	launch := []string{"--data", "/d", "--addr", "127.0.0.1:9", "--config", "c.yaml", "--log-level", "warn"}
	got, err := parse(serveArgs(launch), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := parse(launch, io.Discard)
	want.command = "serve"
	if got != want {
		t.Fatalf("parse(serveArgs(%q)) = %+v, want %+v", launch, got, want)
	}
}

// TestServe runs `quotagate serve` in-process: it prints the dashboard URL
// with the token and the local key, answers /healthz there, and exits 0
// when its context ends (Ctrl+C); with --pprof it serves the profiler.
func TestServe(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	lines, stop := startServe(t, "--data", data, "--pprof", "127.0.0.1:0")
	dash, key := lines["dashboard"], lines["local key"]
	if !strings.Contains(dash, "/#token=") || !strings.HasPrefix(key, "sk-qg-local-") || lines["data"] != data {
		t.Fatalf("serve printed %v", lines)
	}
	if _, shifted := lines["clock"]; shifted {
		t.Fatalf("serve on real time printed a clock line: %v", lines)
	}
	base, _, _ := strings.Cut(dash, "/#token=")
	if lines["base URL"] != base+"/v1" {
		t.Fatalf("base URL %q, want %q", lines["base URL"], base+"/v1")
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = http.Get(lines["pprof"] + "cmdline")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("pprof at %q: %v %v", lines["pprof"], resp, err)
	}
	resp.Body.Close()
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d after Ctrl+C, want 0", code)
	}
}

// serveLines reads serve's start lines up to the data dir's, by label, and
// discards the rest of out.
func serveLines(out io.Reader) map[string]string {
	lines := map[string]string{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ": "); ok {
			lines[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		if _, ok := lines["data"]; ok {
			break
		}
	}
	go io.Copy(io.Discard, out)
	return lines
}

// startServe runs `quotagate serve --addr 127.0.0.1:0 args…` in-process and
// returns the lines it printed up to the data dir's, by label; stop is
// Ctrl+C, returning the exit code.
func startServe(t *testing.T, args ...string) (lines map[string]string, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), pw, io.Discard)
		pw.Close()
	}()
	lines = serveLines(pr)
	return lines, func() int {
		t.Helper()
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not stop")
			return -1
		}
	}
}

// TestServeDataDirInUse: `quotagate serve` on a data dir another process
// holds exits 1 with one line naming the holder's pid, and creates no
// ledger.
func TestServeDataDirInUse(t *testing.T) {
	data := t.TempDir()
	l, err := datadir.Acquire(data)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", data}, &out, &errb)
	msg := errb.String()
	if code != 1 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("serve on a held data dir = %d, stderr %q; want 1 and one line naming pid %d", code, msg, os.Getpid())
	}
	if _, err := os.Stat(filepath.Join(data, server.LedgerFile)); err == nil {
		t.Error("a ledger was created in a data dir held by another process")
	}
}
