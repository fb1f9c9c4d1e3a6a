//go:build linux

package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/alert"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/notify/notifytest"
	"github.com/quotagate/quotagate/backend/price"
)

// renewalSecret signs the webhook's bodies.
const renewalSecret = "e2e-renewal-webhook-secret"

// monthly renews on the 1st in Kiritimati, UTC+14.
var monthly = calendar{period: "month", zone: "Pacific/Kiritimati",
	next:  func(t time.Time) time.Time { return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, t.Location()) },
	label: func(t time.Time) string { return t.Format("2006-01") }}

// TestRenewalMonthAlerts is the renewing budget end to end: a tenant with
// budget "5.00" and budget_period month in Kiritimati (UTC+14), alerted at
// 80 % by a signed webhook to a receiver in this test. Spending past 80 %
// fires exactly one threshold alert (signature verified, an audit row of
// kind alert); a run held before the month's end stays in the old month
// after it; the new month starts with nothing spent and admits the whole
// budget.
func TestRenewalMonthAlerts(t *testing.T) {
	hook := newHookReceiver(t, renewalSecret)
	desktop := notifytest.Start(t) // the gateway's desktop session: a notification server that records
	r := startRenewal(t, monthly, fmt.Sprintf("alerts:\n  thresholds: [80]\n  webhook: {url: %q, secret: %q}\n", hook.url, renewalSecret),
		"DBUS_SESSION_BUS_ADDRESS="+desktop.Addr)
	for range 4 {
		r.spend(90) // 0.90 each: 3.60, 72 %
	}
	r.spend(90) // 4.50, 90 %: past 80 %
	crossed := hook.wait(alert.KindThreshold)
	if crossed.Tenant != "team" || crossed.Threshold != 80 || crossed.Period != r.oldPeriod || crossed.Budget != "5.00" || crossed.Currency != "USD" {
		t.Fatalf("threshold alert %+v, want team's 80 %% of 5.00 USD in %s", crossed, r.oldPeriod)
	}
	if used, err := price.ParseMicros(crossed.Used); err != nil || used < 4_000_000 || used > renewalBudget {
		t.Fatalf("threshold alert's used %q (%v), want past 80 %% of 5.00", crossed.Used, err)
	}
	// The same warning on the desktop, before the webhook was sent.
	if n := desktop.Next(t, renewalLead); n.Summary != "team has used 80% of its budget" || !strings.Contains(n.Body, r.oldPeriod) {
		t.Fatalf("desktop notification %q / %q, want team's 80 %% in %s", n.Summary, n.Body, r.oldPeriod)
	}
	held := r.hold(40) // 4.90 used
	if a := hook.wait(alert.KindHold); a.Run != held.ID || a.Period != r.oldPeriod {
		t.Fatalf("hold alert %+v, want run %s in %s", a, held.ID, r.oldPeriod)
	}
	r.fullBudget(402)
	r.beforeBoundary("spending past 80 %")
	closing := r.balance()

	r.cross(held)
	rows := r.alertRows()
	if n := countThresholds(rows, r.boundary); n != 1 {
		t.Fatalf("threshold rows of kind alert written before %s ended: %d, want exactly 1\n%+v", r.oldPeriod, n, rows)
	}
	// Every audited alert reaches the receiver; the 80 % of the old month
	// reached it once.
	hook.waitCount(len(rows))
	if n := hook.count(alert.KindThreshold, r.oldPeriod); n != 1 {
		t.Fatalf("webhooks for the 80 %% of %s: %d, want exactly 1", r.oldPeriod, n)
	}
	t.Logf("figures: %s closed with %s spent and %s held of 5.00 (the 80 %% alert said used %s); its hold was reconciled at 0.20 after %v, in %s; %s admitted a 5.00 reserve",
		r.oldPeriod, closing.SpentMicros, closing.HeldMicros, crossed.Used, r.boundary, r.oldPeriod, r.newPeriod)
	for _, a := range hook.all() {
		t.Logf("webhook: %s %s threshold %d period %s used %s of %s %s at %v run %s", a.Kind, a.Tenant, a.Threshold, a.Period, a.Used, a.Budget, a.Currency, a.At, a.Run)
	}
}

// alertRows are the audit rows of kind alert of the tenant team.
func (r *renewal) alertRows() []ledger.AuditEntry {
	r.t.Helper()
	var page struct {
		Rows []ledger.AuditEntry `json:"rows"`
	}
	r.getJSON("/admin/api/audit?tenant=team&kind=alert&limit=500", renewalAdmin, &page)
	return page.Rows
}

// countThresholds counts the threshold alerts among rows (an alert row's
// reason is the alert's kind) written before end, on the gateway's clock.
func countThresholds(rows []ledger.AuditEntry, end time.Time) int {
	n := 0
	for _, e := range rows {
		if e.Kind == ledger.AuditAlert && e.Reason == string(alert.KindThreshold) && e.At.Before(end) {
			n++
		}
	}
	return n
}
