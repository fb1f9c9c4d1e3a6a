package archive_test

import (
	"testing"

	"github.com/quotagate/quotagate/backend/internal/depcheck"
)

// TestDeps keeps archive a file format: the stores read and write the
// ledger, archive only the file.
func TestDeps(t *testing.T) {
	depcheck.Allow(t, ".", map[string]string{
		depcheck.Module + "/backend/ledger": "a file's summaries are the ledger's (ledger.ArchiveSummary)",
		depcheck.Module + "/backend/price":  "through ledger: a summary's money",
		depcheck.Module + "/backend/period": "through ledger",
	})
	depcheck.Forbid(t, ".", map[string]string{
		"database/sql": "storage is an adapter (sqlite); archive is only the file",
		"net/http":     "an archive is a local file",
	})
}
