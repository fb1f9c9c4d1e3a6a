package alert

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"
)

// SignatureHeader carries a webhook body's signature.
const SignatureHeader = "X-Quotagate-Signature"

const signaturePrefix = "sha256="

// Secret is a webhook's signing secret. It prints as [redacted] through
// fmt and log/slog, so that logging a configuration never shows it;
// string(s) is the secret itself.
type Secret string

func (Secret) String() string       { return "[redacted]" }
func (Secret) GoString() string     { return `"[redacted]"` }
func (Secret) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// sum is the HMAC-SHA256 of body keyed with s.
func (s Secret) sum(body []byte) []byte {
	m := hmac.New(sha256.New, []byte(s))
	m.Write(body)
	return m.Sum(nil)
}

// Sign returns the SignatureHeader value for body: "sha256=" and the
// lowercase hex HMAC-SHA256 of the body keyed with the secret.
func Sign(secret Secret, body []byte) string {
	return signaturePrefix + hex.EncodeToString(secret.sum(body))
}

// Verify reports whether header is body's signature under secret, in
// constant time. A receiver checks the raw body it read, before parsing it.
func Verify(secret Secret, body []byte, header string) bool {
	hexSum, ok := strings.CutPrefix(strings.TrimSpace(header), signaturePrefix)
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil {
		return false
	}
	return hmac.Equal(got, secret.sum(body))
}
