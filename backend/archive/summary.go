package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"sort"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

type key struct {
	tenant, period string
	part           int64
}

type quotaKey struct{ upstream, model, day string }

type sumState struct {
	s ledger.ArchiveSummary
	h hash.Hash
}

// Summarizer adds up the rows of one month's archive, in file order, into
// the summaries the ledger keeps of them.
type Summarizer struct {
	month  string
	part   int64
	runKey map[string]key // of the part's runs
	sums   map[key]*sumState
	quota  map[quotaKey]ledger.Units
}

// NewSummarizer starts the summaries of month.
func NewSummarizer(month string) *Summarizer {
	return &Summarizer{month: month, runKey: map[string]key{}, sums: map[key]*sumState{},
		quota: map[quotaKey]ledger.Units{}}
}

// Add counts one row of part whose hash is h. A run comes before its
// audit rows, in the same part.
func (z *Summarizer) Add(part int64, table string, row Row, h [sha256.Size]byte) error {
	if part != z.part {
		z.part, z.runKey = part, map[string]key{}
	}
	switch table {
	case TableRuns:
		k := key{str(row, "tenant_id"), str(row, "period"), part}
		id := str(row, "id")
		z.runKey[id] = k
		st := z.state(k)
		st.s.Runs++
		st.s.SpentUnits += ledger.Units(num(row, "spent_units"))
		st.s.SpentMicros += price.Micros(num(row, "cost_micros"))
		if day := str(row, "quota_day"); day != "" {
			z.quota[quotaKey{str(row, "upstream"), str(row, "model"), day}] +=
				ledger.Units(num(row, "spent_units") + num(row, "overrun_units"))
		}
		st.h.Write(h[:])
	case TableAudit:
		run := str(row, "run_id")
		k, ok := z.runKey[run]
		if !ok {
			return fmt.Errorf("%s belongs to run %q, which comes before it in no line of its part", Describe(table, row), run)
		}
		if own := (key{str(row, "tenant_id"), str(row, "period"), part}); own != k {
			return fmt.Errorf("%s is in the books of tenant %s period %q, its run in tenant %s period %q",
				Describe(table, row), own.tenant, own.period, k.tenant, k.period)
		}
		st := z.state(k)
		seq := num(row, "seq")
		if st.s.Rows == 0 || seq < st.s.FirstSeq {
			st.s.FirstSeq = seq
		}
		st.s.LastSeq = max(st.s.LastSeq, seq)
		st.s.Rows++
		if num(row, "balance") == 1 {
			st.s.Net += ledger.Units(num(row, "available_after") - num(row, "available_before"))
			if kind := ledger.AuditKind(str(row, "kind")); kind == ledger.AuditSettle || kind == ledger.AuditReconcile {
				st.s.Settled += ledger.Units(num(row, "units"))
			}
		}
		st.h.Write(h[:])
	default:
		return fmt.Errorf("an archive holds runs and audit rows, not %q", table)
	}
	return nil
}

func (z *Summarizer) state(k key) *sumState {
	st := z.sums[k]
	if st == nil {
		st = &sumState{s: ledger.ArchiveSummary{Month: z.month, Part: k.part, TenantID: k.tenant, Period: k.period},
			h: sha256.New()}
		z.sums[k] = st
	}
	return st
}

// Summaries are the month's summaries, by tenant, period and part, and what
// each guarded model's day lost, by upstream, model and day.
func (z *Summarizer) Summaries() ([]ledger.ArchiveSummary, []ledger.ArchivedQuota) {
	out := make([]ledger.ArchiveSummary, 0, len(z.sums))
	for _, st := range z.sums {
		s := st.s
		s.Hash = hex.EncodeToString(st.h.Sum(nil))
		out = append(out, s)
	}
	SortSummaries(out)
	quota := make([]ledger.ArchivedQuota, 0, len(z.quota))
	for k, u := range z.quota {
		quota = append(quota, ledger.ArchivedQuota{Month: z.month, Upstream: k.upstream, Model: k.model, Day: k.day, Usage: u})
	}
	sort.Slice(quota, func(i, j int) bool {
		a, b := quota[i], quota[j]
		return a.Upstream < b.Upstream || a.Upstream == b.Upstream && (a.Model < b.Model || a.Model == b.Model && a.Day < b.Day)
	})
	return out, quota
}

// SortSummaries orders summaries by part, tenant and period.
func SortSummaries(sums []ledger.ArchiveSummary) {
	sort.Slice(sums, func(i, j int) bool {
		a, b := sums[i], sums[j]
		if a.Part != b.Part {
			return a.Part < b.Part
		}
		return a.TenantID < b.TenantID || a.TenantID == b.TenantID && a.Period < b.Period
	})
}

// Describe names a row for a person: "run r1", "audit row 12 (settle of run r1)".
func Describe(table string, row Row) string {
	if table == TableRuns {
		return fmt.Sprintf("run %s", str(row, "id"))
	}
	return fmt.Sprintf("audit row %d (%s of run %s)", num(row, "seq"), str(row, "kind"), str(row, "run_id"))
}

func str(row Row, col string) string {
	s, _ := row[col].(string)
	return s
}

func num(row Row, col string) int64 {
	n, _ := row[col].(int64)
	return n
}
