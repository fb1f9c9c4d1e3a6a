package quota

import "github.com/quotagate/quotagate/backend/ledger"

// Headroom is where the margin of a guarded model's day goes, in the
// guard's own figures: how far below the estimated pool the ledger admits
// today's calls (Gap = Pool − Admit), and which term holds back how much.
// The terms Lag … Overrun add up to Gap while there is room left today
// (once usage has reached the limit, Gap holds the usage beyond it too);
// Wall is beside them, since the
// usage wall evicts on settled usage rather than lowering the admit limit.
// It is what the Quota tab shows an operator whose call was refused.
type Headroom struct {
	// Pool is the estimated pool: min(cap, what the latest reading alone
	// says B0 is).
	Pool ledger.Units `json:"pool"`
	// Admit is what today's calls are admitted up to (AdmitLimit).
	Admit ledger.Units `json:"admit"`
	Gap   ledger.Units `json:"gap"`
	// Lag: the smallest of the day's readings' estimates, held until a
	// settled reading, below the latest reading's (a longer lag or a stall
	// on one reading, the part of a refund that consumption between two
	// readings hid).
	Lag ledger.Units `json:"lag"`
	// Expiry: units of packages expiring within the horizon.
	Expiry ledger.Units `json:"expiry"`
	// Buffer: the small buffer, or with a listing the settlement residue.
	Buffer ledger.Units `json:"buffer"`
	// Skew: the cap room the provider's skewed day may already hold.
	Skew ledger.Units `json:"skew"`
	// Carry: yesterday's runs settled since 00:00, and their holds at k.
	Carry ledger.Units `json:"carry"`
	// Overrun: the tail held back once, and today's holds and reserves
	// counted at k rather than 1.
	Overrun ledger.Units `json:"overrun"`
	// Wall: the limit above the usage wall, which evicts first.
	Wall ledger.Units `json:"wall"`
}

// Headroom breaks the gap between the estimated pool and AdmitLimit(usage)
// down by term, each taken in the order the guard applies it and clamped
// to what is left, so that the terms add up to the gap.
func (a *Assessment) Headroom(o Options, usage ledger.Units) Headroom {
	if !a.B0.Known {
		return Headroom{}
	}
	h := Headroom{Pool: clamp(min(o.DailyCap, max(a.B0.Latest, a.B0.Units))), Admit: a.AdmitLimit(usage)}
	h.Gap = clamp(h.Pool - h.Admit)
	left := h.Gap
	take := func(u ledger.Units) ledger.Units {
		u = min(clamp(u), left)
		left -= u
		return u
	}
	// Limit = min(cap, B0 − expiry − buffer): what each term takes below
	// the pool is what it takes below the cap.
	b0 := min(o.DailyCap, a.B0.Units)
	h.Lag = take(h.Pool - b0)
	h.Expiry = take(b0 - min(o.DailyCap, a.B0.Units-a.ExpiringUnits))
	h.Buffer = take(min(o.DailyCap, a.B0.Units-a.ExpiringUnits) - a.Limit)
	h.Skew = take(a.Limit - min(a.Limit, a.capRoom()))
	k := ledger.Units(max(a.OverrunMilli, noOverrun))
	h.Carry = take(a.Carry.Settled + mulMilli(a.Carry.Held, k))
	room := clamp(min(a.Limit, a.capRoom()) - usage - a.Carry.Settled - a.OverrunTail - mulMilli(a.Carry.Held, k))
	h.Overrun = take(a.OverrunTail + room - (h.Admit - min(h.Admit, usage)))
	h.Wall = clamp(a.Limit - Wall(o, a.Limit))
	return h
}
