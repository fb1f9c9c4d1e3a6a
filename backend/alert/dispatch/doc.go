// Package dispatch runs budget alerts in a gateway: it watches what the
// ledger commits, records an alert in the ledger's outbox when a tenant's
// use reaches a threshold of its budget, a run ends held, or a guarded
// model is evicted or restored, shows each on the desktop, and delivers
// them to the webhook.
//
// # Off the admission path
//
// The commit hook only queues what it was told (Dispatcher.Committed never
// waits), so an admission never waits on reading a balance, recording an
// alert or a webhook. One goroutine turns the queue into alerts; another
// delivers them.
//
// # Once, durably
//
// An alert's outbox key is what it is about — a tenant, a threshold, a
// period and a budget kind; a run; an audit row — so racing commits,
// gateways sharing a ledger and a restart record it once. The outbox keeps
// it until the webhook answers 2xx: a tenant's alerts go out one at a
// time in the order they were recorded, a failed one after a backoff kept
// in the ledger, so a restart resumes the schedule.
package dispatch
