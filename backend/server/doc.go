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
// # Wiring still to come
//
// The ledger is SQLite (<data>/ledger.db) unless Options.OpenStore says
// otherwise. Parts written in parallel plug in through Options hooks: Gateway
// (the /v1 handler), Canceller and Quota (admin actions) and QuotaState (the
// quota guard's rows in the snapshot). Until a hook is set, its endpoints
// answer 501 and the snapshot leaves its rows empty.
package server
