// Package clients finds the real, pinned client programs and SDKs that the
// end-to-end tests drive (e2e/clients/package.json: the openai and
// @anthropic-ai SDKs, the Vercel AI SDK, LangChain JS, Codex CLI, Claude
// Code, Gemini CLI and the @google/genai SDK). scripts/clients.sh installs
// them with `npm ci` into a cache outside the repo and `make test` exports
// that directory as QUOTAGATE_CLIENTS_DIR.
//
// A test that needs a client skips when it is missing, and fails instead
// under E2E_REQUIRED=1 (as `make test` runs), so CI cannot pass by skipping.
package clients

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// EnvDir names the variable holding the install directory.
const EnvDir = "QUOTAGATE_CLIENTS_DIR"

// Dir is the directory holding node_modules with the pinned clients: $EnvDir,
// else the default cache scripts/clients.sh installs into. It skips or fails
// tb (see the package doc) when nothing is installed there.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv(EnvDir)
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			Need(tb, false, "no "+EnvDir+" and no user cache dir: run scripts/clients.sh")
		}
		dir = filepath.Join(cache, "quotagate", "clients")
	}
	_, err := os.Stat(filepath.Join(dir, "node_modules"))
	Need(tb, err == nil, "the pinned clients are not installed in "+dir+": run scripts/clients.sh (make test does)")
	return dir
}

// Bin is the path of an installed client command (codex, claude, gemini).
func Bin(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(Dir(tb), "node_modules", ".bin", name)
	_, err := os.Stat(p)
	Need(tb, err == nil, name+" is not installed in "+p+": run scripts/clients.sh")
	return p
}

// Node returns the node binary and a NODE_PATH under which the pinned SDKs
// (require("openai"), require("@anthropic-ai/sdk")) resolve.
func Node(tb testing.TB) (node, nodePath string) {
	tb.Helper()
	dir := Dir(tb)
	node, err := exec.LookPath("node")
	Need(tb, err == nil, "node is not on PATH")
	return node, filepath.Join(dir, "node_modules")
}

// Need skips tb with why when ok is false, or fails it when E2E_REQUIRED=1.
func Need(tb testing.TB, ok bool, why string) {
	tb.Helper()
	if ok {
		return
	}
	if os.Getenv("E2E_REQUIRED") == "1" {
		tb.Fatalf("E2E_REQUIRED=1 but %s", why)
	}
	tb.Skip(why)
}
