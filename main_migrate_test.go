package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestMigrateArguments: migrate refuses anything but sqlite:PATH → postgres:DSN.
func TestMigrateArguments(t *testing.T) {
	for _, args := range [][]string{
		{"migrate"},
		{"migrate", "--from", "ledger.db", "--to", "postgres:host=x"},
		{"migrate", "--from", "sqlite:ledger.db", "--to", "host=x"},
		{"migrate", "--from", "sqlite:", "--to", "postgres:host=x"},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "--from sqlite:PATH") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and the expected form", args, code, errOut.String())
		}
	}
}
