// Package alert holds the pure parts of budget alerts: which thresholds a
// change of a tenant's use crosses, the webhook's body and its signature,
// which URLs may receive it, and how long to wait before retrying a
// delivery, and the status the dashboard shows. The outbox that makes an
// alert durable lives in the ledger, the loop that records, notifies and
// delivers in alert/dispatch; everything here is arithmetic and encoding they share, so that the
// sender, the tests and a receiver agree on every byte.
//
// # Once per tenant, threshold and period
//
// Crossed answers the thresholds one admission or settlement carries a
// tenant over, from its use before to its use after, in exact integers.
// A burst of racing calls that together cross 80 % each see their own
// before and after, and exactly one of them sees 80 % crossed, provided the
// store computes before and after in the same atomic step that changes the
// use. The store still keys the outbox by (tenant, threshold, period), so a
// threshold crossed again after a reconcile lowered the use, or crossed on
// both the units and the money budget, fires once.
//
// # A repeat is the same alert
//
// Delivery is at least once, so a receiver may see an alert twice. Body
// renders an Alert deterministically, and the outbox keeps the bytes it
// rendered, so a retry after a restart sends the same body with the same
// signature, byte for byte.
package alert
