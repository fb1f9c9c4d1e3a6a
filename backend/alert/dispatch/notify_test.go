//go:build linux || freebsd || openbsd || netbsd || dragonfly

package dispatch_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/quotagate/quotagate/backend/alert"
	"github.com/quotagate/quotagate/backend/alert/dispatch"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/notify"
	"github.com/quotagate/quotagate/backend/notify/notifytest"
)

// TestNotifiedWithoutWebhook: without a webhook an alert is still an
// audit row and a desktop notification, and nothing waits in the outbox.
func TestNotifiedWithoutWebhook(t *testing.T) {
	srv := notifytest.Start(t)
	n := notify.New(srv.Addr)
	t.Cleanup(func() { n.Close() })
	g := start(t, filepath.Join(t.TempDir(), "ledger.db"), dispatch.Options{Thresholds: alert.Thresholds{50}, Notifier: n, Currency: "USD"})
	ledgertest.MustApply(t, g.store, ledgertest.Tenant("acme", 1000, 5))
	ledgertest.MustAdmit(t, g.store, ledger.AdmitRequest{RunID: "r1", TenantID: "acme", ReserveUnits: 600})
	call := srv.Next(t, wait)
	if call.Summary != "acme has used 50% of its budget" || call.Body != "50% of the units budget reached: 600 of 1000" {
		t.Fatalf("notification %q / %q", call.Summary, call.Body)
	}
	st, err := g.store.OutboxStatus(context.Background())
	if err != nil || st.Pending != 0 {
		t.Fatalf("outbox %+v, %v: nothing to deliver without a webhook", st, err)
	}
	status, err := g.d.Status(context.Background())
	if err != nil || !status.Notifies || status.Webhook != nil {
		t.Fatalf("status %+v, %v: want notifies and no webhook", status, err)
	}
}
