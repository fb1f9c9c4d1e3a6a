package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/config"
)

func TestLedgerBlock(t *testing.T) {
	env := map[string]string{"QUOTAGATE_PG_DSN": "postgres://qg:s3cret@127.0.0.1:5432/quotagate?sslmode=disable"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		name, yaml string
		want       config.Ledger
		err        string
	}{
		{"DefaultSQLite", ``, config.Ledger{Driver: "sqlite"}, ""},
		{"ExplicitSQLite", "ledger: {driver: sqlite}", config.Ledger{Driver: "sqlite"}, ""},
		{"PostgresURL", "ledger: {driver: postgres, dsn: ${QUOTAGATE_PG_DSN}, instance: gw-a, version: 3}",
			config.Ledger{Driver: "postgres", DSN: env["QUOTAGATE_PG_DSN"], Instance: "gw-a", Version: 3}, ""},
		{"PostgresKeyword", "ledger: {driver: postgres, dsn: 'host=127.0.0.1 port=5432 user=qg dbname=quotagate'}",
			config.Ledger{Driver: "postgres", DSN: "host=127.0.0.1 port=5432 user=qg dbname=quotagate"}, ""},
		{"PostgresSocket", "ledger: {driver: postgres, dsn: 'host=/var/run/postgresql user=qg dbname=quotagate', heartbeat: 1s, lease_expiry: 4s}",
			config.Ledger{Driver: "postgres", DSN: "host=/var/run/postgresql user=qg dbname=quotagate", Heartbeat: time.Second, LeaseExpiry: 4 * time.Second}, ""},
		{"ExpiryTooShort", "ledger: {driver: postgres, dsn: 'host=x', heartbeat: 5s, lease_expiry: 6s}", config.Ledger{}, "at least twice ledger.heartbeat"},
		// Left out, the lease times are the ledger's defaults (the postgres
		// store applies them), and a heartbeat is checked against them.
		{"HeartbeatOverDefaultExpiry", "ledger: {driver: postgres, dsn: 'host=x', heartbeat: 15s}", config.Ledger{}, "lease_expiry 20s: at least twice ledger.heartbeat (15s)"},
		{"PostgresNoDSN", "ledger: {driver: postgres}", config.Ledger{}, "ledger.dsn: the postgres driver needs a DSN"},
		{"SQLiteWithDSN", "ledger: {driver: sqlite, dsn: 'host=x'}", config.Ledger{}, "only the postgres driver takes a DSN"},
		{"UnknownDriver", "ledger: {driver: mysql}", config.Ledger{}, `ledger.driver "mysql"`},
		{"BadDSN", "ledger: {driver: postgres, dsn: 'postgres://qg:s3cret@[::1'}", config.Ledger{}, "ledger.dsn: not a PostgreSQL"},
		{"NegativeVersion", "ledger: {driver: postgres, dsn: 'host=x', version: -1}", config.Ledger{}, "ledger.version -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Parse([]byte(tc.yaml), lookup)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("the error repeats the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Ledger != tc.want {
				t.Fatalf("ledger = %+v, want %+v", c.Ledger, tc.want)
			}
		})
	}
}

// TestFingerprint changes with what gateways must agree on, not with secrets.
func TestFingerprint(t *testing.T) {
	base := "tenants: [{id: a, key: key-one-1, budget_units: 100}]\nupstreams: [{name: p, base_url: 'http://127.0.0.1:1/v1', api_key: SECRET, models: [m]}]\n"
	fp := func(y string) string {
		c, err := config.Parse([]byte(y), func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		return c.Fingerprint()
	}
	a := fp(base)
	if fp(base) != a {
		t.Fatal("fingerprint is not stable")
	}
	if fp(strings.Replace(base, "SECRET", "OTHER", 1)) != a {
		t.Fatal("fingerprint depends on an upstream's secret")
	}
	if fp(strings.Replace(base, "100", "101", 1)) == a {
		t.Fatal("fingerprint ignores a budget")
	}
	if fp(strings.Replace(base, "[m]", "[m, n]", 1)) == a {
		t.Fatal("fingerprint ignores an upstream's models")
	}
	if fp(base+"ledger: {driver: postgres, dsn: 'host=x', instance: b}") != a {
		t.Fatal("fingerprint depends on the ledger block (per instance)")
	}
}
