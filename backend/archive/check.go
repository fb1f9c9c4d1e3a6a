package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Check re-reads the archive at path against the summaries the ledger
// keeps of its month (want) and returns its header, one line per
// difference — a row whose content no longer has its hash is named, and
// so is every summary the rows no longer add up to — and the parts of the
// file the ledger keeps no summary of at all (pending: their runs were
// never moved, as when archiving stopped part way). An error is a file
// that cannot be read to its end.
func Check(path string, want []ledger.ArchiveSummary) (h Header, problems []string, pending []int64, err error) {
	done := map[int64]bool{}
	for _, w := range want {
		done[w.Part] = true
	}
	var got []ledger.ArchiveSummary
	h, err = ReadParts(path, func(p Part) error {
		problems = append(problems, p.Altered...)
		if done[p.Index] {
			got = append(got, p.Summaries...)
		} else {
			pending = append(pending, p.Index)
		}
		return nil
	})
	return h, append(problems, Compare(got, want)...), pending, err
}

// Compare returns one line per summary of the file (got) that differs from
// the ledger's (want), or that only one side has.
func Compare(got, want []ledger.ArchiveSummary) []string {
	var problems []string
	ledgerHas := map[key]ledger.ArchiveSummary{}
	for _, w := range want {
		ledgerHas[key{w.TenantID, w.Period, w.Part}] = w
	}
	for _, g := range got {
		k := key{g.TenantID, g.Period, g.Part}
		w, ok := ledgerHas[k]
		delete(ledgerHas, k)
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("tenant %s period %q%s: the archive holds rows of it, the ledger no summary (%s)",
				g.TenantID, g.Period, partSuffix(g.Part), g.Digest()))
		case w.Digest() != g.Digest():
			problems = append(problems, fmt.Sprintf("tenant %s period %q%s: the archive's rows add up to %s; the ledger's summary says %s",
				g.TenantID, g.Period, partSuffix(g.Part), g.Digest(), w.Digest()))
		}
	}
	rest := make([]ledger.ArchiveSummary, 0, len(ledgerHas))
	for _, w := range ledgerHas {
		rest = append(rest, w)
	}
	SortSummaries(rest)
	for _, w := range rest {
		problems = append(problems, fmt.Sprintf("tenant %s period %q%s: the ledger's summary (%s) has no rows in the archive",
			w.TenantID, w.Period, partSuffix(w.Part), w.Digest()))
	}
	return problems
}

func partSuffix(part int64) string {
	if part == 0 {
		return ""
	}
	return fmt.Sprintf(" part %d", part)
}

func hexHash(h [sha256.Size]byte) string { return hex.EncodeToString(h[:]) }
