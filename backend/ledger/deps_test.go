package ledger_test

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

func TestDependencies(t *testing.T) {
	depcheck.Forbid(t, ".", map[string]string{
		"database/sql": "storage is an adapter (backend/sqlite); the domain must not know it",
		"net/http":     "the ledger is the domain; HTTP belongs to gateway and admin",
	})
	// ledger is the innermost package but one: others import it, never the
	// reverse — except price, a leaf of the standard library only, because
	// a run's cost and a money budget are the ledger's own figures.
	depcheck.Allow(t, ".", map[string]string{
		depcheck.Module + "/backend/price":  "money is priced from tokens exactly (price.Micros, price.Price); price imports nothing of quotagate",
		depcheck.Module + "/backend/period": "a budget renews in its tenant's calendar periods; period imports nothing of quotagate",
	})
}
