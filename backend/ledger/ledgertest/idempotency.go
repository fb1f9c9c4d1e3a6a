package ledgertest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// RunIdempotency is the contract of the per-run facts, the Idempotency-Key
// and the retry group: the facts round-trip; a key in use
// by a run of the same tenant within ledger.IdempotencyWindow refuses the
// call with CodeDuplicateRequest naming that run, reserving nothing; another
// tenant's equal key is unrelated; a run released with proof of no work
// does not use its key up, and its retry names it; of many concurrent calls
// with one key exactly one is admitted.
func RunIdempotency(t *testing.T, open Opener) {
	t.Run("FactsRoundTrip", func(t *testing.T) { testRunFacts(t, open(t)) })
	t.Run("DuplicateRequest", func(t *testing.T) { testDuplicateRequest(t, open(t)) })
	t.Run("ReleasedRunDoesNotUseTheKey", func(t *testing.T) { testReleasedKey(t, open(t)) })
	t.Run("RetryOfByFingerprint", func(t *testing.T) { testRetryFingerprint(t, open(t)) })
	t.Run("CachedTokensAtSettle", func(t *testing.T) { testCachedTokens(t, open(t)) })
	t.Run("ConcurrentSameKey", func(t *testing.T) { testConcurrentKey(t, open) })
}

func keyed(id ledger.RunID, tenant, key string, reserve ledger.Units) ledger.AdmitRequest {
	return ledger.AdmitRequest{RunID: id, TenantID: tenant, Upstream: "demo", Model: "demo-model",
		ReserveUnits: reserve, IdempotencyKey: key, Door: "chat", UpstreamProtocol: "chat", Actor: ledger.TenantActor(tenant)}
}

func testRunFacts(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("a", 1000, 10))
	req := keyed("r1", "a", "stainless-node-retry-7f0c", 10)
	req.Door, req.UpstreamProtocol, req.RetryCount = "messages", "chat", 2
	admitted := MustAdmit(t, st, req)
	got := mustRun(t, st, "r1")
	if got.Door != "messages" || got.UpstreamProtocol != "chat" || got.IdempotencyKey != req.IdempotencyKey ||
		got.RetryCount != 2 || got.RetryOf != "" || got.CachedTokens != 0 || !got.Translated() {
		t.Fatalf("run read back = %+v", got)
	}
	if admitted.Door != got.Door || admitted.IdempotencyKey != got.IdempotencyKey || admitted.RetryCount != got.RetryCount {
		t.Fatalf("Admit returned %+v, the store holds %+v", admitted, got)
	}
	listed, err := st.Runs(ctx, ledger.RunFilter{TenantID: "a"})
	if err != nil || len(listed) != 1 || listed[0].Door != "messages" || listed[0].IdempotencyKey != req.IdempotencyKey {
		t.Fatalf("Runs = %+v, %v", listed, err)
	}
	if d := lastAudit(t, st, "a").Detail; !strings.Contains(d, "door=messages upstream_protocol=chat idempotency_key="+req.IdempotencyKey+" retry_count=2") {
		t.Fatalf("admit row detail %q does not carry the run's facts", d)
	}
	for _, bad := range []ledger.AdmitRequest{
		func() ledger.AdmitRequest { r := keyed("bad1", "a", "has space", 1); return r }(),
		func() ledger.AdmitRequest {
			r := keyed("bad2", "a", strings.Repeat("k", ledger.MaxIdempotencyKeyBytes+1), 1)
			return r
		}(),
		func() ledger.AdmitRequest { r := keyed("bad3", "a", "", 1); r.Door = "websocket"; return r }(),
		func() ledger.AdmitRequest { r := keyed("bad4", "a", "", 1); r.RetryCount = -1; return r }(),
	} {
		_, err := st.Admit(ctx, bad)
		WantCode(t, err, ledger.CodeInvalidRequest)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "a", BudgetUnits: 1000, HeldUnits: 10, AvailableUnits: 990, Active: 1})
}

