package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
)

// TestClaimConfig: definitions apply when they match or are newer by
// ledger.version; a conflicting definition is refused naming both gateways,
// and a gateway that claimed an older version cannot overwrite a newer one.
func TestClaimConfig(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	open := func(name string) *postgres.Store {
		st := mustOpen(t, dsn, postgres.Options{Instance: name})
		t.Cleanup(func() { st.Close() })
		return st
	}
	a, b, c := open("gw-a"), open("gw-b"), open("gw-c")
	steps := []struct {
		name        string
		st          *postgres.Store
		version     int64
		fingerprint string
		err         string
	}{
		{"FirstClaims", a, 1, "aaaa", ""},
		{"SameDefinitionsMatch", b, 1, "aaaa", ""},
		{"SameVersionDiffers", c, 1, "cccc", "this gateway (instance gw-c, ledger.version 1, fingerprint cccc) and instance gw-a (ledger.version 1, fingerprint aaaa) define tenants and upstreams differently, and this one's version is the same version as that"},
		{"OlderVersionDiffers", c, 0, "cccc", "version is older than that"},
		{"NewerVersionWins", c, 2, "cccc", ""},
		{"SameDefinitionsLowerVersionMatch", b, 1, "cccc", ""},
	}
	for _, s := range steps {
		err := s.st.ClaimConfig(ctx, s.version, s.fingerprint)
		if s.err == "" && err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if s.err != "" {
			if err == nil || !strings.Contains(err.Error(), s.err) {
				t.Fatalf("%s: err = %v, want %q", s.name, err, s.err)
			}
			ledgertest.WantCode(t, err, ledger.CodeConflict)
		}
	}
	// a claimed version 1 (aaaa) before c's version 2: a's tenants must not
	// replace c's now.
	err := a.ApplyTenants(ctx, []ledger.Tenant{ledgertest.Tenant("t", 10, 1)}, ledger.ActorConfig)
	if err == nil || !strings.Contains(err.Error(), "instance gw-c (ledger.version 2, fingerprint cccc)") {
		t.Fatalf("stale ApplyTenants: err = %v, want a refusal naming gw-c's version 2", err)
	}
	if err := c.ApplyTenants(ctx, []ledger.Tenant{ledgertest.Tenant("t", 10, 1)}, ledger.ActorConfig); err != nil {
		t.Fatal(err)
	}
}
