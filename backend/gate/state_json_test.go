package gate_test

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/quotagate/quotagate/backend/gate"
)

// The admin snapshot's "gates" entries are gate.State, with exactly
// CONTRACTS.md's names (plus "cancelled"); the histogram stays out of the JSON.
func TestStateJSON(t *testing.T) {
	gs := gate.NewGates()
	gs.Set("demo", gate.Options{})
	rel, _ := gs.Acquire(t.Context(), "demo")
	defer rel()
	b, err := json.Marshal(gs.State())
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"upstream": "demo", "max_concurrent": 2.0, "in_flight": 1.0, "queued": 0.0,
		"max_waiters": 4.0, "max_wait_ms": 8000.0, "admitted": 1.0, "rejected": 0.0, "timed_out": 0.0,
		"cancelled": 0.0, "wait_p95_ms": 0.0}
	if len(got) != 1 || !maps.Equal(got[0], want) {
		t.Fatalf("gates JSON %s, want %v", b, want)
	}
}
