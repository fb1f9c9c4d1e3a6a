package archive

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Format names the file's layout in its header.
const Format = "quotagate-archive/1"

// Tables whose rows an archive holds, in file order.
const (
	TableRuns  = "runs"
	TableAudit = "audit"
)

// Header is a file's first line.
type Header struct {
	Format  string    `json:"format"`
	Month   string    `json:"month"`  // 2025-11
	Before  time.Time `json:"before"` // the runs ended before it (the month's end, or earlier)
	Created time.Time `json:"created"`
}

// Row is one row as its columns by name: int64, string, or nil.
type Row map[string]any

// Record is one line after the header.
type Record struct {
	Table string `json:"table"`
	// Part is the transaction of the ledger that moves the row (a file
	// written before months moved in parts has none: part 0).
	Part int64  `json:"part,omitempty"`
	Row  Row    `json:"row"`
	Hash string `json:"hash"` // hex SHA-256 of the row (RowHash)
}

// RowHash is the SHA-256 of table and row as canonical JSON (encoding/json
// writes a map's keys sorted), and that JSON.
func RowHash(table string, row Row) ([sha256.Size]byte, []byte, error) {
	b, err := json.Marshal(row)
	if err != nil {
		return [sha256.Size]byte{}, nil, fmt.Errorf("hash %s row: %w", table, err)
	}
	h := sha256.New()
	h.Write([]byte(table))
	h.Write([]byte{'\n'})
	h.Write(b)
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out, b, nil
}

// Writer writes one archive file.
type Writer struct {
	path, tmp string
	f         *os.File
	buf       *bufio.Writer
	zw        *gzip.Writer
}

// Create starts the file that will be at path once committed; until then
// it is written beside it, under a name that says it is not whole.
func Create(path string, h Header) (*Writer, error) {
	tmp := path + ".partial"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create archive: %w", err)
	}
	w := &Writer{path: path, tmp: tmp, f: f, buf: bufio.NewWriterSize(f, 1<<20)}
	if w.zw, err = gzip.NewWriterLevel(w.buf, gzip.BestSpeed); err != nil {
		w.Abort()
		return nil, fmt.Errorf("create archive: %w", err)
	}
	h.Format = Format
	if err := json.NewEncoder(w.zw).Encode(h); err != nil {
		w.Abort()
		return nil, fmt.Errorf("write archive header: %w", err)
	}
	return w, nil
}

// Write appends one row of part and returns its hash. The row's JSON is
// encoded once, for the hash and the line.
func (w *Writer) Write(part int64, table string, row Row) ([sha256.Size]byte, error) {
	h, b, err := RowHash(table, row)
	if err != nil {
		return h, err
	}
	line := make([]byte, 0, len(b)+len(table)+2*sha256.Size+40)
	line = append(line, `{"table":"`...)
	line = append(line, table...)
	line = append(line, '"')
	if part > 0 {
		line = append(line, `,"part":`...)
		line = strconv.AppendInt(line, part, 10)
	}
	line = append(line, `,"hash":"`...)
	line = hex.AppendEncode(line, h[:])
	line = append(line, `","row":`...)
	line = append(line, b...)
	line = append(line, "}\n"...)
	if _, err := w.zw.Write(line); err != nil {
		return h, fmt.Errorf("write archive row: %w", err)
	}
	return h, nil
}

// Commit finishes the file, syncs it, and renames it into place (syncing
// the directory, so that the rename itself survives a crash).
func (w *Writer) Commit() error {
	err := errors.Join(w.zw.Close(), w.buf.Flush(), w.f.Sync(), w.f.Close())
	if err == nil {
		err = os.Rename(w.tmp, w.path)
	}
	if err != nil {
		os.Remove(w.tmp)
		return fmt.Errorf("commit archive %s: %w", w.path, err)
	}
	if d, err := os.Open(filepath.Dir(w.path)); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("commit archive %s: sync its directory: %w", w.path, err)
		}
	}
	return nil
}

// Abort drops the unfinished file.
func (w *Writer) Abort() {
	w.f.Close()
	os.Remove(w.tmp)
}

// Reader reads an archive file row by row.
type Reader struct {
	Header Header
	f      *os.File
	zr     *gzip.Reader
	dec    *json.Decoder
	line   int
}

// Open reads path's header.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open archive: %w", err)
	}
	r := &Reader{f: f}
	if r.zr, err = gzip.NewReader(bufio.NewReaderSize(f, 1<<20)); err != nil {
		f.Close()
		return nil, fmt.Errorf("open archive %s: %w", path, err)
	}
	r.dec = json.NewDecoder(r.zr)
	r.dec.UseNumber()
	if err := r.dec.Decode(&r.Header); err != nil || r.Header.Format != Format {
		r.Close()
		return nil, fmt.Errorf("open archive %s: not a quotagate archive (%s expected in its first line): %v", path, Format, err)
	}
	r.line = 1
	return r, nil
}

// Next reads the next record (io.EOF after the last) with its line number,
// its values as Row holds them (integers as int64).
func (r *Reader) Next() (Record, int, error) {
	var rec Record
	if err := r.dec.Decode(&rec); err != nil {
		if errors.Is(err, io.EOF) {
			return rec, r.line, io.EOF
		}
		return rec, r.line + 1, fmt.Errorf("archive line %d: %w", r.line+1, err)
	}
	r.line++
	for k, v := range rec.Row {
		if n, ok := v.(json.Number); ok {
			i, err := n.Int64()
			if err != nil {
				return rec, r.line, fmt.Errorf("archive line %d: column %s: %w", r.line, k, err)
			}
			rec.Row[k] = i
		}
	}
	return rec, r.line, nil
}

// Close closes the file.
func (r *Reader) Close() error {
	return errors.Join(r.zr.Close(), r.f.Close())
}
