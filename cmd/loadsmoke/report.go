package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// Report sums up one run.
type Report struct {
	Users, CallsPerUser int
	Calls               int
	Wall                time.Duration
	StatusMix           map[string]int // final outcome → count: "200", "200-incomplete", "429 upstream_busy", …
	Attempts            int
	Retried             int // calls that needed at least one retry
	First429            int // calls whose first attempt got 429
	Final429            int
	Final5xx            int // calls whose final answer was 5xx
	Any5xx              int // attempts answered 5xx, retried or not
	Transport           int // calls that ended on a transport error
	Incomplete          int // 200s that did not end with [DONE] (error event or cut)
	TTFB50, TTFB95      time.Duration
	Total50, Total95    time.Duration
	RSS                 RSS
	GateBefore          []GateState
	GateAfter           []GateState
}

// Summarize builds a Report from the calls of one run.
func Summarize(users, perUser int, calls []Call, wall time.Duration) Report {
	r := Report{Users: users, CallsPerUser: perUser, Calls: len(calls), Wall: wall, StatusMix: map[string]int{}}
	var ttfb, total []time.Duration
	for _, c := range calls {
		r.Attempts += c.Attempts
		if c.Attempts > 1 {
			r.Retried++
		}
		if len(c.Statuses) > 0 && c.Statuses[0] == 429 {
			r.First429++
		}
		for _, s := range c.Statuses {
			if s >= 500 {
				r.Any5xx++
			}
		}
		key := fmt.Sprint(c.Final)
		switch {
		case c.Final == 0:
			r.Transport++
			key = "transport-error"
		case c.Final == 200 && !c.Complete:
			r.Incomplete++
			key = "200-incomplete " + c.StreamErr
		case c.Final == 429:
			r.Final429++
		case c.Final >= 500:
			r.Final5xx++
		}
		if c.Final != 200 && c.Code != "" {
			key += " " + c.Code
		}
		r.StatusMix[key]++
		if c.Final == 200 {
			ttfb = append(ttfb, c.TTFB)
			total = append(total, c.Total)
		}
	}
	r.TTFB50, r.TTFB95 = percentile(ttfb, 50), percentile(ttfb, 95)
	r.Total50, r.Total95 = percentile(total, 50), percentile(total, 95)
	return r
}

// percentile is the nearest-rank p-th percentile; 0 for no samples.
func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100
	return s[max(rank, 1)-1]
}

// Final429Share is the share of calls whose final answer was 429.
func (r Report) Final429Share() float64 {
	if r.Calls == 0 {
		return 0
	}
	return float64(r.Final429) / float64(r.Calls)
}

// Verdict checks seed 003's pass line (for 10 users): final 429 ≤ 2 %, no
// 5xx, first byte p95 ≤ 15 s, whole call p95 ≤ 90 s, gateway memory < 1.5 GB.
// It returns the failed conditions.
func (r Report) Verdict() []string {
	var fails []string
	if r.Final429Share() > 0.02 {
		fails = append(fails, fmt.Sprintf("final 429 %.1f %% > 2 %%", 100*r.Final429Share()))
	}
	if r.Any5xx > 0 {
		fails = append(fails, fmt.Sprintf("%d 5xx answers", r.Any5xx))
	}
	if r.Transport > 0 {
		fails = append(fails, fmt.Sprintf("%d transport errors", r.Transport))
	}
	if r.TTFB95 > 15*time.Second {
		fails = append(fails, fmt.Sprintf("first byte p95 %v > 15 s", r.TTFB95))
	}
	if r.Total95 > 90*time.Second {
		fails = append(fails, fmt.Sprintf("whole call p95 %v > 90 s", r.Total95))
	}
	if r.RSS.PeakKB > 1536*1024 {
		fails = append(fails, fmt.Sprintf("gateway peak RSS %d MiB ≥ 1.5 GiB", r.RSS.PeakKB/1024))
	}
	if r.Calls == 0 {
		fails = append(fails, "no calls completed")
	}
	return fails
}

// Write prints the report for a person.
func (r Report) Write(w io.Writer) {
	fmt.Fprintf(w, "users %d × %d calls = %d calls in %v (%d attempts, %d calls retried, %d first-attempt 429s)\n",
		r.Users, r.CallsPerUser, r.Calls, r.Wall.Round(time.Millisecond), r.Attempts, r.Retried, r.First429)
	fmt.Fprintf(w, "status mix      %s\n", r.mix("%s: %d"))
	fmt.Fprintf(w, "first byte      p50 %v  p95 %v\n", r.TTFB50.Round(time.Millisecond), r.TTFB95.Round(time.Millisecond))
	fmt.Fprintf(w, "whole call      p50 %v  p95 %v\n", r.Total50.Round(time.Millisecond), r.Total95.Round(time.Millisecond))
	fmt.Fprintf(w, "final 429       %d (%.1f %%)   5xx answers %d   transport errors %d   incomplete streams %d\n",
		r.Final429, 100*r.Final429Share(), r.Any5xx, r.Transport, r.Incomplete)
	if r.RSS.PID > 0 {
		fmt.Fprintf(w, "gateway RSS     pid %d  start %d MiB  peak %d MiB  end %d MiB (%s)\n",
			r.RSS.PID, r.RSS.StartKB/1024, r.RSS.PeakKB/1024, r.RSS.EndKB/1024, r.RSS.Source)
	} else {
		fmt.Fprintf(w, "gateway RSS     not measured (%s)\n", r.RSS.Source)
	}
	for i, g := range r.GateAfter {
		var b GateState
		if i < len(r.GateBefore) {
			b = r.GateBefore[i]
		}
		fmt.Fprintf(w, "gate %-10s admitted %d  rejected(full) %d  timed_out %d  wait_p95 %d ms\n",
			g.Upstream, g.Admitted-b.Admitted, g.Rejected-b.Rejected, g.TimedOut-b.TimedOut, g.WaitP95MS)
	}
	if fails := r.Verdict(); len(fails) == 0 {
		fmt.Fprintln(w, "seed 003 pass line: PASS")
	} else {
		fmt.Fprintf(w, "seed 003 pass line: FAIL (%s)\n", strings.Join(fails, "; "))
	}
}

// mix is the status mix in status order, each entry formatted with format
// (status, count), joined by commas.
func (r Report) mix(format string) string {
	keys := make([]string, 0, len(r.StatusMix))
	for k := range r.StatusMix {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf(format, k, r.StatusMix[k]))
	}
	return strings.Join(parts, ", ")
}

// MarkdownRow is one line of the table in docs/bench/traffic.md.
func (r Report) MarkdownRow() string {
	verdict := "PASS"
	if len(r.Verdict()) > 0 {
		verdict = "FAIL"
	}
	return fmt.Sprintf("| %d | %d | %s | %v / %v | %v | %.1f %% (%d) | %d | %d MiB | %s |",
		r.Users, r.Calls, r.mix("%s×%d"),
		r.TTFB50.Round(100*time.Millisecond), r.TTFB95.Round(100*time.Millisecond), r.Total95.Round(100*time.Millisecond),
		100*r.Final429Share(), r.Final429, r.Any5xx, r.RSS.PeakKB/1024, verdict)
}
