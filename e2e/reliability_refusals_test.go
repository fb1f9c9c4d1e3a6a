package e2e_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/server"
)

// TestReliabilityRefusalsBounded: a flood of refused
// calls is audited but bounded — 600 refusals of one tenant with one code
// take one audit row (two if the clock crosses a minute) whose count is
// 600, the ledger grows by a few kilobytes instead of ~1.5 KB a refusal,
// and the admissions and changes of money around them keep a row each.
func TestReliabilityRefusalsBounded(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	if got := r.chat(r.keyB, chatBody("hello", false, 16)); got.status != 200 {
		t.Fatalf("warm-up: %d %s", got.status, got.body)
	}
	size := func() int64 { // the ledger file's size once its WAL is checkpointed into it
		db, err := sql.Open("sqlite", "file:"+filepath.Join(r.dir, server.LedgerFile))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(r.dir, server.LedgerFile))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before, sizeBefore := r.counts(), size()
	const n = 600
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				// tenant b's budget is 1000: a 5000-token cap is refused.
				if got := r.chat(r.keyB, chatBody("too big", false, 5000)); got.status != 402 {
					t.Errorf("refusal: %d %s", got.status, got.body)
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if got := r.chat(r.keyB, chatBody("hello again", false, 16)); got.status != 200 {
		t.Fatalf("after the flood: %d %s", got.status, got.body)
	}

	rows, err := r.s.Store().Audit(context.Background(), ledger.AuditFilter{TenantID: "b", AfterSeq: 0})
	if err != nil {
		t.Fatal(err)
	}
	var refusalRows, refusals, admits int64
	for _, e := range rows {
		switch e.Kind {
		case ledger.AuditReject:
			refusalRows++
			refusals += e.Count
			if e.Count > 1 && !e.LastAt.After(e.At) {
				t.Errorf("aggregated row %+v: last_at not after at", e)
			}
		case ledger.AuditAdmit:
			admits++
		}
	}
	if refusals != n || refusalRows > 2 {
		t.Errorf("%d refusals audited in %d rows; want %d in 1 (2 across a minute)", refusals, refusalRows, n)
	}
	if admits != 2 {
		t.Errorf("%d admit rows, want 2", admits)
	}
	after := r.counts()
	if grown := after.audit - before.audit; grown > 2+3 { // refusal rows + the second call's admit and settle
		t.Errorf("the audit grew by %d rows for %d refusals and one call", grown, n)
	}
	if grown := size() - sizeBefore; grown > 64<<10 {
		t.Errorf("the ledger grew by %d bytes for %d refusals", grown, n)
	}
	csv := r.admin("GET", "/admin/api/audit.csv?tenant=b", "")
	if body := string(csv.body); csv.status != 200 || !strings.Contains(body, ",count,last_at,cost,currency,period,provider_id\r\n") ||
		(refusalRows == 1 && !strings.Contains(body, ",600,")) {
		t.Errorf("audit.csv: %d\n%s", csv.status, csv.body)
	}
	r.verify()
}
