package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/price"
	"github.com/quotagate/quotagate/backend/server"
)

// A prices.json in the data dir that is not a valid price table refuses
// the start with the file's error, rather than pricing with other prices.
func TestBrokenPriceFileRefusesToStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, price.FileName), []byte(`{"currency":"EUR"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := server.Open(context.Background(), server.Options{DataDir: dir, Addr: "127.0.0.1:0"})
	if err == nil {
		s.Close()
		t.Fatal("a broken prices.json started")
	}
	if !strings.Contains(err.Error(), "price table") || !strings.Contains(err.Error(), price.FileName) {
		t.Fatalf("error %q does not name the price file", err)
	}
}