func testDuplicateRequest(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("a", 100, 10), Tenant("b", 100, 10))
	MustAdmit(t, st, keyed("r1", "a", "k1", 30))
	refusals := int64(0)
	for _, tc := range []struct {
		name string
		end  func() error
	}{
		{"InFlight", func() error { return nil }},
		{"Settled", func() error { _, err := st.Settle(ctx, "r1", 12, "usage", by); return err }},
	} {
		if err := tc.end(); err != nil {
			t.Fatal(err)
		}
		before, _ := st.Balance(ctx, "a")
		_, err := st.Admit(ctx, keyed(ledger.RunID("dup-"+tc.name), "a", "k1", 30))
		WantCode(t, err, ledger.CodeDuplicateRequest)
		if got := ledger.ErrorRunID(err); got != "r1" {
			t.Fatalf("%s: the refusal names run %q, want r1 (%v)", tc.name, got, err)
		}
		if !strings.Contains(ledger.ErrorMessage(err), "r1") {
			t.Fatalf("%s: the message %q does not name the earlier run", tc.name, ledger.ErrorMessage(err))
		}
		WantBalance(t, st, before)
		if _, err := st.Run(ctx, ledger.RunID("dup-"+tc.name)); ledger.ErrorCode(err) != ledger.CodeRunNotFound {
			t.Fatalf("%s: the refused run was recorded: %v", tc.name, err)
		}
		refusals++
		if n := rejects(t, st, "a", ledger.CodeDuplicateRequest); n != refusals {
			t.Fatalf("%s: the audit counts %d duplicate_request refusals, want %d", tc.name, n, refusals)
		}
	}
	// Another tenant's equal key is unrelated.
	other := MustAdmit(t, st, keyed("b1", "b", "k1", 30))
	if other.RetryOf != "" {
		t.Fatalf("another tenant's run joined a's retry group: %+v", other)
	}
	// The duplicate is refused before the budget is looked at: a call that
	// could not be afforded any more still learns it is a duplicate.
	MustAdmit(t, st, keyed("r2", "a", "k2", 88))
	_, err := st.Admit(ctx, keyed("r3", "a", "k2", 88))
	WantCode(t, err, ledger.CodeDuplicateRequest)
	_, err = st.Admit(ctx, keyed("r4", "nobody", "k2", 1))
	WantCode(t, err, ledger.CodeInvalidAPIKey)
	// A held run uses its key up as well (the provider may have done the work).
	if _, err := st.KeepHold(ctx, "r2", ledger.RunInterrupted, "cut", by); err != nil {
		t.Fatal(err)
	}
	_, err = st.Admit(ctx, keyed("r5", "a", "k2", 1))
	WantCode(t, err, ledger.CodeDuplicateRequest)
	if ledger.ErrorRunID(err) != "r2" {
		t.Fatalf("refusal names %q, want r2", ledger.ErrorRunID(err))
	}
	WantVerified(t, st)
}

// rejects counts the refusals of tenant with code in the audit trail.
func rejects(tb testing.TB, st ledger.Store, tenant, code string) int64 {
	tb.Helper()
	var n int64
	for _, e := range tenantAudit(tb, st, tenant) {
		if e.Kind == ledger.AuditReject && e.Reason == code {
			n += e.Count
		}
	}
	return n
}

func testReleasedKey(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("a", 100, 10))
	MustAdmit(t, st, keyed("r1", "a", "k", 10))
	if _, err := st.ReleaseHold(ctx, "r1", ledger.RunFailed, "upstream_status=500 before any output", by); err != nil {
		t.Fatal(err)
	}
	req := keyed("r2", "a", "k", 10)
	req.RetryCount = 1
	r2 := MustAdmit(t, st, req)
	if r2.RetryOf != "r1" || mustRun(t, st, "r2").RetryOf != "r1" {
		t.Fatalf("the retry of a released run: %+v, want retry_of r1", r2)
	}
	if d := lastAudit(t, st, "a").Detail; !strings.Contains(d, "retry_of=r1") {
		t.Fatalf("admit detail %q lacks retry_of", d)
	}
	_, err := st.Admit(ctx, keyed("r3", "a", "k", 10))
	WantCode(t, err, ledger.CodeDuplicateRequest)
	if ledger.ErrorRunID(err) != "r2" {
		t.Fatalf("refusal names %q, want the newest run r2", ledger.ErrorRunID(err))
	}
	WantVerified(t, st)
}

