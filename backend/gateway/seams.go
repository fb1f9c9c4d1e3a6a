package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream"
)

// Upstream is one OpenAI-compatible provider as the gateway uses it.
// *upstream.Client satisfies it. Retries of an upstream 429/503 before any
// output are the gateway's own (Options.Retry), not the Upstream's.
type Upstream interface {
	Name() string
	Serves(model string) bool
	Models() []string
	// Send posts the chat-completions body. An error that is (or wraps) an
	// *upstream.SendError with Sent == false proves the provider did no work.
	Send(ctx context.Context, body []byte, header http.Header) (*upstream.Response, error)
}

// RateLimiter refuses a tenant's call before anything is reserved
// (seed 003: per-minute and per-hour windows). *ratelimit.Limiter satisfies it.
type RateLimiter interface {
	Allow(tenantID string) (retryAfter time.Duration, ok bool)
}

// Gate is the per-upstream concurrency limit with a bounded FIFO wait queue.
// Enter never blocks: it takes a slot, or a place in the queue, or refuses
// with CodeUpstreamBusy (and a Retry-After). Use FromGates for *gate.Gates.
type Gate interface {
	Enter(upstream string) (GateTicket, error)
}

// GateTicket is one call's place at a gate. Exactly one of Wait (until it
// returns) or Abandon ends it.
type GateTicket interface {
	// Queued reports that the call waits for a slot; its run is admitted
	// with status queued and started when Wait returns.
	Queued() bool
	// Wait blocks until the call holds a slot and returns the function that
	// gives it back; CodeUpstreamBusy after the queue's max wait, or an error
	// wrapping ctx.Err().
	Wait(ctx context.Context) (release func(), err error)
	// Abandon gives up the place or slot without using it.
	Abandon()
}

// QuotaGuard guards a provider's daily quota (seed 002). It is consulted
// before any token counting: an error (CodeQuotaGuard, with Retry-After)
// refuses at once; a nil check means the model is not guarded. Admit then
// enforces the returned check atomically with the tenant's budget. What
// follows a guarded run's changes (the guard's Observe) is the ledger's
// commit hook's job (ledger.Store.OnCommit), wired by the server.
type QuotaGuard interface {
	Check(upstream, model string) (*ledger.QuotaCheck, error)
}
