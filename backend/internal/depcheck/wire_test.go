package depcheck

import (
	"strings"
	"testing"
)

// wireFormats are the wire-format packages, one per API protocol, each with
// all it may import: backend/wire and the standard library packages named
// here with the reason. A format is a leaf — one protocol's shapes and
// parsers, read by the gateway's doors, backend/translate and the demo
// upstream — so it knows none of them, nor quotagate's domain, and does no
// I/O of its own (no net, no os). Translation between formats is
// backend/translate's.
var wireFormats = []struct {
	name     string
	standard map[string]string
}{
	{"openai", map[string]string{
		"bufio":         "SSE framing reads what it is handed",
		"bytes":         "byte-level parsing",
		"encoding/json": "the wire format is JSON",
		"errors":        "ErrBadUsage and the reader's errors",
		"fmt":           "error context",
		"io":            "SSEReader reads an io.Reader it is handed",
		"strings":       "text assembly",
		"sync":          "SSEReader pools its buffers",
		"unicode/utf8":  "the chunk scan takes valid UTF-8 only",
	}},
	{"responses", map[string]string{
		"bytes":         "byte-level parsing",
		"encoding/json": "the wire format is JSON",
		"fmt":           "error context",
		"strings":       "text assembly",
		"unicode/utf8":  "a body must be valid UTF-8",
	}},
	{"anthropic", map[string]string{
		"bytes":         "byte-level parsing",
		"encoding/json": "the wire format is JSON",
		"errors":        "ErrBadUsage",
		"fmt":           "error context",
		"strings":       "text assembly",
	}},
	{"gemini", map[string]string{
		"bytes":         "byte-level parsing",
		"encoding/json": "the wire format is JSON",
		"errors":        "ErrBadUsage",
		"fmt":           "error context",
		"strings":       "text assembly",
	}},
}

func TestWireFormatsAreLeaves(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, f := range wireFormats {
		t.Run(f.name, func(t *testing.T) {
			pkg := Module + "/backend/" + f.name
			Allow(t, pkg, map[string]string{
				Module + "/backend/wire": "the strict object reader, the integer check and the member scanner every format shares",
			})
			AllowStandard(t, pkg, f.standard)
		})
	}
}

// wire, shared by the wire formats, is standard library only.
func TestWireImportsNothingOfOurs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, dep := range deps(t, Module+"/backend/wire") {
		if strings.HasPrefix(dep, Module) {
			t.Errorf("backend/wire imports %s: the wire formats' shared kit is standard library only", dep)
		}
	}
}
