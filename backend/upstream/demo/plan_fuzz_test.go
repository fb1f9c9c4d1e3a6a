package demo_test

import (
	"testing"

	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// FuzzParsePlan: any header value parses or errors without panicking, and a
// parsed plan survives Encode → ParsePlan unchanged in the fields it encodes.
func FuzzParsePlan(f *testing.F) {
	for _, s := range []string{"", "kind=cut&after=1&parts=part,more", "kind=error&status=429&retry_after=3",
		"latency=2s-5s", "text=%E4%BD%A0%E5%A5%BD+AI&chunks=3", "kind=slow&delay=10ms&repeat=4", "kind=%zz", "after=-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := demo.ParsePlan(s)
		if err != nil {
			return
		}
		q, err := demo.ParsePlan(p.Encode())
		if err != nil {
			t.Fatalf("re-parse of %q: %v", p.Encode(), err)
		}
		if q.Kind != p.Kind || q.Text != p.Text || q.CutAfter != p.CutAfter || q.Chunks != p.Chunks ||
			q.Repeat != p.Repeat || q.Status != p.Status || q.ChunkDelay != p.ChunkDelay || q.RetryAfter != p.RetryAfter {
			t.Fatalf("round trip %+v → %+v", p, q)
		}
	})
}
