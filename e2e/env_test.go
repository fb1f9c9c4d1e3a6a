package e2e_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"testing"

	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/frontend"
)

// need skips the test, or fails it when E2E_REQUIRED=1, so CI cannot pass
// by silently skipping.
func need(t *testing.T, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("E2E_REQUIRED") == "1" {
		t.Fatalf("E2E_REQUIRED=1 but %s", why)
	}
	t.Skip(why)
}

func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROME_BIN"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	need(t, false, "no chromium found (set CHROME_BIN, or run `make deps`)")
	return ""
}

func dashboardBuilt(t *testing.T) fs.FS {
	t.Helper()
	dist := frontend.FS()
	_, err := fs.Stat(dist, "index.html")
	need(t, err == nil, "frontend/dist/index.html missing: run `make frontend` before go test")
	return dist
}

// openServer starts the assembled backend on 127.0.0.1:0 with a fresh data dir.
func openServer(t *testing.T, dist fs.FS) *server.Server {
	t.Helper()
	s, err := server.Open(context.Background(), server.Options{
		DataDir: t.TempDir(), Addr: "127.0.0.1:0", Version: "e2e", Frontend: dist,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
