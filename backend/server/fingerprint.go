package server

import (
	"cmp"
	"slices"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/gate"
	"github.com/quotagate/quotagate/backend/quota"
	"github.com/quotagate/quotagate/backend/upstream/balance"
)

// fingerprint is the digest of the definitions gateways sharing a ledger
// must agree on (config.Fingerprint), taken over the effective values: a
// gate or quota key the file leaves out counts as its package's default.
// So a key written out as its default does not set two gateways apart, and
// the digest stays the one that builds which filled the config before
// hashing it recorded in the shared ledger.
func fingerprint(cfg *config.Config) string {
	c := *cfg
	c.Upstreams = slices.Clone(cfg.Upstreams)
	for i := range c.Upstreams {
		u := &c.Upstreams[i]
		u.MaxConcurrent = cmp.Or(u.MaxConcurrent, gate.DefaultMaxConcurrent)
		u.Queue.MaxWaiters = cmp.Or(u.Queue.MaxWaiters, gate.DefaultMaxWaiters)
		u.Queue.MaxWait = cmp.Or(u.Queue.MaxWait, gate.DefaultMaxWait)
		if u.Quota != nil {
			u.Quota = effectiveQuota(*u.Quota)
		}
	}
	return c.Fingerprint()
}

// effectiveQuota is q with the keys left out set to the guard's defaults.
func effectiveQuota(q config.Quota) *config.Quota {
	d := quota.DefaultOptions()
	q.DailyCap = cmp.Or(q.DailyCap, d.DailyCap)
	q.SmallBuffer = cmp.Or(q.SmallBuffer, d.SmallBuffer)
	q.UsageWall = cmp.Or(q.UsageWall, d.UsageWall)
	q.BalanceWall = cmp.Or(q.BalanceWall, d.BalanceWall)
	q.Timezone = cmp.Or(q.Timezone, d.Timezone)
	q.SyncEvery = cmp.Or(q.SyncEvery, d.SyncEvery)
	q.SyncEveryLow = cmp.Or(q.SyncEveryLow, d.SyncEveryLow)
	q.BurstSync = cmp.Or(q.BurstSync, d.BurstSync)
	q.LowBalance = cmp.Or(q.LowBalance, d.LowBalance)
	q.Lag = cmp.Or(q.Lag, d.DefaultLag)
	q.MinLag = cmp.Or(q.MinLag, d.MinLag)
	q.MaxLag = cmp.Or(q.MaxLag, d.MaxLag)
	q.ExpiryHorizon = cmp.Or(q.ExpiryHorizon, d.ExpiryHorizon)
	q.TopUp.At = cmp.Or(q.TopUp.At, time.Time{}.Add(d.TopUp.At).Format("15:04"))
	q.Balance.Kind = cmp.Or(q.Balance.Kind, balance.KindManual)
	return &q
}
