package config_test

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

// TestDependencies keeps config data: the YAML file's shape, parsing and
// validation. It imports nothing of ours but ledger (and price and alert,
// the stdlib-only leaves that read money and alerts), so that reading a
// config links no gateway; translating it into each package's options is
// backend/server's assembly, and each package applies its own defaults.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	depcheck.Allow(t, ".", map[string]string{
		depcheck.Module + "/backend/ledger": "units, tenants, key hashes, reasons and the lease defaults",
		depcheck.Module + "/backend/price":  "money and prices are parsed and checked as the ledger will read them (a stdlib-only leaf)",
		depcheck.Module + "/backend/alert":  "alerts' thresholds and webhook URL are checked as the alerts read them (a stdlib-only leaf)",
		depcheck.Module + "/backend/period": "budget_period, timezone and week_starts are read as the calendar will cut them (a stdlib-only leaf)",
		"gopkg.in/yaml.v3":                  "the file's format",
		"github.com/jackc/pgx/v5/pgconn":    "ledger.dsn is checked as PostgreSQL parses it (pgconn only, no driver)",
	})
}
