package price

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const oneModel = `{"currency":"USD","source":"test","models":{"m":{"input":"1","cached_input":"0.1","cache_write":"1.25","output":"5"}}}`

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadWithoutAFileIsEmbedded(t *testing.T) {
	tb, from, err := Load(t.TempDir())
	if err != nil || from != "embedded" || len(tb.Models) != len(Embedded().Models) {
		t.Fatalf("Load = %d models from %q, %v", len(tb.Models), from, err)
	}
}

func TestUpdateReplacesTheTable(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data") // not there yet: Update makes it
	from := writeFile(t, t.TempDir(), "new.json", oneModel)
	if _, err := Update(data, from); err != nil {
		t.Fatal(err)
	}
	tb, loaded, err := Load(data)
	if err != nil || loaded != filepath.Join(data, FileName) {
		t.Fatalf("Load after update: from %q, %v", loaded, err)
	}
	if q, ok := tb.Quote("m"); !ok || q.CacheWrite != 1_250_000 || len(tb.Models) != 1 {
		t.Fatalf("loaded %+v", tb)
	}
	if _, ok := tb.Quote("gpt-4o"); ok {
		t.Fatal("the update added to the embedded table instead of replacing it")
	}
}

// TestUpdateRefusesAndChangesNothing: a bad file, or one that is not
// there, leaves the data directory's table as it was, byte for byte, with
// no temporary file behind.
func TestUpdateRefusesAndChangesNothing(t *testing.T) {
	data := t.TempDir()
	if _, err := Update(data, writeFile(t, t.TempDir(), "first.json", oneModel)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(data, FileName))
	src := t.TempDir()
	for _, c := range []struct{ name, file, says string }{
		{"negative", writeFile(t, src, "neg.json", strings.Replace(oneModel, `"output":"5"`, `"output":"-5"`, 1)), `output: "-5" is negative`},
		{"truncated", writeFile(t, src, "cut.json", oneModel[:40]), "not a price table"},
		{"missing", filepath.Join(src, "absent.json"), "absent.json"},
		{"a directory", src, src},
	} {
		_, err := Update(data, c.file)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.says)
		}
		after, _ := os.ReadFile(filepath.Join(data, FileName))
		if string(after) != string(before) {
			t.Fatalf("%s: the table changed", c.name)
		}
	}
	entries, _ := os.ReadDir(data)
	if len(entries) != 1 {
		t.Fatalf("data directory holds %v; want only %s", entries, FileName)
	}
}

// TestLoadRefusesABadFile: prices.json edited by hand into nonsense stops
// the start, saying how to recover, rather than pricing with other prices.
func TestLoadRefusesABadFile(t *testing.T) {
	data := t.TempDir()
	writeFile(t, data, FileName, `{"currency":"USD"}`)
	if _, _, err := Load(data); err == nil || !strings.Contains(err.Error(), "delete it to use the embedded prices") {
		t.Fatalf("Load = %v", err)
	}
}
