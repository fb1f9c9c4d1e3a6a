package clients_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/e2e/clients"
)

// TestInstalled runs each pinned CLI from the cache with no network help: the
// native binaries ship inside the npm packages.
func TestInstalled(t *testing.T) {
	for _, c := range []struct{ bin, want string }{
		{"codex", "codex-cli 0.169.0"},
		{"claude", "2.1.328 (Claude Code)"},
	} {
		t.Run(c.bin, func(t *testing.T) {
			out, err := exec.Command(clients.Bin(t, c.bin), "--version").CombinedOutput()
			if err != nil || !strings.Contains(string(out), c.want) {
				t.Fatalf("%s --version = %q, %v; want %q", c.bin, out, err, c.want)
			}
		})
	}
	node, nodePath := clients.Node(t)
	cmd := exec.Command(node, "-e", `const {OpenAI} = require("openai"), {Anthropic} = require("@anthropic-ai/sdk");
console.log(typeof OpenAI, typeof Anthropic, require("openai/version").VERSION, require("@anthropic-ai/sdk/version").VERSION)`)
	cmd.Env = append(cmd.Environ(), "NODE_PATH="+nodePath)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "function function 7.55.0 1.10.0" {
		t.Fatalf("SDK versions = %q, %v; want 7.55.0 1.10.0", out, err)
	}
	// The Vercel AI SDK and LangChain JS, on this Node (they declare node >= 22).
	cmd = exec.Command(node, "-e", `const {generateText} = require("ai"), {createOpenAI} = require("@ai-sdk/openai"), {ChatOpenAI} = require("@langchain/openai");
const v = (p) => require(p + "/package.json").version;
console.log(typeof generateText, typeof createOpenAI, typeof ChatOpenAI, v("ai"), v("@ai-sdk/openai"), v("@langchain/openai"), v("@langchain/core"))`)
	cmd.Env = append(cmd.Environ(), "NODE_PATH="+nodePath)
	out, err = cmd.CombinedOutput()
	if want := "function function function 7.0.173 4.0.118 1.6.0 1.4.0"; err != nil || strings.TrimSpace(string(out)) != want {
		t.Fatalf("AI SDK / LangChain = %q, %v; want %q", out, err, want)
	}
}
