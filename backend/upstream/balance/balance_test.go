package balance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream/balance"
)

// serve runs h on a real loopback socket for the test's lifetime.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return "http://" + ln.Addr().String()
}

// fakeBilling answers ListResourcePackages in the documented shape
// (ResponseMetadata + Result{List, NextToken}), 20 packages a page.
type fakeBilling struct {
	mu       sync.Mutex
	pkgs     []map[string]string
	requests []*http.Request
	bodies   []string
	tokens   []string
	status   int // non-zero: answer this error status
}

func (f *fakeBilling) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r)
	f.bodies = append(f.bodies, string(body))
	meta := map[string]any{"RequestId": fmt.Sprintf("req-%d", len(f.requests)), "Action": "ListResourcePackages",
		"Version": "2022-01-01", "Service": "billing", "Region": "cn-beijing"}
	if f.status != 0 {
		meta["Error"] = map[string]string{"Code": "SignatureDoesNotMatch", "Message": "bad signature"}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		_ = json.NewEncoder(w).Encode(map[string]any{"ResponseMetadata": meta})
		return
	}
	token := r.URL.Query().Get("NextToken")
	if token == "" {
		var in map[string]any
		if json.Unmarshal(body, &in) == nil {
			token, _ = in["NextToken"].(string)
		}
		if v, err := url.ParseQuery(string(body)); token == "" && err == nil {
			token = v.Get("NextToken")
		}
	}
	f.tokens = append(f.tokens, token)
	start := 0
	if token != "" {
		fmt.Sscanf(token, "%d", &start)
	}
	end := min(start+20, len(f.pkgs))
	next := ""
	if end < len(f.pkgs) {
		next = fmt.Sprint(end)
	}
	list := f.pkgs[start:end]
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ResponseMetadata": meta,
		"Result": map[string]any{"List": list, "NextToken": next}})
}

func pkg(no, name, status, avail string) map[string]string {
	return map[string]string{"InstanceNo": no, "Product": "ark_bd", "ProductName": "火山方舟",
		"ConfigurationName": name, "Status": status, "AvailableAmount": avail, "TotalAmount": "2000000",
		"Unit": "token", "ExpiryTime": "2026-09-12T00:00:00Z", "PackageType": "Package"}
}

