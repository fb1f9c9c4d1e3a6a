package server

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// AdminTokenFile is the admin token's file in the data dir (mode 0600).
const AdminTokenFile = "admin_token"

// keysDir holds generated tenant keys (one file per keyless tenant, 0600),
// so the key printed on first start stays valid across restarts.
const keysDir = "keys"

// prepareDataDir creates dir with mode 0700, or tightens an existing one:
// it holds the ledger and secrets.
func prepareDataDir(dir string) error {
	if dir == "" {
		return errors.New("no data dir given")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("restrict data dir: %w", err)
	}
	return nil
}

// randomSecret returns n random bytes as unpadded base64url: safe in a URL
// fragment, a header and a file.
func randomSecret(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// loadOrCreateSecret reads the secret at path, or writes a fresh one made by
// gen. The file is kept at 0600 even if someone loosened it.
func loadOrCreateSecret(path string, gen func() string) (string, error) {
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if s := strings.TrimSpace(string(data)); s != "" {
			if err := os.Chmod(path, 0o600); err != nil {
				return "", fmt.Errorf("restrict %s: %w", path, err)
			}
			return s, nil
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	s := gen()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-secret-*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.WriteString(s + "\n"); err != nil {
		tmp.Close()
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return s, nil
}

// tenantKey names a generated key: a visible prefix and the tenant id, then
// 32 random bytes (RELIABILITY T26).
func tenantKey(tenant string) func() string {
	return func() string { return "sk-qg-" + tenant + "-" + randomSecret(32) }
}

// secrets lists every secret this server knows in clear: the admin token,
// tenant keys (configured and generated), upstream keys and balance-source
// credentials. None may reach a tenant, the ledger or the dashboard through
// an upstream's echo (a provider's error that quotes the key it was sent).
func (s *Server) secrets() []string {
	out := []string{s.token, s.topUpKey}
	for _, k := range s.keys {
		out = append(out, k)
	}
	for _, t := range s.cfg.Tenants {
		out = append(out, t.Key)
		out = append(out, t.Keys...)
	}
	if a := s.cfg.Alerts; a != nil && a.Webhook != nil {
		out = append(out, string(a.Webhook.Secret))
	}
	for _, u := range s.cfg.Upstreams {
		out = append(out, u.APIKey)
		out = append(out, u.APIKeys...)
		if q := u.Quota; q != nil {
			out = append(out, q.Balance.AccessKey, q.Balance.SecretKey, q.Balance.Token)
		}
	}
	return out
}
