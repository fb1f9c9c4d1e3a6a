package translate_test

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/wire"
)

// TestDependencies keeps translate beside the formats: it reads and writes
// them and knows quotagate's error codes, and does nothing else (no I/O,
// no metering, no gateway).
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	depcheck.Allow(t, ".", map[string]string{
		depcheck.Module + "/backend/openai":    "the chat side of every translation",
		depcheck.Module + "/backend/responses": "the Responses side",
		depcheck.Module + "/backend/anthropic": "the Messages side",
		depcheck.Module + "/backend/gemini":    "the Gemini side",
		depcheck.Module + "/backend/wire":      "the formats' shared reader",
		depcheck.Module + "/backend/ledger":    "quotagate's error codes, which a translation answers with",
		depcheck.Module + "/backend/price":     "through ledger only (a run's money); price is a stdlib-only leaf",
		depcheck.Module + "/backend/period":    "through ledger only (a budget's period); period is a stdlib-only leaf",
	})
	depcheck.AllowStandard(t, ".", map[string]string{
		"bytes":         "byte-level work",
		"encoding/json": "the formats are JSON",
		"fmt":           "error context",
		"sort":          "a stream's function calls in chat's order",
		"strconv":       "tool ids",
		"strings":       "text assembly",
	})
}

// TestWireBoundsAreTheLedgers: the formats bound counts and refuse
// accounting fields without importing ledger; the bound is its MaxUnits.
func TestWireBoundsAreTheLedgers(t *testing.T) {
	if wire.MaxCount != int64(ledger.MaxUnits) {
		t.Fatalf("wire.MaxCount %d, ledger.MaxUnits %d", int64(wire.MaxCount), ledger.MaxUnits)
	}
}
