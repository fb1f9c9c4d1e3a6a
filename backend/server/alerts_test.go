package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/alert"
	"github.com/quotagate/quotagate/backend/ledger"
)

const alertsYAML = `meter: utf8-bytes-v1
tenants:
  - id: team
    key: ${QG_TEST_TEAM_KEY}
    budget_units: 100
upstreams: [{name: demo, kind: demo, models: [demo-chat]}]
alerts:
  thresholds: [5]
  webhook: {url: '%s/hook', secret: whsec-server-test}
`

// A call that takes a tenant past a threshold is a signed webhook and an
// audit row; the admin state shows the webhook without its secret.
func TestAlertsWebhook(t *testing.T) {
	bodies := make(chan []byte, 10)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if !alert.Verify("whsec-server-test", b, r.Header.Get(alert.SignatureHeader)) {
			t.Errorf("unsigned or badly signed: %s", b)
		}
		bodies <- b
	}))
	defer hook.Close()
	s, _ := openFile(t, fmt.Sprintf(alertsYAML, hook.URL))
	if resp, b := do(t, "POST", s.URL()+"/v1/chat/completions", teamKey, smallChat); resp.StatusCode != 200 {
		t.Fatalf("call: %d %s", resp.StatusCode, b)
	}
	var got map[string]any
	select {
	case b := <-bodies:
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook within 10s")
	}
	if got["kind"] != "threshold" || got["tenant"] != "team" || got["threshold"] != 5.0 || got["budget"] != "100" {
		t.Fatalf("webhook %v", got)
	}
	rows, err := s.Store().Audit(t.Context(), ledger.AuditFilter{TenantID: "team"})
	if err != nil {
		t.Fatal(err)
	}
	var alerts int
	for _, e := range rows {
		if e.Kind == ledger.AuditAlert && e.Actor == ledger.ActorAlerts && e.Reason == "threshold" {
			alerts++
		}
	}
	if alerts != 1 {
		t.Fatalf("%d alert audit rows, want 1: %+v", alerts, rows)
	}
	resp, b := do(t, "GET", s.URL()+"/admin/api/state", s.AdminToken(), "")
	if resp.StatusCode != 200 || strings.Contains(string(b), "whsec-server-test") {
		t.Fatalf("state: %d, shows the secret: %v", resp.StatusCode, strings.Contains(string(b), "whsec-server-test"))
	}
	var st struct {
		Alerts *alert.Status `json:"alerts"`
	}
	if err := json.Unmarshal(b, &st); err != nil || st.Alerts == nil || st.Alerts.Webhook == nil {
		t.Fatalf("state alerts: %s, %v", b, err)
	}
	if w := st.Alerts.Webhook; w.URL != hook.URL+"/hook" || !w.SecretSet || fmt.Sprint(st.Alerts.Thresholds) != "[5]" {
		t.Fatalf("state alerts %+v webhook %+v", st.Alerts, w)
	}
}