func testRetryFingerprint(t *testing.T, st ledger.Store) {
	MustApply(t, st, Tenant("a", 1000, 10), Tenant("b", 1000, 10))
	fp := func(id ledger.RunID, tenant, fingerprint string, retry int) ledger.Run {
		t.Helper()
		req := keyed(id, tenant, "", 10)
		req.Fingerprint, req.RetryCount = fingerprint, retry
		return MustAdmit(t, st, req)
	}
	for _, tc := range []struct {
		id          ledger.RunID
		tenant, fp  string
		retry       int
		wantRetryOf ledger.RunID
	}{
		{"a0", "a", "f1", 0, ""},
		{"x0", "a", "f2", 0, ""},   // another body
		{"a1", "a", "f1", 1, "a0"}, // the SDK's first retry
		{"a2", "a", "f1", 2, "a1"}, // its second
		{"b1", "b", "f1", 1, ""},   // another tenant's equal body
		{"a3", "a", "f1", 3, "a2"},
		{"c1", "a", "f3", 1, ""}, // a retry whose first attempt never became a run (refused before admission)
		{"n0", "a", "", 1, ""},   // no fingerprint: no link
	} {
		if got := fp(tc.id, tc.tenant, tc.fp, tc.retry); got.RetryOf != tc.wantRetryOf || got.RetryCount != tc.retry {
			t.Errorf("%s: retry_of %q retry_count %d, want %q %d", tc.id, got.RetryOf, got.RetryCount, tc.wantRetryOf, tc.retry)
		}
	}
}

func testCachedTokens(t *testing.T, st ledger.Store) {
	ctx := context.Background()
	MustApply(t, st, Tenant("a", 1000, 10))
	MustAdmit(t, st, keyed("r1", "a", "", 100))
	MustAdmit(t, st, keyed("r2", "a", "", 100))
	_, err := st.SettleUsage(ctx, "r1", ledger.Settlement{Units: 60, CachedTokens: -1, Evidence: "usage"}, by)
	WantCode(t, err, ledger.CodeInvalidRequest)
	run, err := st.SettleUsage(ctx, "r1", ledger.Settlement{Units: 60, CachedTokens: 40, Evidence: "usage 60 in (40 cached)"}, by)
	if err != nil || run.CachedTokens != 40 || run.SpentUnits != 60 {
		t.Fatalf("SettleUsage = %+v, %v", run, err)
	}
	if got := mustRun(t, st, "r1"); got.CachedTokens != 40 || got.Usage != ledger.UsageTrusted {
		t.Fatalf("run read back = %+v", got)
	}
	if run, err := st.Settle(ctx, "r2", 5, "usage", by); err != nil || run.CachedTokens != 0 {
		t.Fatalf("Settle = %+v, %v", run, err)
	}
	WantBalance(t, st, ledger.Balance{TenantID: "a", BudgetUnits: 1000, SpentUnits: 65, AvailableUnits: 935})
	WantVerified(t, st)
}

