package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
)

func open(t *testing.T, dir string, mod func(*server.Options)) *server.Server {
	t.Helper()
	o := server.Options{DataDir: dir, Addr: "127.0.0.1:0", Version: "test"}
	if mod != nil {
		mod(&o)
	}
	s, err := server.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openYAML opens a server on a fresh data dir with the config yml (no
// environment references resolved).
func openYAML(t *testing.T, yml string) *server.Server {
	t.Helper()
	cfg, err := config.Parse([]byte(yml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return open(t, filepath.Join(t.TempDir(), "data"), func(o *server.Options) { o.Config = cfg })
}

func port(t *testing.T, s *server.Server) string {
	t.Helper()
	_, p, err := net.SplitHostPort(strings.TrimPrefix(s.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func get(t *testing.T, s *server.Server, path, tok string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL()+path, nil)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestSecrets(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := open(t, dir, nil)
	tok, key := s.AdminToken(), s.GeneratedKeys()["local"]
	if len(tok) < 40 || !strings.HasPrefix(key, "sk-qg-local-") || len(key) < 40 {
		t.Fatalf("token %q key %q: want ≥ 32 random bytes each", tok, key)
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("data dir mode %o, want 700", m)
	}
	for _, f := range []string{server.AdminTokenFile, "keys/local.key"} {
		if m := mode(t, filepath.Join(dir, f)); m != 0o600 {
			t.Errorf("%s mode %o, want 600", f, m)
		}
	}
	if !strings.HasSuffix(s.DashboardURL(), "/#token="+tok) {
		t.Errorf("dashboard URL %q lacks the token fragment", s.DashboardURL())
	}
	s.Close()

	t.Run("KeptAcrossRestart", func(t *testing.T) {
		os.Chmod(filepath.Join(dir, server.AdminTokenFile), 0o644)
		s2 := open(t, dir, nil)
		if s2.AdminToken() != tok || s2.GeneratedKeys()["local"] != key {
			t.Fatal("token or key changed across restart")
		}
		if m := mode(t, filepath.Join(dir, server.AdminTokenFile)); m != 0o600 {
			t.Errorf("loosened token file not re-restricted: %o", m)
		}
	})
	t.Run("ConfigOverrides", func(t *testing.T) {
		cfg := config.Default()
		cfg.AdminToken = "configured-token-0123456789"
		s3 := open(t, t.TempDir(), func(o *server.Options) { o.Config = cfg })
		if s3.AdminToken() != cfg.AdminToken {
			t.Fatalf("token %q, want the configured one", s3.AdminToken())
		}
		if _, err := os.Stat(filepath.Join(s3.DataDir(), server.AdminTokenFile)); err == nil {
			t.Fatal("a token file was written although the config sets admin_token")
		}
		if get(t, s3, "/admin/api/state", cfg.AdminToken).StatusCode != 200 {
			t.Fatal("configured token refused")
		}
	})
}

func TestRefusesNonLoopbackAndBusyPort(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.168.1.10:0", "[::]:0", "example.com:0", "nonsense"} {
		if _, err := server.Open(context.Background(), server.Options{DataDir: t.TempDir(), Addr: addr}); err == nil {
			t.Errorf("Open(%q) succeeded; want a loopback-only refusal", addr)
		}
	}
	s := open(t, t.TempDir(), nil)
	_, err := server.Open(context.Background(), server.Options{DataDir: t.TempDir(), Addr: strings.TrimPrefix(s.URL(), "http://")})
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second Open on a busy port: %v, want an 'in use' error and no fallback", err)
	}
}

// rawStatus sends a hand-written request, so Host can be anything.
func rawStatus(t *testing.T, s *server.Server, req string) int {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestHostAllowList is RELIABILITY T23: every route refuses a foreign Host
// with 403 before auth.
func TestHostAllowList(t *testing.T) {
	s := open(t, t.TempDir(), func(o *server.Options) { o.Addr = "localhost:0" })
	p := port(t, s)
	tok := s.AdminToken()
	paths := []string{"/healthz", "/admin/api/state", "/admin/ws", "/v1/models", "/"}
	allowed := []string{"127.0.0.1:" + p, "localhost:" + p, "[::1]:" + p}
	rejected := []string{"evil.example", "evil.example:" + p, "localhost.evil.example:" + p, "127.0.0.1.nip.io:" + p,
		"foo.local:" + p, "foo.internal:" + p, "myhostname:" + p, ":" + p, "LOCALHOST:" + p, "localhost.:" + p,
		"127.0.0.1", "localhost", "127.0.0.1:1", "[::1]"}
	for _, path := range paths {
		for _, h := range allowed {
			req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", path, h, tok)
			if st := rawStatus(t, s, req); st == http.StatusForbidden {
				t.Errorf("Host %q %s: 403, want it served", h, path)
			}
		}
		for _, h := range rejected {
			req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", path, h, tok)
			if st := rawStatus(t, s, req); st != http.StatusForbidden {
				t.Errorf("Host %q %s: %d, want 403", h, path, st)
			}
		}
		if st := rawStatus(t, s, fmt.Sprintf("GET %s HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n", path)); st != http.StatusForbidden {
			t.Errorf("empty Host %s: %d, want 403", path, st)
		}
		if st := rawStatus(t, s, fmt.Sprintf("GET http://evil.example%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n", path, p)); st != http.StatusForbidden {
			t.Errorf("absolute-form to evil.example %s: %d, want 403", path, st)
		}
		if st := rawStatus(t, s, fmt.Sprintf("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nHost: evil.example\r\nConnection: close\r\n\r\n", path, p)); st < 400 {
			t.Errorf("duplicate Host %s: %d, want refused", path, st)
		}
	}
}

func TestRoutes(t *testing.T) {
	dist := fstest.MapFS{"index.html": {Data: []byte(`<title>dash</title>`)}, "assets/app.js": {Data: []byte(`1`)}}
	s := open(t, t.TempDir(), func(o *server.Options) { o.Frontend = dist })
	for _, tc := range []struct {
		path, tok string
		want      int
		contains  string
	}{
		{"/healthz", "", 200, `"status":"ok"`},
		{"/", "", 200, "<title>dash</title>"},
		{"/assets/app.js", "", 200, "1"},
		{"/metrics", "", 200, `quotagate_build_info{version="test"} 1`},
		{"/admin/api/state", "", 401, "invalid_api_key"},
		{"/admin/api/state", s.AdminToken(), 200, `"tenants":[{"tenant":"local","budget_units":1000000`},
		{"/v1/models", "", 401, "invalid_api_key"}, // the gateway is wired; no tenant key
	} {
		resp := get(t, s, tc.path, tc.tok)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.want || !strings.Contains(string(b), tc.contains) {
			t.Errorf("GET %s: %d %q, want %d containing %q", tc.path, resp.StatusCode, b, tc.want, tc.contains)
		}
	}
	if h := get(t, s, "/", "").Header.Get("X-Frame-Options"); h != "DENY" {
		t.Errorf("dashboard X-Frame-Options %q, want DENY", h)
	}
	if b, _ := io.ReadAll(get(t, s, "/metrics", "").Body); !strings.Contains(string(b), `quotagate_http_requests_total{code="200",group="healthz"} 1`) {
		t.Errorf("request counter missing from /metrics")
	}
	if b, _ := io.ReadAll(get(t, s, "/metrics", "").Body); !strings.Contains(string(b), "\nquotagate_audit_text_lag_rows ") {
		t.Errorf("the text index's lag missing from /metrics")
	}
}

func TestPlaceholderWithoutDashboard(t *testing.T) {
	s := open(t, t.TempDir(), func(o *server.Options) { o.Frontend = fstest.MapFS{".gitkeep": {}} })
	b, _ := io.ReadAll(get(t, s, "/", "").Body)
	if !strings.Contains(string(b), "has not been built") {
		t.Fatalf("placeholder page missing: %q", b)
	}
}

func TestStateAndApplyTenants(t *testing.T) {
	s := open(t, t.TempDir(), nil)
	sub := s.Hub().Subscribe()
	defer sub.Close()
	st, err := s.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !st.Demo || st.Version != "test" || len(st.Gates) != 1 || st.Gates[0].Upstream != "demo" || st.Gates[0].MaxWaitMS != 8000 {
		t.Fatalf("state %+v", st)
	}
	if st.Addr != strings.TrimPrefix(s.URL(), "http://") {
		t.Fatalf("addr %q, want the listening address", st.Addr)
	}
	cfg := config.Default()
	cfg.Tenants[0].BudgetUnits = 4242
	cfg.Tenants = append(cfg.Tenants, config.Tenant{ID: "tenant-a", BudgetUnits: 110, MaxConcurrent: 1,
		KeyHashes: []string{ledger.HashKey("tenant-a-key")}, RateLimits: config.RateLimits{PerMinute: 10, PerHour: 120}})
	if err := s.ApplyTenants(context.Background(), cfg.Tenants); err != nil {
		t.Fatal(err)
	}
	// The ledger's commit of the new budgets comes first, then the config.
	if c := <-sub.C(); c.Kind != "ledger" || len(c.Commit) != 2 || c.Commit[0].Kind != ledger.AuditConfig {
		t.Fatalf("change %+v, want the ledger's config commit", c)
	}
	if c := <-sub.C(); c.Kind != "config" {
		t.Fatalf("change %+v, want config", c)
	}
	resp := get(t, s, "/admin/api/state", s.AdminToken())
	var got struct {
		Tenants []map[string]any `json:"tenants"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := `[map[active:0 available_units:4242 budget_units:4242 held_micros:0 held_units:0 max_concurrent:4 per_hour:0 per_minute:0 queued:0 spent_micros:0 spent_units:0 tenant:local] map[active:0 available_units:110 budget_units:110 held_micros:0 held_units:0 max_concurrent:1 per_hour:120 per_minute:10 queued:0 rate:map[last_hour:0 last_minute:0 refused:0] spent_micros:0 spent_units:0 tenant:tenant-a]]`
	if fmt.Sprint(got.Tenants) != want {
		t.Fatalf("tenants\n got %v\nwant %s", got.Tenants, want)
	}
}

func TestVerifyNeedsALedger(t *testing.T) { // an empty data dir is not a ledger
	if _, err := server.Verify(context.Background(), server.Options{DataDir: t.TempDir()}); err == nil {
		t.Fatal("Verify without a ledger succeeded")
	}
}

func TestURL(t *testing.T) {
	s := open(t, t.TempDir(), nil)
	if _, err := strconv.Atoi(port(t, s)); err != nil || !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL %q", s.URL())
	}
}
