package alert_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/alert"
)

// body and its signature were computed outside Go:
// python3 -c 'import hmac,hashlib; print(hmac.new(b"whsec-test", BODY, hashlib.sha256).hexdigest())'
const (
	body      = `{"kind":"threshold","tenant":"acme","threshold":80,"period":"2026-12","used":"4.000000","budget":"5.00","currency":"USD","at":"2026-12-14T09:30:00.123Z","run":"run_01"}`
	signature = "sha256=9a97a8839f745ecac482662f8563bf1e2416e5c972aafa13eba0635c5e8443bb"
)

func TestSign(t *testing.T) {
	if got := alert.Sign("whsec-test", []byte(body)); got != signature {
		t.Fatalf("Sign = %s, want %s", got, signature)
	}
}

func TestVerify(t *testing.T) {
	for _, tc := range []struct {
		name   string
		secret alert.Secret
		body   string
		header string
		ok     bool
	}{
		{"OK", "whsec-test", body, signature, true},
		{"UppercaseHex", "whsec-test", body, "sha256=" + strings.ToUpper(strings.TrimPrefix(signature, "sha256=")), true},
		{"WrongSecret", "whsec-other", body, signature, false},
		{"BodyChanged", "whsec-test", body + " ", signature, false},
		{"NoPrefix", "whsec-test", body, strings.TrimPrefix(signature, "sha256="), false},
		{"OtherAlgorithm", "whsec-test", body, "sha1=" + strings.TrimPrefix(signature, "sha256="), false},
		{"NotHex", "whsec-test", body, "sha256=zz", false},
		{"Truncated", "whsec-test", body, signature[:len(signature)-2], false},
		{"Empty", "whsec-test", body, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := alert.Verify(tc.secret, []byte(tc.body), tc.header); got != tc.ok {
				t.Fatalf("Verify = %v, want %v", got, tc.ok)
			}
		})
	}
}

func TestSecretNeverPrints(t *testing.T) {
	s := alert.Secret("whsec-test")
	var log strings.Builder
	slog.New(slog.NewTextHandler(&log, nil)).Info("webhook", "secret", s)
	slog.New(slog.NewJSONHandler(&log, nil)).Info("webhook", "secret", s)
	cfg := struct {
		URL    string
		Secret alert.Secret
	}{"https://hooks.example", s}
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %s %q %+v %#v", s, s, s, cfg, cfg), log.String()} {
		if strings.Contains(out, "whsec") {
			t.Fatalf("the secret printed: %s", out)
		}
	}
}