// testConcurrentKey races many calls sharing keys: of each key's callers
// exactly one is admitted, every other is refused duplicate_request naming
// it — also with max_concurrent 1, where the duplicate answer must win over
// the concurrency limit.
func testConcurrentKey(t *testing.T, open Opener) {
	for _, tc := range []struct {
		name           string
		maxConc, keys  int
		callersEachKey int
	}{
		{"OneKey100Callers", 1000, 1, 100},
		{"OneKeyMaxConcurrent1", 1, 1, 50},
		{"TenKeys20CallersEach", 1000, 10, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := open(t)
			MustApply(t, st, Tenant("a", 1_000_000, tc.maxConc), Tenant("b", 1_000_000, tc.maxConc))
			start := make(chan struct{})
			var wg sync.WaitGroup
			var mu sync.Mutex
			admitted := map[string][]ledger.RunID{} // key → admitted runs
			named := map[string]map[ledger.RunID]int{}
			codes := map[string]int{}
			for k := range tc.keys {
				key := fmt.Sprintf("key-%d", k)
				named[key] = map[ledger.RunID]int{}
				for i := range tc.callersEachKey {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						id := ledger.RunID(fmt.Sprintf("%s-%d", key, i))
						_, err := st.Admit(context.Background(), keyed(id, "a", key, 10))
						mu.Lock()
						defer mu.Unlock()
						if err != nil {
							codes[ledger.ErrorCode(err)]++
							named[key][ledger.ErrorRunID(err)]++
							return
						}
						admitted[key] = append(admitted[key], id)
					}()
				}
			}
			// Tenant b's calls with the same keys race alongside, unrelated.
			var bAdmitted int
			for k := range tc.keys {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					if _, err := st.Admit(context.Background(), keyed(ledger.RunID(fmt.Sprint("b-", k)), "b", fmt.Sprintf("key-%d", k), 10)); err == nil {
						mu.Lock()
						bAdmitted++
						mu.Unlock()
					} else {
						t.Errorf("tenant b's call with key-%d: %v", k, err)
					}
				}()
			}
			close(start)
			wg.Wait()
			for key, ids := range admitted {
				if len(ids) != 1 {
					t.Errorf("%s: %d admitted (%v), want exactly 1", key, len(ids), ids)
					continue
				}
				if n := named[key][ids[0]]; n != tc.callersEachKey-1 {
					t.Errorf("%s: %d refusals name the admitted run %s, want %d (%v)", key, n, ids[0], tc.callersEachKey-1, named[key])
				}
			}
			if len(admitted) != tc.keys || codes[ledger.CodeDuplicateRequest] != tc.keys*(tc.callersEachKey-1) || len(codes) != 1 {
				t.Fatalf("admitted %d keys of %d, refusals %v", len(admitted), tc.keys, codes)
			}
			if bAdmitted != tc.keys {
				t.Fatalf("tenant b: %d of %d admitted", bAdmitted, tc.keys)
			}
			WantBalance(t, st, ledger.Balance{TenantID: "a", BudgetUnits: 1_000_000, HeldUnits: ledger.Units(10 * tc.keys),
				AvailableUnits: 1_000_000 - ledger.Units(10*tc.keys), Active: tc.keys})
			WantVerified(t, st)
		})
	}
}

// ClockOpener returns a fresh, empty store whose clock is now.
type ClockOpener func(tb testing.TB, now func() time.Time) ledger.Store

// RunIdempotencyWindow checks that a key is in use for
// ledger.IdempotencyWindow after its run's admission and free after it, with
// the retry group following the same window.
func RunIdempotencyWindow(t *testing.T, open ClockOpener) {
	var mu sync.Mutex
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
	advance := func(d time.Duration) { mu.Lock(); at = at.Add(d); mu.Unlock() }
	st := open(t, now)
	ctx := context.Background()
	MustApply(t, st, Tenant("a", 1000, 10))
	MustAdmit(t, st, keyed("r1", "a", "k", 10))
	advance(ledger.IdempotencyWindow - time.Second)
	_, err := st.Admit(ctx, keyed("r2", "a", "k", 10))
	WantCode(t, err, ledger.CodeDuplicateRequest)
	advance(2 * time.Second)
	if r3 := MustAdmit(t, st, keyed("r3", "a", "k", 10)); r3.RetryOf != "" {
		t.Fatalf("a key reused after the window joined the old run's group: %+v", r3)
	}
	req := keyed("f0", "a", "", 10)
	req.Fingerprint = "f"
	MustAdmit(t, st, req)
	advance(ledger.IdempotencyWindow + time.Second)
	req.RunID, req.RetryCount = "f1", 1
	if f1 := MustAdmit(t, st, req); f1.RetryOf != "" {
		t.Fatalf("a retry linked to an attempt older than the window: %+v", f1)
	}
}
