package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// TestSchemaVersions: migrations apply once, in order, and reopening applies
// nothing again.
func TestSchemaVersions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	for range 2 {
		st, err := sqlite.Open(path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		v, err := st.SchemaVersions(context.Background())
		st.Close()
		if err != nil || len(v) == 0 || v[0] != "0001_ledger.sql" {
			t.Fatalf("schema versions = %v, %v", v, err)
		}
	}
}

// TestWriterTakesTheLockAtBegin: while the ledger writes, another connection
// with no busy timeout cannot start a write (the ledger's BEGIN is
// IMMEDIATE, so an empty transaction already holds the write lock), and the
// journal is WAL.
func TestWriterTakesTheLockAtBegin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var mode string
	if err := other.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v", mode, err)
	}
	release := st.BlockWriter() // the writer is inside BEGIN, has written nothing yet
	_, err = other.Exec(`INSERT INTO audit (at, kind) VALUES (0, 'probe')`)
	release()
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "locked") {
		t.Fatalf("a second writer got through while the ledger held its transaction: %v", err)
	}
}

// TestPragmasOnEveryConnection (RELIABILITY T18): the DSN sets the pragmas on
// each pooled connection, not only on the first.
func TestPragmasOnEveryConnection(t *testing.T) {
	st := MustOpenStore(t, sqlite.Options{ReadConns: 3})
	conns, err := st.ConnPragmas(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(conns) != 4 {
		t.Fatalf("%d connections checked, want 4", len(conns))
	}
	for i, p := range conns {
		wantQueryOnly := int64(1)
		if i == 0 {
			wantQueryOnly = 0 // the writer
		}
		if p["synchronous"] != 2 || p["busy_timeout"] != 5000 || p["foreign_keys"] != 1 || p["query_only"] != wantQueryOnly {
			t.Errorf("connection %d pragmas %v", i, p)
		}
	}
}

// TestOddPath: the data directory may contain spaces, '#', '?', '%' or
// non-ASCII letters (a user's home); the DSN must still name that file.
func TestOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "My Data #1 ?50% 数据")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ledger.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyTenants(context.Background(), nil, ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("ledger not at %q: %v", path, err)
	}
}
