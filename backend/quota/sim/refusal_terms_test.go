package sim

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/quota"
)

// refusalTerm is one term of quotagate's admit rule, taken away in
// isolation: would the call then have been admitted?
type refusalTerm struct {
	name string
	drop func(x *refusalCase)
}

// refusalCase is one refused call and the guard's position when it came.
type refusalCase struct {
	a          quota.Assessment
	held, res  ledger.Units
	holdsCost  ledger.Units // what today's calls in flight will really cost
	cost       ledger.Units // what the refused call would have cost
	truePool   ledger.Units // the true B0: pool at 00:00 + refunds − expired
	dailyLimit ledger.Units
}

func refusalTerms() []refusalTerm {
	residue := func(x *refusalCase) { x.a.Limit = min(x.a.Limit+x.a.Buffer, x.dailyLimit, x.truePool) }
	atCost := func(x *refusalCase) { x.held, x.res = x.holdsCost, x.cost }
	return []refusalTerm{
		{"B0 estimate (lag, sync timing): the true pool", func(x *refusalCase) { x.a.B0.Units = x.truePool }},
		{"expiry horizon", func(x *refusalCase) { x.a.Expiring = nil }},
		{"buffer or residue", residue},
		{"skew", func(x *refusalCase) { x.a.DailyCap = 0 }},
		{"carry", func(x *refusalCase) { x.a.Carry = quota.Carry{} }},
		{"overrun (k and tail)", func(x *refusalCase) { x.a.OverrunMilli, x.a.OverrunTail = 0, 0 }},
		{"holds in flight at their true cost", func(x *refusalCase) { x.held = x.holdsCost }},
		{"the call's reserve at its true cost", func(x *refusalCase) { x.res = x.cost }},
		{"reserves at cost (both)", atCost},
		{"reserves at cost + no residue", func(x *refusalCase) { atCost(x); residue(x) }},
	}
}

// admits reports whether the guard admits the case with term t taken away.
func (x refusalCase) admits(o quota.Options, now time.Time, usage ledger.Units, t refusalTerm) bool {
	t.drop(&x)
	x.a.At(o, now, usage) // the limit again, from what the term left
	t.drop(&x)            // and the term once more, where At sets it

	return usage+x.held+x.res <= x.a.AdmitLimit(usage)
}

// TestRefusalTerms tells, for every call quotagate refused under usual
// conditions while the free pool could have served it, whether a wall had
// evicted the model and which single term of the admit rule, taken away,
// would have admitted it (unsafe counterfactuals: diagnosis only).
// QUOTAGATE_SIM_REFUSALS=<seeds>; Measurement's variables move the options.
func TestRefusalTerms(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("QUOTAGATE_SIM_REFUSALS"))
	if err != nil || n <= 0 {
		t.Skip("set QUOTAGATE_SIM_REFUSALS=<seeds> to break the refusals down by term")
	}
	o, note, err := Measurement(quota.DefaultOptions(), os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	terms := refusalTerms()
	count := map[string]int{}
	admitted := make([]int, len(terms))
	see := func(r *simRun, now time.Time, rq request) {
		if w := r.p.wall(); w != "" {
			count[string(r.pol)+" "+w]++
			return
		}
		count[string(r.pol)+" outside the walls"]++
		g, ok := r.p.(*guard)
		if !ok {
			return
		}
		x := refusalCase{a: g.a, held: g.held, res: rq.reserve, cost: rq.cost, dailyLimit: r.o.DailyCap,
			truePool: r.poolAtMidnight + r.refundOfDay - (r.prov.expired - r.expiredAtMidnight)}
		for _, f := range r.inflight {
			if f.day == r.day {
				x.holdsCost += f.cost
			}
		}
		for i, term := range terms {
			if x.admits(r.o, now, g.usage, term) {
				admitted[i]++
			}
		}
	}
	for i := 1; i <= n; i++ {
		for _, pol := range []Policy{V6, Quotagate} {
			r := newRun(Config{Seed: uint64(i), Days: 30, Options: o}, pol)
			r.refusedWhileFree = see
			r.run()
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d seeds × 30 days, usual conditions, options moved: %q; calls refused while free:\n", n, note)
	for _, pol := range []Policy{Quotagate, V6} {
		for _, w := range []string{quota.ReasonUsageWall, quota.ReasonBalanceWall, "outside the walls"} {
			fmt.Fprintf(&b, "| %s | %s | %d |\n", pol, w, count[string(pol)+" "+w])
		}
	}
	fmt.Fprintf(&b, "quotagate's refusals outside the walls admitted with one term taken away:\n")
	for i, term := range terms {
		fmt.Fprintf(&b, "| %s | %d |\n", term.name, admitted[i])
	}
	t.Log(b.String())
}
