package ledger

import (
	"errors"
	"time"
)

// Lease defaults of gateways sharing one ledger (the postgres store): a
// gateway renews its lease every DefaultHeartbeat; one not renewed for
// DefaultLeaseExpiry is dead, and another ends its runs interrupted (slots
// freed, money held). The expiry is four heartbeats, so that one late
// heartbeat does not end a live gateway's runs. The config's ledger block
// is checked against them and the store applies them.
const (
	DefaultHeartbeat   = 5 * time.Second
	DefaultLeaseExpiry = 20 * time.Second
)

// AuditLateEnd records the end a gateway decided for a run after another
// gateway had already ended it because the first one's lease expired (it
// was cut off from the ledger, not dead). The end is not applied — the run
// ends once, interrupted with its hold kept — but its usage and evidence
// are kept on the row (Units, Evidence, Detail) for the operator who
// reconciles the hold. The row moves no balance.
const AuditLateEnd AuditKind = "late_end"

// ErrLateEnd is in the chain of the error a store answers to such a late
// end (beside a CodeRunEnded *Error): the end was kept as evidence, so it
// must not be retried, and it was not written as an end either.
var ErrLateEnd = errors.New("another gateway ended the run while this gateway's lease had lapsed; this end is kept as evidence on the hold, not applied")

// LeaseActor is the actor of a late end: the gateway instance that was cut off.
func LeaseActor(instance string) Actor { return System("instance " + instance) }
