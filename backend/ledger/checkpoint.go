package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"time"
)

// VerifyOptions says how much of the history a verify replays.
type VerifyOptions struct {
	// Full replays every audit row from the first, and compares the last
	// checkpoint with where the replay stood at its seq; without it the
	// replay starts from the last checkpoint.
	Full bool
	// Checkpoint writes where a clean replay ended, for the next verify to
	// start from.
	Checkpoint bool
}

// Checkpoint is where a clean verify left every chain of audit rows: the
// next verify replays only the rows after Seq, starting from these states,
// so that its cost follows what was written since rather than the whole
// history.
type Checkpoint struct {
	Seq    int64        `json:"seq"` // the last audit seq the replay had read
	At     time.Time    `json:"at"`
	Chains []ChainState `json:"chains"`
	// Runs is the sums over the runs that had ended, for a store whose
	// verify counts only the runs written after (nil: it counts them all).
	Runs *RunsCheckpoint `json:"runs,omitempty"`
}

// ChainState is where one chain (a tenant's rows, or one of its periods')
// stood: what was available after its last row, what its settle and
// reconcile rows added up to, and a hash over every row replayed into it,
// so that a full replay can tell the checkpoint from the books.
type ChainState struct {
	Tenant    string `json:"tenant"`
	Period    string `json:"period,omitempty"`
	Available Units  `json:"available"`
	Spent     Units  `json:"spent"`
	Loose     bool   `json:"loose,omitempty"`
	LastSeq   int64  `json:"last_seq"`
	Hash      string `json:"hash"`
}

// Resume starts the replay from cp: its chains as they stood, with the
// rows after cp.Seq still to come.
func (v *Verification) Resume(cp Checkpoint) {
	v.init()
	v.resumed = cp.Seq
	for _, c := range cp.Chains {
		st := &chainState{last: c.Available, spent: c.Spent, loose: c.Loose, lastSeq: c.LastSeq}
		if h, err := hex.DecodeString(c.Hash); err == nil && len(h) == len(st.hash) {
			copy(st.hash[:], h)
		} else {
			v.Addf("checkpoint at seq %d: tenant %s period %q has no readable hash", cp.Seq, c.Tenant, c.Period)
		}
		v.chain[chainKey{c.Tenant, c.Period}] = st
	}
}

// Start has the replay start from cp (found says there is one) unless
// full, where the replay starts from the first row and compares cp as it
// passes its seq. It returns the seq the replay starts after and what cp
// kept of the runs (nil: every run is added up).
func (v *Verification) Start(cp Checkpoint, found, full bool) (after int64, runs *RunsCheckpoint) {
	switch {
	case found && !full:
		v.Resume(cp)
		return cp.Seq, cp.Runs
	case found:
		v.Expect(cp)
	}
	return 0, nil
}

// Expect has a full replay compare each chain with cp when it passes
// cp.Seq (or ends before it): a checkpoint that disagrees with the books
// is reported.
func (v *Verification) Expect(cp Checkpoint) {
	v.init()
	v.expect = &cp
}

// Checkpoint is where the replay stands after reading every row up to seq.
func (v *Verification) Checkpoint(seq int64, at time.Time) Checkpoint {
	cp := Checkpoint{Seq: seq, At: at}
	keys := map[chainKey]bool{}
	for k := range v.chain {
		keys[k] = true
	}
	for k := range v.archive {
		keys[k] = true
	}
	// Each chain as it ends with its archived rows counted in: the rows
	// after seq follow on from there.
	for k := range keys {
		st, known, _ := v.ended(k)
		st.loose = st.loose || !known
		cp.Chains = append(cp.Chains, st.export(k))
	}
	sort.Slice(cp.Chains, func(i, j int) bool {
		a, b := cp.Chains[i], cp.Chains[j]
		return a.Tenant < b.Tenant || a.Tenant == b.Tenant && a.Period < b.Period
	})
	return cp
}

// Resumed is the seq of the checkpoint the replay started from (0: the
// first row).
func (v *Verification) Resumed() int64 { return v.resumed }

// Replayed is how many audit rows the replay read.
func (v *Verification) Replayed() int { return v.replayed }

func (st *chainState) export(k chainKey) ChainState {
	return ChainState{Tenant: k.tenant, Period: k.period, Available: st.last, Spent: st.spent,
		Loose: st.loose, LastSeq: st.lastSeq, Hash: hex.EncodeToString(st.hash[:])}
}

// chainHash extends a chain's hash with one replayed row.
func chainHash(prev [sha256.Size]byte, seq int64, kind AuditKind, units, before, after Units) [sha256.Size]byte {
	var buf [sha256.Size + 4*8]byte
	copy(buf[:], prev[:])
	binary.BigEndian.PutUint64(buf[sha256.Size:], uint64(seq))
	binary.BigEndian.PutUint64(buf[sha256.Size+8:], uint64(units))
	binary.BigEndian.PutUint64(buf[sha256.Size+16:], uint64(before))
	binary.BigEndian.PutUint64(buf[sha256.Size+24:], uint64(after))
	h := sha256.New()
	h.Write(buf[:])
	h.Write([]byte(kind))
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// passCheckpoint compares chain k with the expected checkpoint once the
// replay is past its seq.
func (v *Verification) passCheckpoint(k chainKey, st *chainState) {
	if v.expect == nil || st.compared {
		return
	}
	st.compared = true
	// The checkpoint counted the archived rows in (they all precede it:
	// archiving drops the checkpoints, or sets them aside).
	ended, _, _ := v.ended(k)
	got := ended.export(k)
	for _, want := range v.expect.Chains {
		if want.Tenant == k.tenant && want.Period == k.period {
			v.compareChain(k, want, got)
			return
		}
	}
	if got.LastSeq <= v.expect.Seq && got.LastSeq > 0 {
		v.Addf("checkpoint at seq %d: tenant %s%s is missing from it", v.expect.Seq, k.tenant, periodSuffix(k.period))
	}
}

// endCheckpoint compares the chains the replay never passed the
// checkpoint in, and reports the checkpoint's chains it never met.
func (v *Verification) endCheckpoint() {
	if v.expect == nil {
		return
	}
	for k, st := range v.chain {
		v.passCheckpoint(k, st)
	}
	for _, want := range v.expect.Chains {
		k := chainKey{want.Tenant, want.Period}
		if _, ok := v.chain[k]; ok {
			continue
		}
		// A chain whose every row was archived stands on its summaries.
		if ended, _, found := v.ended(k); found {
			v.compareChain(k, want, ended.export(k))
			continue
		}
		v.Addf("checkpoint at seq %d: tenant %s%s has no audit row", v.expect.Seq, want.Tenant, periodSuffix(want.Period))
	}
	v.expect = nil
}

// compareChain reports chain k standing at got where the expected
// checkpoint says want.
func (v *Verification) compareChain(k chainKey, want, got ChainState) {
	if want.Available != got.Available || want.Spent != got.Spent || want.Hash != got.Hash {
		v.Addf("checkpoint at seq %d: tenant %s%s stood at available %d spent %d (hash %.12s) but the audit rows give %d, %d (hash %.12s)",
			v.expect.Seq, k.tenant, periodSuffix(k.period), want.Available, want.Spent, want.Hash,
			got.Available, got.Spent, got.Hash)
	}
}

func periodSuffix(period string) string {
	if period == "" {
		return ""
	}
	return fmt.Sprintf(" period %s", period)
}

// CheckpointVerifier is a Store whose verify can start from a checkpoint.
type CheckpointVerifier interface {
	VerifyWith(ctx context.Context, opts VerifyOptions) ([]string, error)
}
