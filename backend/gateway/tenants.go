package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// tenantCache is the tenant list key checks read: re-read from the ledger
// every DefaultTenantRefresh. While the ledger cannot be read (a database
// restarting, a dropped network) keys are checked against the last list
// read — a key revoked meanwhile is refused once the list can be read
// again — and the calls go on to the admission, which the ledger refuses
// 503 ledger_unavailable on its own if it is still away.
type tenantCache struct {
	mu      sync.Mutex
	list    []ledger.Tenant
	at      time.Time // when list was read
	triedAt time.Time // the last read that failed: reads are not retried within tenantRetry
	failing bool      // the last read failed (logged once per outage)
}

// tenantRetry spaces the reads of a ledger that failed to answer, and
// tenantReadTimeout bounds one: a flood of calls during an outage must not
// become a flood of reads, nor hang on one.
const (
	tenantRetry       = time.Second
	tenantReadTimeout = 5 * time.Second
)

func (c *tenantCache) invalidate() {
	c.mu.Lock()
	c.at, c.triedAt = time.Time{}, time.Time{}
	c.mu.Unlock()
}

// load returns the tenant list, re-read by read when it is older than
// DefaultTenantRefresh or when force (a key not in it: it may be new). A
// read that fails falls back to the last list, unless force or there is
// none: the key's tenant cannot be known, and the call is refused 503.
func (c *tenantCache) load(ctx context.Context, force bool, read func(context.Context) ([]ledger.Tenant, error), log *slog.Logger) ([]ledger.Tenant, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.list != nil && !force && time.Since(c.at) < DefaultTenantRefresh {
		return c.list, nil
	}
	if force && time.Since(c.at) < 100*time.Millisecond {
		return c.list, nil // a flood of bad keys must not become a flood of reads
	}
	if c.failing && time.Since(c.triedAt) < tenantRetry {
		return c.fallback(force, nil)
	}
	rctx, cancel := context.WithTimeout(ctx, tenantReadTimeout)
	defer cancel()
	ts, err := read(rctx)
	if err != nil {
		if !c.failing {
			log.Warn("gateway: cannot read the tenants from the ledger; checking keys against the last list read", "err", err)
		}
		c.failing, c.triedAt = true, time.Now()
		return c.fallback(force, err)
	}
	if c.failing {
		log.Info("gateway: the tenants are read from the ledger again")
	}
	c.list, c.at, c.failing = ts, time.Now(), false
	return ts, nil
}

// fallback is the answer while reads fail: the last list, or the refusal
// of a call whose key cannot be checked.
func (c *tenantCache) fallback(force bool, err error) ([]ledger.Tenant, error) {
	if c.list != nil && !force {
		return c.list, nil
	}
	why := "the ledger did not answer"
	if err != nil {
		why = err.Error()
	}
	return nil, fmt.Errorf("read tenants: %s: %w", why, &ledger.Error{Code: ledger.CodeLedgerUnavailable, RetryAfter: time.Second,
		Message: "quotagate cannot check this key against its ledger just now; nothing was charged or sent — try again shortly"})
}
