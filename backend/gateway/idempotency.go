package gateway

import (
	"fmt"
	"hash/crc32"
	"net/http"
	"strconv"
	"strings"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Request headers of the retry group: an SDK's automatic retries of one
// user call are labelled as such, and an Idempotency-Key refuses a second
// run of the same call instead of taking a second hold. The Stainless-made
// SDKs (openai, @anthropic-ai/sdk, openai-go) send X-Stainless-Retry-Count
// on every attempt (0 on the first); an Idempotency-Key only when the caller
// sets one (none of the pinned SDKs does by itself).
const (
	headerIdempotencyKey = "Idempotency-Key"
	headerRetryCount     = "X-Stainless-Retry-Count"
)

// retryFacts is what a request says of its place among its attempts.
type retryFacts struct {
	key   string // Idempotency-Key, "" when none
	count int    // X-Stainless-Retry-Count, 0 when absent or unreadable
	sdk   bool   // the request carries X-Stainless-Retry-Count
}

// readRetryFacts reads the headers. A malformed Idempotency-Key is refused
// (400): it decides whether the call runs. A retry count that is not a
// small whole number is recorded as 0: it only labels the run.
func readRetryFacts(h http.Header) (retryFacts, error) {
	var f retryFacts
	if v := h.Values(headerIdempotencyKey); len(v) > 0 {
		if len(v) > 1 {
			return f, ledger.Errorf(ledger.CodeInvalidRequest, "the request carries %d Idempotency-Key headers; send one", len(v))
		}
		f.key = strings.TrimSpace(v[0])
		if f.key == "" {
			return f, ledger.Errorf(ledger.CodeInvalidRequest, "the Idempotency-Key header is empty")
		}
		if err := ledger.CheckIdempotencyKey(f.key); err != nil {
			return f, err
		}
	}
	if v, ok := h[http.CanonicalHeaderKey(headerRetryCount)]; ok && len(v) > 0 {
		f.sdk = true
		if n, err := strconv.Atoi(strings.TrimSpace(v[0])); err == nil && n >= 0 && n <= ledger.MaxRetryCount {
			f.count = n
		}
	}
	return f, nil
}

// fingerprint identifies a request body at door p for the retry group of an
// SDK's attempts without an Idempotency-Key: the same tenant sending the
// same bytes to the same door. Only such requests are hashed, with the
// hardware CRC-32C (about 0.1 ms for a 1 MB conversation, a tenth of
// SHA-256; BenchmarkFingerprint) and the length. A link also needs the
// same tenant, the previous retry count and the last 24 hours, so a CRC
// collision is very unlikely to mislabel a run — and could only mislabel
// the tenant's own retry_of, never money.
func (f retryFacts) fingerprint(p Protocol, body []byte) string {
	if f.key != "" || !f.sdk {
		return ""
	}
	return fmt.Sprintf("%s-%d-%08x", p, len(body), crc32.Checksum(body, castagnoli))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)
