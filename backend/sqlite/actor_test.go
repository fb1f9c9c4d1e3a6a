package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// TestActorsReadApart: a tenant named "quota" and the quota guard read
// apart, in rows written now and in rows a ledger of the previous version
// holds (typed actors need no migration of the append-only audit table).
func TestActorsReadApart(t *testing.T) {
	path := filepath.Join(ledgerDir(t), "ledger.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ledgertest.ActorsReadApart(t, st, func(values string) error {
		// The store's writer may be indexing audit text: wait for its lock.
		raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
		if err != nil {
			return err
		}
		defer raw.Close()
		_, err = raw.Exec(`INSERT INTO audit (at, kind, tenant_id, run_id, actor) VALUES ` + values)
		return err
	})
}
