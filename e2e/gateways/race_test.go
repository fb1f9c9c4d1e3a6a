package gateways_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// TestRaceAcrossGateways: three gateways on one PostgreSQL, 200 clients
// racing across them for tenant b (budget 1,000, reserve 102 each): exactly
// 9 admitted (918 held), 191 refused insufficient_budget, the provider sees
// exactly 9 requests; then tenant c (max_concurrent 1) gets exactly one run
// among 30 racing clients. After cancelling, the shared ledger verifies.
func TestRaceAcrossGateways(t *testing.T) {
	t.Setenv(envLease, "30s")
	dsn := pgtest.NewDatabase(t)
	d, err := demo.Start(demo.Options{APIKey: "sk-provider", Models: []string{"demo-chat", "demo-guarded"}})
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

	// The guarded model: each gateway's guard is given the day's starting
	// balance (limit = min(cap 1000, b0 1001 − buffer 1) = 1000); 200
	// clients of tenant a race across the three for it.
	for _, gw := range gws {
		if status, body := do(t, "POST", gw.url+"/admin/api/quota/gup/demo-guarded/balance", adminToken, `{"b0":1001}`); status != 200 {
			t.Fatalf("%s: set b0: %d %s", gw.name, status, body)
		}
	}
	answers = race(ctx, gws, 200, keyA, chatBodyFor("demo-guarded", "/demo kind=stall", 86))
	admitted = 0
	for _, a := range answers {
		switch {
		case a.status == http.StatusOK:
			admitted++
		case a.status == http.StatusTooManyRequests && a.code == ledger.CodeQuotaGuard:
		default:
			t.Errorf("%s: unexpected answer %d %s", a.gw.name, a.status, a.code)
		}
	}
	st, err := postgres.Open(ctx, dsn, postgres.Options{Instance: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	u, err := st.QuotaUsage(ctx, "gup", "demo-guarded", time.Now().UTC().Format(time.DateOnly))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guarded model, limit 1000, 200 clients over 3 gateways: %d admitted, held in flight %d", admitted, u.HeldInFlight)
	if admitted != 9 || u.HeldInFlight != 918 || u.UsageUnits+u.HeldInFlight > 1000 {
		t.Fatalf("guarded model: %d admitted, quota day %+v; want 9 admitted, 918 held ≤ limit 1000", admitted, u)
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
		// The operator's cancel, which every tenant's run answers to.
		if status, body := do(t, "POST", a.gw.url+"/admin/api/runs/"+a.runID+"/cancel", adminToken); status != http.StatusAccepted {
			t.Errorf("cancel %s on %s: %d %s", a.runID, a.gw.name, status, body)
		}
		a.resp.Body.Close()
	}
}

// TestVerifyConfigured is `quotagate verify` on a PostgreSQL config: a
// clean shared ledger verifies; an unreachable database is an error (the
// command exits 1), and the message carries no password.
func TestVerifyConfigured(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	st, err := postgres.Open(ctx, dsn, postgres.Options{Instance: "test"})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, tc := range []struct {
		name, dsn string
		ok        bool
	}{
		{"Reachable", dsn, true},
		{"Unreachable", "postgres://quotagate:pw-never-shown@127.0.0.1:1/quotagate?sslmode=disable&connect_timeout=2", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Ledger = config.Ledger{Driver: config.DriverPostgres, DSN: tc.dsn}
			problems, err := server.Verify(ctx, server.Options{Config: cfg, DataDir: t.TempDir()})
			if tc.ok && (err != nil || len(problems) > 0) {
				t.Fatalf("verify: %v %v", problems, err)
			}
			if !tc.ok && (err == nil || strings.Contains(err.Error(), "pw-never-shown")) {
				t.Fatalf("verify of an unreachable database: err = %v, want an error without the password", err)
			}
		})
	}
}

// TestSharedLedgerNeedsKeys: a tenant without a configured key cannot join
// a shared ledger (each gateway would generate its own and revoke the others').
func TestSharedLedgerNeedsKeys(t *testing.T) {
	cfg := config.Default() // tenant local, its key generated per data dir
	cfg.Ledger = config.Ledger{Driver: config.DriverPostgres, DSN: pgtest.NewDatabase(t), Instance: "solo",
		Heartbeat: time.Second, LeaseExpiry: 3 * time.Second}
	s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: t.TempDir(), Addr: "127.0.0.1:0"})
	if err == nil {
		s.Close()
		t.Fatal("a keyless tenant joined a shared ledger")
	}
	if !strings.Contains(err.Error(), "tenant local has no key in the config") {
		t.Fatalf("err = %v", err)
	}
}
