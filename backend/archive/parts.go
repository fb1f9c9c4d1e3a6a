package archive

import (
	"errors"
	"fmt"
	"io"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Part is what one transaction of the ledger moves: its runs and their
// audit rows as the file holds them, and what they add up to.
type Part struct {
	Index     int64
	Records   []Record // the runs, then their audit rows (by seq)
	RunIDs    []string // the part's runs
	Runs      int64
	Rows      int64 // audit rows
	Summaries []ledger.ArchiveSummary
	Quota     []ledger.ArchivedQuota
	// Altered names each row whose content no longer has the hash it was
	// archived with, or that does not fit its part.
	Altered []string
}

// ReadParts reads the archive at path and calls fn with each part in file
// order, holding one part's rows at a time. It returns the file's header
// (a file that cannot be read to its end is an error).
func ReadParts(path string, fn func(Part) error) (Header, error) {
	r, err := Open(path)
	if err != nil {
		return Header{}, err
	}
	defer r.Close()
	var p *Part
	var z *Summarizer
	flush := func() error {
		if p == nil {
			return nil
		}
		p.Summaries, p.Quota = z.Summaries()
		return fn(*p)
	}
	for {
		rec, line, err := r.Next()
		if errors.Is(err, io.EOF) {
			return r.Header, flush()
		}
		if err != nil {
			return r.Header, err
		}
		if p == nil || rec.Part != p.Index {
			if p != nil && rec.Part < p.Index {
				return r.Header, fmt.Errorf("archive line %d: part %d after part %d: the file's parts are out of order", line, rec.Part, p.Index)
			}
			if err := flush(); err != nil {
				return r.Header, err
			}
			p, z = &Part{Index: rec.Part}, NewSummarizer(r.Header.Month)
		}
		if err := p.add(z, rec, line); err != nil {
			return r.Header, err
		}
	}
}

// add counts rec, read at line, into p.
func (p *Part) add(z *Summarizer, rec Record, line int) error {
	h, _, err := RowHash(rec.Table, rec.Row)
	if err != nil {
		return fmt.Errorf("archive line %d: %w", line, err)
	}
	if hexHash(h) != rec.Hash {
		p.Altered = append(p.Altered, fmt.Sprintf("line %d: %s was altered: its content no longer has the hash it was archived with",
			line, Describe(rec.Table, rec.Row)))
	}
	if err := z.Add(rec.Part, rec.Table, rec.Row, h); err != nil {
		p.Altered = append(p.Altered, fmt.Sprintf("line %d: %v", line, err))
	}
	if rec.Table == TableRuns {
		p.RunIDs = append(p.RunIDs, str(rec.Row, "id"))
		p.Runs++
	} else {
		p.Rows++
	}
	p.Records = append(p.Records, rec)
	return nil
}
