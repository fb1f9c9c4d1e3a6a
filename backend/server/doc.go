// Package server assembles quotagate: it opens the data dir, the admin token
// and the ledger, builds the gates, the live hub and the admin API, and serves
// them with the dashboard on one loopback HTTP listener. Both front doors use
// it — the Wails window (from OnStartup) and `quotagate serve` — and so do the
// end-to-end tests.
//
// # Security
//
// The listener binds loopback only. Every request first passes the Host
// check (exact loopback names with our port: DNS rebinding), then the admin
// API applies its Origin policy and token (see package admin).
//
// # Wiring
//
// Open has one wiring path. The ledger is SQLite (<data>/ledger.db). Its
// commit hook (commit.go) is the one path after every ledger write: each
// committed transaction reaches the live hub once (live.KindLedger, with its
// []ledger.Change) and, for a guarded model's quota day, the quota guard's
// Observe. The assembly (assemble.go) builds the /v1 gateway from the config:
// the meter, the upstreams (the demo upstream on its own loopback listener),
// per-tenant rate limits, the per-upstream gates, and the quota guards with
// their balance sources; the guard's sync loop runs until Close.
package server
