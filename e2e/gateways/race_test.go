package gateways_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// TestRaceAcrossGateways: three gateways on one PostgreSQL, 200 clients
// racing across them for tenant b (budget 1,000, reserve 102 each): exactly
// 9 admitted (918 held), 191 refused insufficient_budget, the provider sees
// exactly 9 requests; then tenant c (max_concurrent 1) gets exactly one run
// among 30 racing clients. After cancelling, the shared ledger verifies.
func TestRaceAcrossGateways(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	d, err := demo.Start(demo.Options{APIKey: "sk-provider"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	gws := startGateways(t, 3, dsn, d.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	t0 := time.Now()
	answers := race(ctx, gws, 200, keyB, chatBody("/demo kind=stall", 86))
	elapsed := time.Since(t0)
	admitted, perGateway := 0, map[string]int{}
	for _, a := range answers {
		switch {
		case a.status == http.StatusOK:
			admitted++
			perGateway[a.gw.name]++
		case a.status == http.StatusPaymentRequired && a.code == ledger.CodeInsufficientBudget:
		default:
			t.Errorf("%s: unexpected answer %d %s", a.gw.name, a.status, a.code)
		}
	}
	t.Logf("200 clients over 3 gateways: %d admitted %v, %d refused, all answered in %v", admitted, perGateway, 200-admitted, elapsed)
	if admitted != 9 {
		t.Fatalf("admitted %d, want exactly 9 (1000 / 102)", admitted)
	}
	if err := d.WaitRequests(ctx, 9); err != nil {
		t.Fatal(err)
	}
	if n := d.Stats().Received; n != 9 {
		t.Fatalf("provider received %d requests, want exactly the 9 admitted", n)
	}
	for _, gw := range gws { // every gateway sees the shared balance
		status, body := do(t, "GET", gw.url+"/v1/balance", keyB)
		var b ledger.Balance
		json.Unmarshal([]byte(body), &b)
		if status != 200 || b.HeldUnits != 918 || b.AvailableUnits != 82 || b.Active != 9 {
			t.Fatalf("%s: balance %d %s, want 918 held, 82 available, 9 active", gw.name, status, body)
		}
	}
	cancelAll(t, answers)

	answers = race(ctx, gws, 30, keyC, chatBody("/demo kind=stall", 86))
	admitted = 0
	for _, a := range answers {
		switch {
		case a.status == http.StatusOK:
			admitted++
		case a.status == http.StatusTooManyRequests && a.code == ledger.CodeConcurrencyLimit:
		default:
			t.Errorf("%s: unexpected answer %d %s", a.gw.name, a.status, a.code)
		}
	}
	if admitted != 1 {
		t.Fatalf("max_concurrent 1 across three gateways admitted %d", admitted)
	}
	cancelAll(t, answers)

	problems, err := postgres.Verify(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error("verify:", p)
	}
}

// cancelAll cancels every admitted run on the gateway that admitted it.
func cancelAll(t *testing.T, answers []answer) {
	t.Helper()
	for _, a := range answers {
		if a.resp == nil {
			continue
		}
		key := keyB
		if status, body := do(t, "DELETE", a.gw.url+"/v1/runs/"+a.runID, key); status != http.StatusAccepted {
			// tenant c's run
			if status, body2 := do(t, "DELETE", a.gw.url+"/v1/runs/"+a.runID, keyC); status != http.StatusAccepted {
				t.Errorf("cancel %s on %s: %s / %d %s", a.runID, a.gw.name, body, status, body2)
			}
		}
		a.resp.Body.Close()
	}
}
