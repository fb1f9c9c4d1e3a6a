package ledger

import "time"

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
