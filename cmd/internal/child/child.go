// Package child is the quotagate gateway as the bench and load tools drive
// it from outside: `quotagate serve` started on a config of their own in a
// temporary directory, asked by HTTP, and stopped as an operator would
// (SIGINT, then a kill when it does not end).
package child

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Options say how to start the child.
type Options struct {
	Binary string
	// Prefix names the temporary directory that holds the config, the data
	// and (unless Log is set) the log.
	Prefix string
	// Log is where the child's output goes; "" is gateway.log in its
	// directory.
	Log string
	// Config is the config file's text for a gateway listening on addr.
	Config func(addr string) string
	// Args are flags after serve's own (--config, --data, --addr).
	Args []string
}

// Gateway is a started `quotagate serve`.
type Gateway struct {
	Addr string // the host:port it listens on
	Dir  string // its config, log and data directory
	Log  string // the path of its log
	PID  int

	cmd    *exec.Cmd
	logf   *os.File
	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed
}

// Start writes the config and starts the child; it does not wait for it to
// be healthy (each tool asks /healthz for what it needs).
func Start(o Options) (*Gateway, error) {
	dir, err := os.MkdirTemp("", o.Prefix)
	if err != nil {
		return nil, err
	}
	g, err := start(o, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return g, nil
}

func start(o Options, dir string) (*Gateway, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(o.Config(addr)), 0o600); err != nil {
		return nil, err
	}
	logPath := o.Log
	if logPath == "" {
		logPath = filepath.Join(dir, "gateway.log")
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--config", cfg, "--data", filepath.Join(dir, "data"), "--addr", addr}, o.Args...)
	cmd := exec.Command(o.Binary, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", o.Binary, err)
	}
	g := &Gateway{Addr: addr, Dir: dir, Log: logPath, PID: cmd.Process.Pid, cmd: cmd, logf: logf, exited: make(chan struct{})}
	go func() { g.err = cmd.Wait(); close(g.exited) }()
	return g, nil
}

// Exited is closed once the child has ended; Err then says how.
func (g *Gateway) Exited() <-chan struct{} { return g.exited }

// Err is the child's exit error (nil for a clean exit); read it only after
// Exited is closed.
func (g *Gateway) Err() error { return g.err }

// Stop interrupts the child, kills it when it has not ended 10 s later, and
// removes its directory; the error says when it had to kill.
func (g *Gateway) Stop() error {
	defer os.RemoveAll(g.Dir)
	defer g.logf.Close()
	_ = g.cmd.Process.Signal(os.Interrupt)
	select {
	case <-g.exited:
		return nil
	case <-time.After(10 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.exited
		return fmt.Errorf("gateway pid %d ignored SIGINT for 10 s; killed", g.PID)
	}
}

// FreeAddr is a loopback address with a port free a moment ago.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// GetJSON GETs url with token as its bearer and decodes the answer into v,
// whatever its status, which it returns for the caller to judge.
func GetJSON(ctx context.Context, c *http.Client, url, token string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, json.NewDecoder(resp.Body).Decode(v)
}
