package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// prefsFile holds the window's own remembered answers, in the data dir.
const prefsFile = "window.json"

type prefs struct{ path string }

type prefsData struct {
	KeepServing *bool `json:"keep_serving,omitempty"` // nil: never asked
}

func prefsIn(dataDir string) prefs { return prefs{path: filepath.Join(dataDir, prefsFile)} }

func (p prefs) load() prefsData {
	var d prefsData
	b, err := os.ReadFile(p.path)
	if err == nil {
		_ = json.Unmarshal(b, &d) // an unreadable file asks again
	}
	return d
}

// KeepServing returns the remembered answer and whether there is one.
func (p prefs) KeepServing() (keep, asked bool) {
	d := p.load()
	if d.KeepServing == nil {
		return false, false
	}
	return *d.KeepServing, true
}

// SetKeepServing remembers the answer.
func (p prefs) SetKeepServing(keep bool) error {
	d := p.load()
	d.KeepServing = &keep
	b, _ := json.Marshal(d)
	tmp := p.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", p.path, err)
	}
	if err := os.Rename(tmp, p.path); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			_ = os.Remove(tmp)
		}
		return fmt.Errorf("write %s: %w", p.path, err)
	}
	return nil
}
