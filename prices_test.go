package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/price"
)

// TestPricesUpdate: `quotagate prices update --from FILE` writes a valid
// table into the data directory, and refuses a bad one leaving it as it was.
func TestPricesUpdate(t *testing.T) {
	data, src := t.TempDir(), t.TempDir()
	good := filepath.Join(src, "good.json")
	bad := filepath.Join(src, "bad.json")
	write(t, good, `{"currency":"USD","source":"test","models":{"m":{"input":"1","cached_input":"0.1","cache_write":"1.25","output":"5"}}}`)
	write(t, bad, `{"currency":"USD","source":"test","models":{"m":{"input":"1","cached_input":"0.1","cache_write":"1.25","output":"5e-6"}}}`)
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"prices", "update", "--from", good, "--data", data}, 0, "prices: 1 models", ""},
		{[]string{"prices", "update", "--from", bad, "--data", data}, 1, "", `nothing changed: ` + bad},
		{[]string{"prices", "update", "--data", data}, 2, "", "prices update --from FILE"},
		{[]string{"prices", "show", "--data", data}, 2, "", "prices update --from FILE"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errb)
		if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errb.String(), tc.stderr) {
			t.Errorf("run(%q) = %d\nstdout %q\nstderr %q", tc.args, code, out.String(), errb.String())
		}
	}
	table, from, err := price.Load(data)
	if err != nil || from != filepath.Join(data, price.FileName) {
		t.Fatalf("Load = from %q, %v", from, err)
	}
	if q, _ := table.Quote("m"); q.Output != 5_000_000 {
		t.Fatalf("the refused update changed the table: %+v", table)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
