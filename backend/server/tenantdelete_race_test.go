package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Many calls race a delete of their tenant: the delete is refused while
// any is in flight, and once it succeeds no call is admitted after it —
// the deleted tenant is left with nothing active and nothing held, and its
// audit trail has no admission after the removal.
func TestDeleteTenantRacesAdmissions(t *testing.T) {
	s, _ := openFile(t, settingsYAML)
	tok := s.AdminToken()
	if resp, b := do(t, "POST", s.URL()+"/admin/api/tenants", tok, `{"id":"bot","budget_units":1000000,"max_concurrent":16}`); resp.StatusCode != 200 {
		t.Fatalf("create bot: %d %s", resp.StatusCode, b)
	}
	key := s.GeneratedKeys()["bot"]
	const callers, calls = 8, 12
	var wg sync.WaitGroup
	status := make(chan int, callers*calls)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				req, _ := http.NewRequest("POST", s.URL()+"/v1/chat/completions", strings.NewReader(smallChat))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				status <- resp.StatusCode
			}
		}()
	}
	refused := 0
	for {
		resp, b := do(t, "POST", s.URL()+"/admin/api/tenants/bot/delete", tok, "")
		if resp.StatusCode == http.StatusOK {
			break
		}
		if resp.StatusCode != http.StatusConflict {
			t.Fatalf("delete: %d %s", resp.StatusCode, b)
		}
		refused++
	}
	wg.Wait()
	close(status)
	seen := map[int]int{}
	for c := range status {
		seen[c]++
	}
	for c := range seen {
		if c != 200 && c != 401 && c != 429 {
			t.Errorf("calls answered %v; want 200, 401 (deleted) or 429 (being deleted) only", seen)
		}
	}
	ctx := context.Background()
	b, err := s.Store().Balance(ctx, "bot")
	if err != nil {
		t.Fatal(err)
	}
	if b.Active != 0 || b.HeldUnits != 0 {
		t.Fatalf("deleted tenant bot: active %d, held %d; want nothing in flight", b.Active, b.HeldUnits)
	}
	rows, err := s.Store().Audit(ctx, ledger.AuditFilter{TenantID: "bot"})
	if err != nil {
		t.Fatal(err)
	}
	var removedAt int64
	for _, r := range rows {
		if r.Kind == ledger.AuditConfig && r.Reason == "tenant no longer configured" {
			removedAt = r.Seq
		}
	}
	if removedAt == 0 {
		t.Fatal("no removal row for bot")
	}
	for _, r := range rows {
		if r.Kind == ledger.AuditAdmit && r.Seq > removedAt {
			t.Errorf("run %s admitted after the delete (audit %d > %d)", r.RunID, r.Seq, removedAt)
		}
	}
	t.Logf("delete refused %d times; calls answered %v", refused, seen)
}
