package frontend

import (
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The placeholder keeps the embed compiling on a fresh clone.
func TestPlaceholderEmbedded(t *testing.T) {
	if _, err := fs.Stat(FS(), ".gitkeep"); err != nil {
		t.Fatalf("dist/.gitkeep not embedded (needed before the first npm build): %v", err)
	}
}

var assetRef = regexp.MustCompile(`(?:src|href)="\./([^"]+)"`)

// Every asset index.html names must be embedded, under a relative path, so
// the page loads both from `quotagate serve` and from the Wails asset server.
func TestBuiltAssetsEmbedded(t *testing.T) {
	page, err := fs.ReadFile(FS(), "index.html")
	if err != nil {
		if os.Getenv("E2E_REQUIRED") == "1" {
			t.Fatalf("frontend not built (run npm run build in frontend/): %v", err)
		}
		t.Skip("frontend/dist/index.html missing: run `npm ci && npm run build` in frontend/")
	}
	if strings.Contains(string(page), `="/assets/`) {
		t.Fatal("index.html uses absolute /assets/ URLs; vite base must be './'")
	}
	refs := assetRef.FindAllStringSubmatch(string(page), -1)
	if len(refs) < 2 {
		t.Fatalf("index.html names %d assets, want the script and the stylesheet:\n%s", len(refs), page)
	}
	for _, m := range refs {
		if _, err := fs.Stat(FS(), m[1]); err != nil {
			t.Errorf("index.html names %s, not embedded: %v", m[1], err)
		}
	}
}
