package gateway

import (
	"net/http"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

func TestReadRetryFacts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		key, n    []string // header values; nil: absent
		wantKey   string
		wantCount int
		wantSDK   bool
		wantErr   bool
	}{
		{name: "None"},
		{name: "StainlessFirstAttempt", n: []string{"0"}, wantSDK: true},
		{name: "StainlessRetry", n: []string{"2"}, wantCount: 2, wantSDK: true},
		{name: "KeyAndCount", key: []string{"stainless-node-retry-1f"}, n: []string{"1"}, wantKey: "stainless-node-retry-1f", wantCount: 1, wantSDK: true},
		{name: "CountNotANumber", n: []string{"two"}, wantSDK: true},
		{name: "CountNegative", n: []string{"-1"}, wantSDK: true},
		{name: "CountHuge", n: []string{"99999999999999999999"}, wantSDK: true},
		{name: "KeyTrimmed", key: []string{"  k1 "}, wantKey: "k1"},
		{name: "KeyEmpty", key: []string{" "}, wantErr: true},
		{name: "KeyTwice", key: []string{"a", "b"}, wantErr: true},
		{name: "KeyWithSpace", key: []string{"a b"}, wantErr: true},
		{name: "KeyNotASCII", key: []string{"ключ"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.key != nil {
				h["Idempotency-Key"] = tc.key
			}
			if tc.n != nil {
				h["X-Stainless-Retry-Count"] = tc.n
			}
			f, err := readRetryFacts(h)
			if (err != nil) != tc.wantErr || (err != nil && ledger.ErrorCode(err) != ledger.CodeInvalidRequest) {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && (f.key != tc.wantKey || f.count != tc.wantCount || f.sdk != tc.wantSDK) {
				t.Fatalf("facts %+v", f)
			}
		})
	}
	a := retryFacts{sdk: true}.fingerprint(ProtocolChat, []byte("{}"))
	if a == "" || a == (retryFacts{sdk: true}).fingerprint(ProtocolMessages, []byte("{}")) ||
		(retryFacts{}).fingerprint(ProtocolChat, []byte("{}")) != "" || (retryFacts{sdk: true, key: "k"}).fingerprint(ProtocolChat, nil) != "" {
		t.Fatalf("fingerprints: only SDK requests without a key, one per door and body (%q)", a)
	}
}

// FuzzRetryFacts: any header values either give facts the ledger accepts
// or a 400; never a panic.
func FuzzRetryFacts(f *testing.F) {
	f.Add("stainless-node-retry-5b1f", "1")
	f.Add("", "0")
	f.Add("a b", "x")
	f.Fuzz(func(t *testing.T, key, count string) {
		h := http.Header{"Idempotency-Key": {key}, "X-Stainless-Retry-Count": {count}}
		fa, err := readRetryFacts(h)
		if err != nil {
			if ledger.ErrorCode(err) != ledger.CodeInvalidRequest {
				t.Fatalf("error %v is not a 400", err)
			}
			return
		}
		req := ledger.AdmitRequest{IdempotencyKey: fa.key, RetryCount: fa.count, Fingerprint: fa.fingerprint(ProtocolChat, []byte(key))}
		if err := ledger.CheckRunFacts(req); err != nil {
			t.Fatalf("accepted facts %+v the ledger refuses: %v", fa, err)
		}
	})
}

// BenchmarkFingerprint: what an SDK request without a key pays for its
// retry group, for a ~1 MB body (a 200k-token conversation).
func BenchmarkFingerprint(b *testing.B) {
	body := make([]byte, 1<<20)
	f := retryFacts{sdk: true}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		_ = f.fingerprint(ProtocolChat, body)
	}
}