func TestVolcengineSumsPagesAndSigns(t *testing.T) {
	f := &fakeBilling{}
	var want ledger.Units
	for i := 0; i < 23; i++ {
		switch {
		case i%5 == 4:
			f.pkgs = append(f.pkgs, pkg(fmt.Sprint(i), "deepseek-v4-flash", "Expired", "999999"))
		case i%7 == 6:
			f.pkgs = append(f.pkgs, pkg(fmt.Sprint(i), "doubao-seed-1.6", "Effective", "555555"))
		default:
			f.pkgs = append(f.pkgs, pkg(fmt.Sprint(i), "deepseek-v4-flash", "Effective", fmt.Sprintf("%d.000000", 10_000+i)))
			want += ledger.Units(10_000 + i)
		}
	}
	base := serve(t, f)
	src, err := balance.New(balance.Config{Kind: balance.KindVolcengine, AccessKey: "AKLTtest", SecretKey: "c2VjcmV0",
		BaseURL: base, Product: "ark_bd"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := src.Balance(ctx, "deepseek-v4-flash")
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("balance = %d, want %d (effective packages of the model only)", got, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) != 2 {
		t.Fatalf("%d requests, want 2 pages", len(f.requests))
	}
	if f.tokens[0] != "" || f.tokens[1] != "20" {
		t.Fatalf("NextToken sent = %q, want \"\" then \"20\"", f.tokens)
	}
	for i, r := range f.requests {
		q := r.URL.Query()
		if r.Method != http.MethodPost || q.Get("Action") != "ListResourcePackages" || q.Get("Version") != "2022-01-01" {
			t.Fatalf("request %d: %s %s", i, r.Method, r.URL)
		}
		auth := r.Header.Get("Authorization")
		if !strings.HasPrefix(auth, "HMAC-SHA256 Credential=AKLTtest/") || !strings.Contains(auth, "Signature=") ||
			!strings.Contains(auth, "SignedHeaders=") {
			t.Fatalf("request %d: Authorization %q is not a V4 signature", i, auth)
		}
		if r.Header.Get("X-Date") == "" {
			t.Fatalf("request %d: no X-Date header", i)
		}
		if !strings.Contains(f.bodies[i]+r.URL.RawQuery, "ark_bd") {
			t.Fatalf("request %d: product filter not sent (body %q)", i, f.bodies[i])
		}
	}
}

func TestVolcengineModelField(t *testing.T) {
	f := &fakeBilling{pkgs: []map[string]string{
		pkg("1", "deepseek-v4-flash", "Effective", "100"),
		pkg("2", "deepseek-v4-flash-ga-260731", "Effective", "20"),
	}}
	base := serve(t, f)
	for _, tc := range []struct {
		name  string
		field string
		want  ledger.Units
	}{
		{"AnyFieldContains", "", 120},
		{"ExactField", "ConfigurationName", 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := balance.NewVolcengine(balance.Config{AccessKey: "a", SecretKey: "s", BaseURL: base, ModelField: tc.field}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := src.Balance(context.Background(), "deepseek-v4-flash")
			if err != nil || got != tc.want {
				t.Fatalf("balance = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestVolcengineErrorAnswer(t *testing.T) {
	f := &fakeBilling{status: http.StatusUnauthorized}
	src, err := balance.NewVolcengine(balance.Config{AccessKey: "a", SecretKey: "s", BaseURL: serve(t, f)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Balance(context.Background(), "m"); err == nil || !strings.Contains(err.Error(), "SignatureDoesNotMatch") {
		t.Fatalf("err = %v, want the provider's error code", err)
	}
}

func TestVolcengineNeedsKeys(t *testing.T) {
	if _, err := balance.NewVolcengine(balance.Config{}, nil); ledger.ErrorCode(err) != ledger.CodeInvalidRequest {
		t.Fatalf("err = %v", err)
	}
}

func TestHTTPJSON(t *testing.T) {
	var gotAuth, gotPath string
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotPath = r.Header.Get("Authorization"), r.URL.Path
		switch r.URL.Path {
		case "/v/deepseek-v4-flash":
			fmt.Fprint(w, `{"data":{"available":1726526,"list":[{"n":"42.9"}]}}`)
		case "/v/broken":
			http.Error(w, "down", http.StatusBadGateway)
		default:
			fmt.Fprint(w, `{"data":{"available":"n/a"}}`)
		}
	}))
	for _, tc := range []struct {
		name, model, field string
		want               ledger.Units
		fails              bool
	}{
		{"Number", "deepseek-v4-flash", "data.available", 1_726_526, false},
		{"ArrayIndexStringFloored", "deepseek-v4-flash", "data.list.0.n", 42, false},
		{"MissingField", "deepseek-v4-flash", "data.missing", 0, true},
		{"NotANumber", "other", "data.available", 0, true},
		{"HTTPError", "broken", "data.available", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := balance.New(balance.Config{Kind: balance.KindHTTPJSON, URL: base + "/v/{model}", Field: tc.field, Token: "tk"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := src.Balance(context.Background(), tc.model)
			if (err != nil) != tc.fails || got != tc.want {
				t.Fatalf("balance = %d, %v; want %d (fails=%v)", got, err, tc.want, tc.fails)
			}
			if gotAuth != "Bearer tk" || gotPath != "/v/"+tc.model {
				t.Fatalf("request auth %q path %q", gotAuth, gotPath)
			}
		})
	}
	if _, err := balance.NewHTTPJSON("ftp://x", "a", "", nil); err == nil {
		t.Fatal("ftp URL accepted")
	}
}

func TestManualHasNoReading(t *testing.T) {
	src, err := balance.New(balance.Config{Kind: balance.KindManual}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Balance(context.Background(), "m"); ledger.ErrorCode(err) != ledger.CodeInvalidRequest {
		t.Fatalf("err = %v", err)
	}
	if m, ok := src.(interface{ Manual() bool }); !ok || !m.Manual() {
		t.Fatal("manual source does not say so")
	}
	if _, err := balance.New(balance.Config{Kind: "sorcery"}, nil); err == nil {
		t.Fatal("unknown kind accepted")
	}
}

func TestParseUnits(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  ledger.Units
		fails bool
	}{
		{"1726526", 1_726_526, false},
		{"1726526.000000", 1_726_526, false},
		{"596869.9", 596_869, false}, // floored: a low reading only makes the guard stricter
		{" 42 ", 42, false},
		{"1.7e6", 1_700_000, false},
		{"", 0, true},
		{"-5", 0, true},
		{"abc", 0, true},
		{"1e400", 0, true},
		{"9007199254740992", 0, true}, // 2^53: beyond ledger.MaxUnits
	} {
		got, err := balance.ParseUnits(tc.in)
		if (err != nil) != tc.fails || got != tc.want {
			t.Errorf("ParseUnits(%q) = %d, %v; want %d (fails=%v)", tc.in, got, err, tc.want, tc.fails)
		}
	}
}

func FuzzField(f *testing.F) {
	f.Add([]byte(`{"data":{"available":1726526}}`), "data.available")
	f.Add([]byte(`{"a":[{"b":"1.5"}]}`), "a.0.b")
	f.Add([]byte(`[1,2]`), "1")
	f.Add([]byte(`{"a":-1}`), "a")
	f.Fuzz(func(t *testing.T, doc []byte, field string) {
		u, err := balance.Field(doc, strings.Split(field, "."))
		if err == nil && (u < 0 || u > ledger.MaxUnits) {
			t.Fatalf("Field returned %d without error", u)
		}
	})
}

func FuzzParseUnits(f *testing.F) {
	for _, s := range []string{"1", "1.000000", "1e3", "-1", "NaN", "Inf", "0x10", "99999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := balance.ParseUnits(s)
		if err == nil && (u < 0 || u > ledger.MaxUnits) {
			t.Fatalf("ParseUnits(%q) = %d without error", s, u)
		}
	})
}

func TestVolcengineExpiriesReuseTheListing(t *testing.T) {
	f := &fakeBilling{pkgs: []map[string]string{
		pkg("1", "deepseek-v4-flash", "Effective", "188310"),
		pkg("2", "deepseek-v4-flash", "Effective", "761966.5"),
		pkg("3", "deepseek-v4-flash", "Expired", "5"),
		pkg("4", "other-model", "Effective", "7"),
	}}
	f.pkgs[0]["ExpiryTime"] = "2026-08-02T00:00:00+08:00"
	f.pkgs[1]["ExpiryTime"] = "2026-09-01 09:30:00"
	src, err := balance.NewVolcengine(balance.Config{AccessKey: "a", SecretKey: "s", BaseURL: serve(t, f)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if b, err := src.Balance(ctx, "deepseek-v4-flash"); err != nil || b != 188_310+761_966 {
		t.Fatalf("balance = %d, %v", b, err)
	}
	exp, err := src.Expiries(ctx, "deepseek-v4-flash")
	if err != nil {
		t.Fatal(err)
	}
	cst := time.FixedZone("CST", 8*3600)
	want := []balance.Expiry{{At: time.Date(2026, 8, 2, 0, 0, 0, 0, cst), Units: 188_310},
		{At: time.Date(2026, 9, 1, 9, 30, 0, 0, cst), Units: 761_966}}
	if len(exp) != 2 || !exp[0].At.Equal(want[0].At) || exp[0].Units != want[0].Units ||
		!exp[1].At.Equal(want[1].At) || exp[1].Units != want[1].Units {
		t.Fatalf("expiries %v, want %v", exp, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) != 1 {
		t.Fatalf("%d listings for one sync, want 1", len(f.requests))
	}
}

func TestParseExpiry(t *testing.T) {
	cst := time.FixedZone("CST", 8*3600) // a time without an offset is the provider's (China)
	for _, tc := range []struct {
		in    string
		want  time.Time
		ok    bool
		fails bool
	}{
		{"2026-08-02T00:00:00Z", time.Date(2026, 8, 2, 0, 0, 0, 0, time.UTC), true, false},
		{"2026-08-02T00:00:00", time.Date(2026, 8, 2, 0, 0, 0, 0, cst), true, false},
		{"2026-08-02 00:00:00", time.Date(2026, 8, 2, 0, 0, 0, 0, cst), true, false},
		{"2026-08-02", time.Date(2026, 8, 2, 0, 0, 0, 0, cst), true, false},
		{"", time.Time{}, false, false},
		{"next tuesday", time.Time{}, false, true},
	} {
		got, ok, err := balance.ParseExpiry(tc.in)
		if ok != tc.ok || (err != nil) != tc.fails || !got.Equal(tc.want) {
			t.Errorf("ParseExpiry(%q) = %s, %v, %v; want %s, %v", tc.in, got, ok, err, tc.want, tc.ok)
		}
	}
}
