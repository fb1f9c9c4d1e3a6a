package ledger

import (
	"fmt"

	"github.com/quotagate/quotagate/backend/price"
)

// ArchiveSummary is what the ledger keeps of one tenant's runs of one
// budget period (Period "" for a tenant that never renews) that were
// archived with one month: enough for Verify to prove the balances
// without them, and for `verify --archive` to prove the file is what was
// archived.
type ArchiveSummary struct {
	Month string `json:"month"` // 2025-11: the UTC month the runs ended in
	// Part is which of the month's transactions moved the runs: a month
	// leaves the ledger a few thousand runs at a time, so that no
	// admission waits for more than one such commit.
	Part     int64  `json:"part,omitempty"`
	TenantID string `json:"tenant"`
	Period   string `json:"period,omitempty"`
	Runs     int64  `json:"runs"`
	Rows     int64  `json:"rows"` // audit rows
	// SpentUnits and SpentMicros are what the runs spent (none held: a run
	// that holds is never archived).
	SpentUnits  Units        `json:"spent_units"`
	SpentMicros price.Micros `json:"spent_micros"`
	// Net is what the archived balance rows moved available by in their
	// chain, added up (after − before); Settled what their settle and
	// reconcile rows carried. Verify adds them to the rows that remain.
	Net     Units `json:"net_units"`
	Settled Units `json:"settled_units"`
	// FirstSeq and LastSeq bound the archived audit rows: a break in the
	// chain of what remains is explained only inside them.
	FirstSeq int64  `json:"first_seq"`
	LastSeq  int64  `json:"last_seq"`
	Hash     string `json:"hash"` // SHA-256 over the archived rows' hashes, in file order
}

// Digest is the summary as one line of text: what its audit row records,
// so that an edited summary no longer matches the append-only audit log.
func (s ArchiveSummary) Digest() string {
	month := s.Month
	if s.Part > 0 {
		month = fmt.Sprintf("%s part %d", s.Month, s.Part) // part 0 reads as a month archived whole did
	}
	return fmt.Sprintf("month %s period %q: %d runs, %d audit rows, spent %d units %d micros, net %d settled %d, seq %d..%d, sha256 %s",
		month, s.Period, s.Runs, s.Rows, s.SpentUnits, int64(s.SpentMicros), s.Net, s.Settled, s.FirstSeq, s.LastSeq, s.Hash)
}

// ArchivedQuota is what a guarded model's day lost to archiving: the usage
// of its archived runs (none held).
type ArchivedQuota struct {
	Month    string `json:"month"`
	Upstream string `json:"upstream"`
	Model    string `json:"model"`
	Day      string `json:"day"`
	Usage    Units  `json:"usage_units"`
}

// archived is the summaries of one chain, for the replay.
type archived struct {
	summaries []ArchiveSummary
	net       Units // added up over summaries
	settled   Units
	gaps      Units // the breaks in the remaining chain they explained so far
}

// Archived tells the replay of s: a break in its chain inside s's seqs is
// the archived rows' doing, and the chain ends s.Net and s.Settled further
// on than the rows that remain say.
func (v *Verification) Archived(s ArchiveSummary) {
	v.init()
	k := chainKey{s.TenantID, s.Period}
	a := v.archive[k]
	if a == nil {
		a = &archived{}
		v.archive[k] = a
	}
	a.summaries = append(a.summaries, s)
	a.net += s.Net
	a.settled += s.Settled
}

// explainGap reports whether a break of gap units in chain k, between the
// rows at seqs prev and next, lies inside archived rows, and counts it.
func (v *Verification) explainGap(k chainKey, prev, next int64, gap Units) bool {
	a := v.archive[k]
	if a == nil {
		return false
	}
	for _, s := range a.summaries {
		if s.FirstSeq < next && s.LastSeq > prev {
			a.gaps += gap
			return true
		}
	}
	return false
}

// archivedTail is what the archived rows of chain k moved that no break
// in the remaining rows showed: rows archived after the last that
// remains. lead says rows were archived before the first that remains,
// which a loose chain start swallowed.
func (v *Verification) archivedTail(k chainKey, first int64) (tail, settled Units, lead bool) {
	a := v.archive[k]
	if a == nil {
		return 0, 0, false
	}
	for _, s := range a.summaries {
		lead = lead || s.FirstSeq < first
	}
	return a.net - a.gaps, a.settled, lead
}

// ArchiveDigest reports a summary whose audit row records another digest
// (or none): the summary was edited after it was written.
func (v *Verification) ArchiveDigest(s ArchiveSummary, seq int64, recorded string) {
	if recorded != s.Digest() {
		v.Addf("archive summary %s of tenant %s%s differs from its audit row %d: %q, recorded %q",
			s.Month, s.TenantID, periodSuffix(s.Period), seq, s.Digest(), recorded)
	}
}

// ArchivedMonth is what archiving (or restoring) one month moved.
type ArchivedMonth struct {
	Month     string           `json:"month"`
	File      string           `json:"file"`
	Runs      int64            `json:"runs"`
	Rows      int64            `json:"rows"` // audit rows
	Summaries []ArchiveSummary `json:"summaries"`
}
