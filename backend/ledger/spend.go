package ledger

import (
	"fmt"
	"slices"
	"time"

	"github.com/quotagate/quotagate/backend/price"
)

// SpendHour is what the runs of one tenant and model admitted in one hour
// have spent so far: the rollup the Overview's spend chart reads, kept in
// step with the runs by every transition that spends, in its transaction,
// so that a month's chart reads a month of hours, not a month of runs.
// Hours (not days) so that the days of any zone with whole-hour offsets
// are sums of them.
type SpendHour struct {
	Hour       time.Time // the hour's start, UTC
	TenantID   string
	Upstream   string
	Model      string
	SpentUnits Units
	CostMicros price.Micros
}

// SpendHourIndex is the hour t falls in, counted from the Unix epoch, as
// the stores key their rollup.
func SpendHourIndex(t time.Time) int64 { return t.UnixNano() / int64(time.Hour) }

// SpendHourStart is the start of the hour SpendHourIndex counted.
func SpendHourStart(h int64) time.Time { return time.Unix(h*3600, 0).UTC() }

// SpendProblems compares a stretch of the rollup with the same stretch
// recomputed from runs (both as the stores return them: ordered by hour,
// tenant, upstream, model, with no hour that spent nothing) and returns one
// line per difference; empty means the rollup is true.
func SpendProblems(rollup, fromRuns []SpendHour) []string {
	key := func(h SpendHour) string {
		return h.Hour.UTC().Format(time.RFC3339) + " " + h.TenantID + " " + h.Upstream + "/" + h.Model
	}
	want := map[string]SpendHour{}
	for _, h := range fromRuns {
		want[key(h)] = h
	}
	var out []string
	for _, h := range rollup {
		k := key(h)
		w, ok := want[k]
		delete(want, k)
		if !ok && (h.SpentUnits != 0 || h.CostMicros != 0) || ok && (w.SpentUnits != h.SpentUnits || w.CostMicros != h.CostMicros) {
			out = append(out, fmt.Sprintf("spend %s: rollup %d units %d micros, runs %d units %d micros",
				k, h.SpentUnits, h.CostMicros, w.SpentUnits, w.CostMicros))
		}
	}
	for k, w := range want {
		out = append(out, fmt.Sprintf("spend %s: rollup 0 units 0 micros, runs %d units %d micros", k, w.SpentUnits, w.CostMicros))
	}
	slices.Sort(out)
	return out
}
