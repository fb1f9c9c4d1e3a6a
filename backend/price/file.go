package price

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// FileName is the price table `quotagate prices update` writes in the data
// directory; when it is there, it replaces the embedded table at start.
const FileName = "prices.json"

// maxFileSize bounds a price file: the whole of models.dev, every provider,
// is a few megabytes; a table is far smaller.
const maxFileSize = 16 << 20

// Load is the table a gateway on dataDir prices with: the data directory's
// prices.json when there is one, else the embedded table. A prices.json
// that is not a valid table is an error, never a quiet fall back to other
// prices. from names where the table came from, for the start-up log.
func Load(dataDir string) (t Table, from string, err error) {
	path := filepath.Join(dataDir, FileName)
	t, err = readTable(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Embedded(), "embedded", nil
	}
	if err != nil {
		return Table{}, "", fmt.Errorf("%w (replace it with `quotagate prices update --from FILE`, or delete it to use the embedded prices)", err)
	}
	return t, path, nil
}

// Update replaces the data directory's price table with the one in file,
// once file has proved to be a valid table: the new table is written to a
// temporary file beside the old and renamed over it, so a failure at any
// step leaves the old table as it was. It returns the new table.
func Update(dataDir, file string) (Table, error) {
	t, err := readTable(file)
	if err != nil {
		return Table{}, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return Table{}, fmt.Errorf("price table: %w", err)
	}
	if err := writeAtomically(filepath.Join(dataDir, FileName), t.Encode()); err != nil {
		return Table{}, fmt.Errorf("price table: %w", err)
	}
	return t, nil
}

// readTable reads and parses the price file at path.
func readTable(path string) (Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return Table{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return Table{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxFileSize {
		return Table{}, fmt.Errorf("%s: larger than %d MiB: not a price table", path, maxFileSize>>20)
	}
	t, err := ParseTable(data)
	if err != nil {
		return Table{}, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// writeAtomically replaces path with data: a reader sees the old file or
// the new one, whole, never a part.
func writeAtomically(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
