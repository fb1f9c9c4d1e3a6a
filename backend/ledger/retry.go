package ledger

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// KeyedRun is an earlier run of a tenant carrying the Idempotency-Key an
// admission asks with: what KeyedRetry decides on.
type KeyedRun struct {
	ID        RunID
	Status    RunStatus
	Usage     UsageStatus
	CreatedAt time.Time
}

// windowWords is IdempotencyWindow in a sentence.
const windowWords = "the last 24 hours"

// KeyedRows is what ScanKeyedRuns reads of a store's query result: rows of
// (id, usage, status, created_at in Unix nanoseconds), newest first.
// *sql.Rows and pgx.Rows satisfy it.
type KeyedRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ScanKeyedRuns reads the earlier runs carrying a key, for KeyedRetry.
func ScanKeyedRuns(rows KeyedRows) ([]KeyedRun, error) {
	var out []KeyedRun
	for rows.Next() {
		var k KeyedRun
		var id, usage, status string
		var at int64
		if err := rows.Scan(&id, &usage, &status, &at); err != nil {
			return nil, err
		}
		k.ID, k.Usage, k.Status, k.CreatedAt = RunID(id), UsageStatus(usage), RunStatus(status), time.Unix(0, at).UTC()
		out = append(out, k)
	}
	return out, rows.Err()
}

// KeyedRetry is the one rule for an admission whose IdempotencyKey matches
// earlier runs of its tenant within IdempotencyWindow (earlier: newest first).
// A run that ended released (the provider provably did no work: it refused
// before any output, was never reached, or the call gave up while queued)
// does not use its key up; any other — in flight, settled, held, reconciled
// — does, and the admission is refused CodeDuplicateRequest naming the
// newest such run. Otherwise the admission joins the key's retry group:
// retryOf is the newest earlier run ("" when there is none). Both stores
// call it inside the admission's atomic step.
func KeyedRetry(req AdmitRequest, earlier []KeyedRun) (retryOf RunID, err error) {
	for _, k := range earlier {
		if k.Usage == UsageReleased {
			continue
		}
		e := Errorf(CodeDuplicateRequest,
			"the Idempotency-Key %q was already used by run %s (%s, usage %s) within %s; this request was not admitted: nothing was reserved or sent upstream",
			req.IdempotencyKey, k.ID, k.Status, k.Usage, windowWords)
		e.RunID = k.ID
		return "", e
	}
	if len(earlier) > 0 {
		return earlier[0].ID, nil
	}
	return "", nil
}

// CheckRunFacts reports CodeInvalidRequest for an AdmitRequest whose door,
// protocol, Idempotency-Key or retry count cannot be recorded.
func CheckRunFacts(req AdmitRequest) error {
	for _, p := range []struct{ what, v string }{{"door", req.Door}, {"upstream protocol", req.UpstreamProtocol}} {
		switch p.v {
		case "", "chat", "responses", "messages", "gemini", "completions", "embeddings":
		default:
			return Errorf(CodeInvalidRequest, "unknown %s %q (chat, responses, messages, gemini, completions or embeddings)", p.what, p.v)
		}
	}
	if err := CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return err
	}
	if req.RetryCount < 0 || req.RetryCount > MaxRetryCount {
		return Errorf(CodeInvalidRequest, "retry count %d is outside 0–%d", req.RetryCount, MaxRetryCount)
	}
	if len(req.Fingerprint) > 128 {
		return Errorf(CodeInvalidRequest, "a request fingerprint is at most 128 bytes")
	}
	return nil
}

// RunFacts is the per-run facts of run as the admit audit row's detail ends
// with them (the CSV's detail column): " door=messages upstream=chat
// idempotency_key=… retry_count=1 retry_of=… attempts=2 failover_of=…",
// each only when set.
func RunFacts(run Run) string {
	var b strings.Builder
	if run.Door != "" {
		b.WriteString(" door=" + run.Door)
	}
	if run.UpstreamProtocol != "" {
		b.WriteString(" upstream_protocol=" + run.UpstreamProtocol)
	}
	if run.IdempotencyKey != "" {
		b.WriteString(" idempotency_key=" + run.IdempotencyKey)
	}
	if run.RetryCount > 0 {
		b.WriteString(" retry_count=" + strconv.Itoa(run.RetryCount))
	}
	if run.RetryOf != "" {
		b.WriteString(" retry_of=" + string(run.RetryOf))
	}
	if run.FailoverOf != "" {
		b.WriteString(" attempts=" + strconv.Itoa(run.Attempts) + " failover_of=" + string(run.FailoverOf))
	}
	return b.String()
}

// CheckSettlement reports CodeInvalidRequest for a Settlement out of range.
func CheckSettlement(s Settlement) error {
	if err := CheckUnits("settled units", s.Units); err != nil {
		return err
	}
	if s.CachedTokens < 0 || s.CachedTokens > int64(MaxUnits) {
		return Errorf(CodeInvalidRequest, "cached tokens %d are outside 0–%d", s.CachedTokens, MaxUnits)
	}
	if s.Usage != nil {
		if _, err := usageTokens(*s.Usage); err != nil {
			return err
		}
	}
	return nil
}

// SettleUsageRule is SettleRule that also records s.CachedTokens on the run
// (Store.SettleUsage).
func SettleUsageRule(s Settlement) Rule {
	r := settleRule(s)
	if r.Err != nil {
		return r
	}
	decide := r.decide
	r.decide = func(run Run) (Transition, error) {
		t, err := decide(run)
		t.After.CachedTokens = s.CachedTokens
		return t, err
	}
	return r
}

// SettleUsage is Settle recording the usage's cached tokens on the run too.
func (t Transitions) SettleUsage(ctx context.Context, id RunID, s Settlement, actor Actor) (Run, error) {
	return t.Apply(ctx, id, actor, SettleUsageRule(s))
}
