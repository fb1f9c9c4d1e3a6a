package admin_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/ledger"
)

// deleter records the tenants it was asked to delete and refuses "busy".
type deleter struct {
	noTenants
	asked []string
}

func (d *deleter) Delete(_ context.Context, id string) error {
	d.asked = append(d.asked, id)
	if id == "busy" {
		return ledger.Errorf(ledger.CodeConflict, "tenant busy cannot be deleted: 1 run is still active or queued")
	}
	return nil
}

// POST /admin/api/tenants/{id}/delete: a refusal is 409 with the
// deleter's sentence, a delete answers the settings, a page of another
// origin cannot delete (no body, so only the Origin check stands between a
// cross-site form and the tenant), and a build without deletion says so.
func TestTenantDeleteEndpoint(t *testing.T) {
	d := &deleter{}
	f := newFixture(t, func(o *admin.Options) { o.Tenants = d })

	resp := f.do(t, "POST", "/admin/api/tenants/busy/delete", "wails://wails", token, "", "")
	if resp.StatusCode != http.StatusConflict || resp.Header.Get("Access-Control-Allow-Origin") != "wails://wails" {
		t.Fatalf("refused delete: %d, CORS %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	var e struct {
		Error struct{ Message, Code string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Error.Code != "conflict" || !strings.Contains(e.Error.Message, "1 run is still active") {
		t.Fatalf("refusal body %+v %v", e, err)
	}

	resp = f.do(t, "POST", "/admin/api/tenants/team/delete", "", token, "", "")
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "{\"tenants\":[],\"overrides\":[]}\n" {
		t.Fatalf("delete: %d %s", resp.StatusCode, b)
	}

	if resp = f.do(t, "POST", "/admin/api/tenants/team/delete", "https://evil.example", token, "", ""); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site delete: %d, want 403", resp.StatusCode)
	}
	if resp = f.do(t, "POST", "/admin/api/tenants/team/delete", "", "wrong", "", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("delete with a wrong token: %d, want 401", resp.StatusCode)
	}
	if got := strings.Join(d.asked, ","); got != "busy,team" {
		t.Fatalf("deleter asked for %q, want busy,team only", got)
	}

	plain := newFixture(t, nil)
	if resp = plain.do(t, "POST", "/admin/api/tenants/team/delete", "", token, "", ""); resp.StatusCode != http.StatusNotFound || errorCode(t, resp) != "not_found" {
		t.Fatalf("a build without deletion: %d", resp.StatusCode)
	}
}
