package sim

import (
	"sort"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/quota"
)

const packageLife = 30 * 24 * time.Hour

type pkg struct {
	left    ledger.Units
	granted time.Time
	expires time.Time
	hist    []balancePoint // left after each change
}

func (k *pkg) set(at time.Time, left ledger.Units) {
	k.left = left
	k.hist = append(k.hist, balancePoint{at, left})
}

// leftBefore is the package's remaining units as of just before t.
func (k *pkg) leftBefore(t time.Time) ledger.Units {
	i := sort.Search(len(k.hist), func(i int) bool { return !k.hist[i].at.Before(t) })
	if i == 0 {
		return 0
	}
	return k.hist[i-1].bal
}

type balancePoint struct {
	at  time.Time
	bal ledger.Units
}

// provider is the free quota of one model at the provider.
type provider struct {
	pkgs    []*pkg // live packages, oldest grant first: consumption order
	all     []*pkg // every package ever granted (the lagged listing needs the gone ones)
	billed  ledger.Units
	expired ledger.Units
	hist    []balancePoint // true free balance after each change, in time order
	settle  time.Time      // the balance API reflects the true balance as of here
}

func (p *provider) balance() ledger.Units {
	var b ledger.Units
	for _, k := range p.pkgs {
		b += k.left
	}
	return b
}

func (p *provider) record(at time.Time) {
	p.hist = append(p.hist, balancePoint{at, p.balance()})
}

func (p *provider) add(k *pkg) {
	p.pkgs = append(p.pkgs, k)
	p.all = append(p.all, k)
}

func (p *provider) grant(at time.Time, units ledger.Units) {
	if units <= 0 {
		return
	}
	k := &pkg{granted: at, expires: at.Add(packageLife)}
	k.set(at, units)
	p.add(k)
	sort.SliceStable(p.pkgs, func(i, j int) bool { return p.pkgs[i].granted.Before(p.pkgs[j].granted) })
	p.record(at)
}

// expire drops every package whose life ended by now.
func (p *provider) expire(now time.Time) {
	kept := p.pkgs[:0]
	changed := false
	for _, k := range p.pkgs {
		if !k.expires.After(now) {
			p.expired += k.left
			changed = changed || k.left > 0
			k.set(now, 0)
			continue
		}
		kept = append(kept, k)
	}
	p.pkgs = kept
	if changed {
		p.record(now)
	}
}

// consume takes units from the oldest packages first; what the free balance
// cannot cover is billed. It returns the billed part.
func (p *provider) consume(now time.Time, units ledger.Units) ledger.Units {
	rest := units
	for i := range p.pkgs {
		if rest == 0 {
			break
		}
		take := min(rest, p.pkgs[i].left)
		if take > 0 {
			p.pkgs[i].set(now, p.pkgs[i].left-take)
		}
		rest -= take
	}
	kept := p.pkgs[:0]
	for _, k := range p.pkgs {
		if k.left > 0 {
			kept = append(kept, k)
		}
	}
	p.pkgs = kept
	p.billed += rest
	p.record(now)
	return rest
}

// apiBalance is what the balance API answers: the true balance as of the
// settle point (strictly before it).
func (p *provider) apiBalance() ledger.Units {
	i := sort.Search(len(p.hist), func(i int) bool { return !p.hist[i].at.Before(p.settle) })
	if i == 0 {
		return 0
	}
	return p.hist[i-1].bal
}

// apiExpiries is the package listing's expiries as the lagged API shows them:
// packages live at the listing's settle point (at or before the balance's),
// with their units as of then.
func (p *provider) apiExpiries(settle time.Time) []quota.Expiry {
	var out []quota.Expiry
	for _, k := range p.all {
		if !k.granted.Before(settle) || !k.expires.After(settle) {
			continue
		}
		if u := k.leftBefore(settle); u > 0 {
			out = append(out, quota.Expiry{At: k.expires, Units: u})
		}
	}
	return out
}
