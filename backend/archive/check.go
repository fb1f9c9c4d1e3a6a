package archive

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Check re-reads the archive at path against the summaries the ledger
// keeps of its month (want) and returns its header and one line per
// difference: a row whose content no longer has its hash is named, and so
// is every summary the rows no longer add up to. An error is a file that
// cannot be read to its end.
func Check(path string, want []ledger.ArchiveSummary) (Header, []string, error) {
	r, err := Open(path)
	if err != nil {
		return Header{}, nil, err
	}
	defer r.Close()
	z := NewSummarizer(r.Header.Month)
	var problems []string
	for {
		rec, line, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return r.Header, problems, err
		}
		h, _, err := RowHash(rec.Table, rec.Row)
		if err != nil {
			return r.Header, problems, fmt.Errorf("archive line %d: %w", line, err)
		}
		if hex.EncodeToString(h[:]) != rec.Hash {
			problems = append(problems, fmt.Sprintf("line %d: %s was altered: its content no longer has the hash it was archived with",
				line, Describe(rec.Table, rec.Row)))
		}
		if err := z.Add(rec.Table, rec.Row, h); err != nil {
			problems = append(problems, fmt.Sprintf("line %d: %v", line, err))
		}
	}
	got, _ := z.Summaries()
	return r.Header, append(problems, Compare(got, want)...), nil
}

// Compare returns one line per summary of the file (got) that differs from
// the ledger's (want), or that only one side has.
func Compare(got, want []ledger.ArchiveSummary) []string {
	var problems []string
	ledgerHas := map[key]ledger.ArchiveSummary{}
	for _, w := range want {
		ledgerHas[key{w.TenantID, w.Period}] = w
	}
	for _, g := range got {
		k := key{g.TenantID, g.Period}
		w, ok := ledgerHas[k]
		delete(ledgerHas, k)
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("tenant %s period %q: the archive holds rows of it, the ledger no summary (%s)",
				g.TenantID, g.Period, g.Digest()))
		case w.Digest() != g.Digest():
			problems = append(problems, fmt.Sprintf("tenant %s period %q: the archive's rows add up to %s; the ledger's summary says %s",
				g.TenantID, g.Period, g.Digest(), w.Digest()))
		}
	}
	for _, w := range ledgerHas {
		problems = append(problems, fmt.Sprintf("tenant %s period %q: the ledger's summary (%s) has no rows in the archive",
			w.TenantID, w.Period, w.Digest()))
	}
	return problems
}
