package gateways_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/backend/sqlite"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// BenchmarkAdmit measures admissions per second of each ledger in the same
// run: parallel clients each admitting a run and settling it (the two
// writes every call makes), SQLite (group commit, synchronous=FULL) against
// PostgreSQL (the test cluster: loopback TCP, fsync off — see the README
// for what that leaves out).
func BenchmarkAdmit(b *testing.B) {
	ctx := context.Background()
	open := map[string]func(b *testing.B) ledger.Store{
		"sqlite": func(b *testing.B) ledger.Store {
			st, err := sqlite.Open(filepath.Join(b.TempDir(), "ledger.db"), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			return st
		},
		"postgres": func(b *testing.B) ledger.Store {
			st, err := postgres.Open(ctx, pgtest.DSN(b), postgres.Options{Instance: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			return st
		},
	}
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			st := open[name](b)
			defer st.Close()
			if err := st.ApplyTenants(ctx, []ledger.Tenant{{ID: "t", BudgetUnits: ledger.MaxUnits, MaxConcurrent: 1 << 20}}, ledger.System("bench")); err != nil {
				b.Fatal(err)
			}
			b.SetParallelism(8)
			b.ResetTimer()
			t0 := time.Now()
			var n int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := ledger.RunID(fmt.Sprintf("r-%d", time.Now().UnixNano()))
					if _, err := st.Admit(ctx, ledger.AdmitRequest{RunID: id, TenantID: "t", Upstream: "u", Model: "m", ReserveUnits: 10}); err != nil {
						b.Error(err)
						return
					}
					if _, err := st.Settle(ctx, id, 7, "bench", ledger.System("test")); err != nil {
						b.Error(err)
						return
					}
				}
			})
			n = int64(b.N)
			b.ReportMetric(float64(n)/time.Since(t0).Seconds(), "admissions/s")
		})
	}
}

// BenchmarkTTFB measures the time to first byte that the gateway adds to a
// streaming call — through quotagate minus straight to the demo upstream,
// alternated request by request — with each ledger, in the same run.
func BenchmarkTTFB(b *testing.B) {
	d, err := demo.Start(demo.Options{APIKey: "sk-provider"})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	for _, driver := range []string{"sqlite", "postgres"} {
		b.Run(driver, func(b *testing.B) {
			ledgerYAML := "ledger: {driver: sqlite}"
			if driver == "postgres" {
				ledgerYAML = fmt.Sprintf("ledger: {driver: postgres, dsn: %q, instance: bench}", pgtest.NewDatabase(b))
			}
			yaml := fmt.Sprintf(`
meter: utf8-bytes-v1
admin_token: %q
tenants: [{id: a, key: %q, budget_units: 100000000000, max_concurrent: 200}]
upstreams: [{name: up, kind: openai, base_url: %q, api_key: sk-provider, models: [demo-chat], max_concurrent: 200}]
%s
`, adminToken, keyA, d.URL(), ledgerYAML)
			cfg, err := config.Parse([]byte(yaml), os.LookupEnv)
			if err != nil {
				b.Fatal(err)
			}
			s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: b.TempDir(), Addr: "127.0.0.1:0"})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			body := chatBody("hello", 16)
			added := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				direct := ttfb(b, d.URL()+"/chat/completions", "sk-provider", body)
				via := ttfb(b, s.URL()+"/v1/chat/completions", keyA, body)
				added = append(added, via-direct)
			}
			b.StopTimer()
			slices.Sort(added)
			b.ReportMetric(float64(added[len(added)/2].Microseconds()), "added-p50-µs")
			b.ReportMetric(float64(added[len(added)*99/100].Microseconds()), "added-p99-µs")
		})
	}
}

// ttfb posts body and returns the time until the first byte of the
// response body, then drains it.
func ttfb(b *testing.B, url, key, body string) time.Duration {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var one [1]byte
	if _, err := io.ReadFull(resp.Body, one[:]); err != nil || resp.StatusCode != 200 {
		b.Fatalf("%s: %d %v", url, resp.StatusCode, err)
	}
	d := time.Since(t0)
	io.Copy(io.Discard, resp.Body)
	return d
}
