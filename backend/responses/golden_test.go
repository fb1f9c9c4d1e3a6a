package responses_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/quotagate/quotagate/backend/internal/golden"
	"github.com/quotagate/quotagate/backend/responses"
)

// Native streams: what the reader makes of each (text, function call, cut,
// failed, incomplete, no usage, usage-shaped text, contradictory usage, data
// after the final event).
func TestGoldenNative(t *testing.T) {
	for _, base := range golden.Cases(t, "native", ".sse") {
		t.Run(filepath.Base(base), func(t *testing.T) {
			in, err := os.ReadFile(base + ".sse")
			if err != nil {
				t.Fatal(err)
			}
			var r responses.Reader
			for _, ev := range golden.ReadSSE(t, in) {
				if err := r.Observe(ev.Name, []byte(ev.Data)); err != nil {
					t.Fatal(err)
				}
			}
			golden.Check(t, base+".golden.json", golden.IndentValue(t, r.Result()))
		})
	}
}
