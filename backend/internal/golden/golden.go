// Package golden is the golden-file and seed-corpus helpers the wire
// formats' tests (and translate's) share: compare output with a file, or
// rewrite it under -update; seed a fuzz target with the files of a case
// directory. Standard library only; imported by tests.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Check compares got with the file at path, or rewrites the file under
// -update.
func Check(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// Seed adds to f's corpus every file matching pattern for which keep (nil:
// every file) reports true.
func Seed(f *testing.F, pattern string, keep func(path string) bool) {
	files, _ := filepath.Glob(pattern)
	for _, p := range files {
		if keep != nil && !keep(p) {
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}
