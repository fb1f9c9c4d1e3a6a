package admin_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/ledger/ledgertest"
)

type wireError struct {
	Message, Type, Code, Reason string
	Params                      map[string]any
}

func readError(t *testing.T, f *fixture, method, path, ctype, body string) (int, wireError) {
	t.Helper()
	resp := f.do(t, method, path, "", token, ctype, body)
	var b struct{ Error wireError }
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil {
		t.Fatalf("%s %s: error body: %v", method, path, err)
	}
	return resp.StatusCode, b.Error
}

// refusingTenants refuses a delete the way the server does, with the
// reason and its numbers.
type refusingTenants struct{ noTenants }

func (refusingTenants) Delete(context.Context, string) error {
	return ledger.Errorf(ledger.CodeConflict, "tenant busy cannot be deleted: 3 runs are still active or queued").
		Because(ledger.ReasonTenantInFlight, map[string]any{"tenant": "busy", "runs": 3})
}

// Every admin error the dashboard renders in its own language carries the
// contract's code, a stable reason and the numbers of its sentence as
// params (JSON numbers, not text); the message stays for scripts and for
// reasons a dashboard does not know.
func TestErrorReasons(t *testing.T) {
	f := newFixture(t, func(o *admin.Options) { o.Tenants = refusingTenants{} })
	ctx := context.Background()
	ledgertest.MustApply(t, f.store, ledgertest.Tenant("t", 1000, 2))
	ledgertest.MustAdmit(t, f.store, ledger.AdmitRequest{RunID: "held", TenantID: "t", ReserveUnits: 22, Upstream: "demo", Model: "m"})
	if _, err := f.store.KeepHold(ctx, "held", ledger.RunInterrupted, "cut", ledger.ActorAdmin); err != nil {
		t.Fatal(err)
	}
	ledgertest.MustAdmit(t, f.store, ledger.AdmitRequest{RunID: "live", TenantID: "t", ReserveUnits: 5, Upstream: "demo", Model: "m"})

	const js = "application/json"
	for _, tc := range []struct {
		name, method, path, ctype, body string
		status                          int
		code, reason                    string
		params                          map[string]any
	}{
		{"DeleteInFlight", "POST", "/admin/api/tenants/busy/delete", "", "", 409, ledger.CodeConflict, ledger.ReasonTenantInFlight,
			map[string]any{"tenant": "busy", "runs": 3.0}},
		{"ReconcileOverReserve", "POST", "/admin/api/holds/held/reconcile", js, `{"units":23,"evidence":"bill"}`, 400, ledger.CodeInvalidRequest,
			ledger.ReasonReconcileOverReserve, map[string]any{"run": "held", "units": 23.0, "reserve": 22.0}},
		{"ReconcileNoEvidence", "POST", "/admin/api/holds/held/reconcile", js, `{"units":1,"evidence":" "}`, 400, ledger.CodeInvalidRequest,
			ledger.ReasonEvidenceRequired, nil},
		{"ReconcileNoUnits", "POST", "/admin/api/holds/held/reconcile", js, `{"evidence":"bill"}`, 400, ledger.CodeInvalidRequest,
			ledger.ReasonUnitsRequired, nil},
		{"ReconcileNegative", "POST", "/admin/api/holds/held/reconcile", js, `{"units":-4,"evidence":"bill"}`, 400, ledger.CodeInvalidRequest,
			ledger.ReasonUnitsNegative, map[string]any{"got": -4.0}},
		{"ReconcileTooLarge", "POST", "/admin/api/holds/held/reconcile", js, `{"units":9007199254740992,"evidence":"bill"}`, 400, ledger.CodeInvalidRequest,
			ledger.ReasonUnitsTooLarge, map[string]any{"got": 9007199254740992.0, "max": 9007199254740991.0}},
		{"ReconcileNotHeld", "POST", "/admin/api/holds/live/reconcile", js, `{"units":1,"evidence":"bill"}`, 409, ledger.CodeNotHeld, "",
			map[string]any{"run": "live", "status": "active", "usage": "pending"}},
		{"ReconcileUnknownRun", "POST", "/admin/api/holds/nope/reconcile", js, `{"units":1,"evidence":"bill"}`, 404, ledger.CodeRunNotFound, "", nil},
		{"DuplicateKey", "POST", "/admin/api/holds/held/reconcile", js, `{"units":1,"units":2,"evidence":"b"}`, 400, ledger.CodeInvalidRequest,
			ledger.ReasonBodyDuplicateKey, map[string]any{"key": "units"}},
		{"Malformed", "POST", "/admin/api/holds/held/reconcile", js, `{"units":`, 400, ledger.CodeInvalidRequest, ledger.ReasonBodyMalformed, nil},
		{"NotJSON", "POST", "/admin/api/holds/held/reconcile", "text/plain", `{}`, 415, "unsupported_media_type", "", nil},
		{"BalanceOneOf", "POST", "/admin/api/quota/ark/m/balance", js, `{}`, 400, ledger.CodeInvalidRequest, ledger.ReasonBalanceOneOf, nil},
		{"AuditLimit", "GET", "/admin/api/audit?limit=100000", "", "", 400, ledger.CodeInvalidRequest, ledger.ReasonAuditLimit,
			map[string]any{"max": float64(admin.MaxAuditPage)}},
		{"NoWriteBack", "POST", "/admin/api/tenants/write-back", "", "", 404, "not_found", ledger.ReasonNotInBuild, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, e := readError(t, f, tc.method, tc.path, tc.ctype, tc.body)
			if st != tc.status || e.Code != tc.code || e.Reason != tc.reason || e.Message == "" {
				t.Fatalf("got %d %+v, want %d code %q reason %q", st, e, tc.status, tc.code, tc.reason)
			}
			if !reflect.DeepEqual(e.Params, tc.params) {
				t.Fatalf("params %#v, want %#v", e.Params, tc.params)
			}
		})
	}
}

// testdata/error_reasons.golden.json is the list the dashboard's catalogue
// test reads: every reason must have a sentence in both languages.
func TestErrorReasonsGolden(t *testing.T) {
	catalogueList(t, "error_reasons.golden.json", ledger.Reasons, "ledger.Reasons")
}

// testdata/writeback_notes.golden.json: the same for the write-back notes'
// kinds.
func TestWriteBackNoteKindsGolden(t *testing.T) {
	catalogueList(t, "writeback_notes.golden.json", admin.NoteKinds, "admin.NoteKinds")
}

// catalogueList holds list (named name) to its golden file in testdata,
// each entry once and not empty.
func catalogueList(t *testing.T, file string, list []string, name string) {
	t.Helper()
	matchGolden(t, file, list, name, "give each new entry a sentence in frontend/src/lib/i18n.*.ts")
	seen := map[string]bool{}
	for _, r := range list {
		if r == "" || seen[r] {
			t.Errorf("%s: %q empty or listed twice", name, r)
		}
		seen[r] = true
	}
}
