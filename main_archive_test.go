package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
	"github.com/quotagate/quotagate/backend/sqlite"
)

// archiveDataDir is a data dir whose ledger has runs that ended in
// October 2025, and one run held since then.
func archiveDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(filepath.Join(dir, "ledger.db"), sqlite.Options{
		Now: func() time.Time { return time.Date(2025, 10, 7, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ledgertest.MustApply(t, st, ledgertest.Tenant("local", 10_000, 4))
	for i := range 5 {
		id := ledger.RunID(fmt.Sprint("r", i))
		ledgertest.MustAdmit(t, st, ledger.AdmitRequest{RunID: id, TenantID: "local", ReserveUnits: 50})
		if _, err := st.Settle(context.Background(), id, 20, "usage", ledger.System("test")); err != nil {
			t.Fatal(err)
		}
	}
	ledgertest.MustAdmit(t, st, ledger.AdmitRequest{RunID: "held", TenantID: "local", ReserveUnits: 50})
	if _, err := st.KeepHold(context.Background(), "held", ledger.RunInterrupted, "cut", ledger.System("test")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestArchiveBadInput: a bad date, a date in the current month, a --to
// that cannot be written and a stray argument are refused with a sentence
// saying so, and leave the ledger as it was.
func TestArchiveBadInput(t *testing.T) {
	dir := archiveDataDir(t)
	ledgerBytes, err := os.ReadFile(filepath.Join(dir, "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	blocker := filepath.Join(dir, "a-file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	nextMonth := time.Now().UTC().AddDate(0, 1, 0).Format("2006-01") + "-01"
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"archive"}, 2, "archive --before 2026-01-01"},
		{[]string{"archive", "--before", "2025-13-01"}, 1, "--before wants a date like 2026-01-01"},
		{[]string{"archive", "--before", "2025-11-15"}, 1, "not the first day of a month"},
		{[]string{"archive", "--before", nextMonth}, 1, "in the current month"},
		{[]string{"archive", "--before", "2025-11-01", "--to", filepath.Join(blocker, "sub") + "/"}, 1, "is not writable"},
		{[]string{"archive", "restore"}, 2, "archive restore FILE"},
		{[]string{"archive", "restore", filepath.Join(dir, "absent.jsonl.gz")}, 1, "open archive"},
	} {
		code, _, stderr := runCLI(t, append(tc.args, "--data", dir)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	after, err := os.ReadFile(filepath.Join(dir, "ledger.db"))
	if err != nil || !bytes.Equal(after, ledgerBytes) {
		t.Fatalf("refused commands changed the ledger file (%v)", err)
	}
}

// TestArchiveCommandRoundTrip: archive, verify, verify --archive, restore,
// verify again, all from the command line.
func TestArchiveCommandRoundTrip(t *testing.T) {
	dir := archiveDataDir(t)
	code, out, stderr := runCLI(t, "archive", "--before", "2025-11-01", "--data", dir)
	if code != 0 || !strings.Contains(out, "2025-10: 5 runs, 10 audit rows, 1 summaries") {
		t.Fatalf("archive: exit %d, %q %q", code, out, stderr)
	}
	file := filepath.Join(dir, "archive", "quotagate-2025-10.jsonl.gz")
	for _, args := range [][]string{{"verify"}, {"verify", "--full"}, {"verify", "--archive", file}} {
		if code, out, stderr := runCLI(t, append(args, "--data", dir)...); code != 0 {
			t.Fatalf("%q: exit %d, %q %q", args, code, out, stderr)
		}
	}
	if code, out, stderr := runCLI(t, "archive", "restore", file, "--data", dir); code != 0 || !strings.Contains(out, "restored 2025-10: 5 runs") {
		t.Fatalf("restore: exit %d, %q %q", code, out, stderr)
	}
	if code, out, _ := runCLI(t, "verify", "--full", "--data", dir); code != 0 {
		t.Fatalf("verify after restore: %q", out)
	}
	if code, out, _ := runCLI(t, "verify", "--archive", file, "--data", dir); code != 1 || !strings.Contains(out, "keeps no summary") {
		t.Fatalf("verify --archive after restore: exit %d, %q", code, out)
	}
}
