package config_test

import (
	"os"
	"testing"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
)

// FuzzConfig: Parse never panics, and whatever it accepts satisfies Validate
// and holds no plaintext key.
func FuzzConfig(f *testing.F) {
	for _, p := range []string{"testdata/design.yaml", "default.yaml"} {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("tenants:\n  - {id: a, key: kkkkkkkk, budget_units: 5}\n"))
	f.Add([]byte("upstreams:\n  - {name: x, kind: demo, models: [m], quota: {}}\n"))
	f.Add([]byte("limits: {finish_grace: off, write_timeout: 2s}\n"))
	f.Add([]byte("limits: {finish_grace: 250ms}\n"))
	f.Add([]byte("money: {currency: CNY, usd_rate: 7.1}\ntenants:\n  - {id: a, budget: 50.00}\n"))
	f.Add([]byte("money: {currency: USD}\nupstreams:\n  - {name: x, kind: demo, models: [m], prices: {m: {input: 2, cached_input: '0.5', cache_write: 2.50, output: '8.000001'}}}\n"))
	f.Add([]byte("tenants:\n  - {id: a, budget: '1'}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := config.Parse(data, env(designEnv))
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted config fails Validate: %v", err)
		}
		if g := c.Limits.FinishGrace; g != config.GraceOff && g < 0 {
			t.Fatalf("finish_grace %d is neither off, absent nor a positive duration", int64(g))
		}
		for _, tn := range c.Tenants {
			if tn.Key != "" || len(tn.Keys) != 0 {
				t.Fatalf("plaintext key kept for tenant %s", tn.ID)
			}
			if tn.BudgetUnits < 0 || tn.BudgetUnits > ledger.MaxUnits {
				t.Fatalf("budget out of range: %d", tn.BudgetUnits)
			}
			if m, ok := tn.BudgetMicros(); tn.Budget != "" && (!ok || m < 0 || c.Money == nil) {
				t.Fatalf("money budget %q accepted as %d, %v (money %+v)", tn.Budget, m, ok, c.Money)
			}
		}
		for _, u := range c.Upstreams {
			for m, q := range u.Prices {
				if _, err := q.Quote(); err != nil || c.Money == nil {
					t.Fatalf("price of %s accepted: %v (money %+v)", m, err, c.Money)
				}
			}
		}
	})
}
