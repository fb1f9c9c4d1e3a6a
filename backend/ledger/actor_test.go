package ledger_test

import (
	"encoding/json"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

func TestActorText(t *testing.T) {
	for _, tc := range []struct {
		name  string
		actor ledger.Actor
		text  string
	}{
		{"Tenant", ledger.TenantActor("a"), "tenant:a"},
		{"TenantNamedLikeTheGuard", ledger.TenantActor("quota"), "tenant:quota"},
		{"Operator", ledger.ActorAdmin, "operator:admin"},
		{"Config", ledger.ActorConfig, "operator:config"},
		{"Guard", ledger.ActorQuotaGuard, "system:quota-guard"},
		{"TopUp", ledger.ActorTopUp, "system:quota-topup"},
		{"Source", ledger.SourceActor("volcengine"), "system:volcengine"},
		{"ManualReading", ledger.SourceActor(ledger.SourceManual), "operator:admin"},
		{"ManualB0", ledger.SourceActor(ledger.SourceManualB0), "operator:admin"},
		{"None", ledger.Actor{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.actor.String(); got != tc.text {
				t.Fatalf("String() = %q, want %q", got, tc.text)
			}
			b, err := json.Marshal(struct {
				A ledger.Actor `json:"actor,omitzero"`
			}{tc.actor})
			want := `{"actor":"` + tc.text + `"}`
			if tc.text == "" {
				want = `{}`
			}
			if err != nil || string(b) != want {
				t.Fatalf("JSON %s (%v), want %s", b, err, want)
			}
			if tc.text == "" {
				return
			}
			back, err := ledger.ParseActor(tc.text)
			if err != nil || back != tc.actor {
				t.Fatalf("ParseActor(%q) = %+v, %v", tc.text, back, err)
			}
		})
	}
}

func TestParseActorRefuses(t *testing.T) {
	for _, s := range []string{"", "quota", "tenant:", "robot:x", "operator: admin", ":a"} {
		if a, err := ledger.ParseActor(s); ledger.ErrorCode(err) != ledger.CodeInvalidRequest {
			t.Errorf("ParseActor(%q) = %+v, %v; want invalid_request", s, a, err)
		}
	}
	for _, a := range []ledger.Actor{{}, {Kind: "robot", Name: "x"}, ledger.TenantActor(""), ledger.System(" x")} {
		if err := ledger.CheckActor(a); ledger.ErrorCode(err) != ledger.CodeInvalidRequest {
			t.Errorf("CheckActor(%+v) = %v; want invalid_request", a, err)
		}
	}
}

// ReadActor reads every row as the actor that wrote it: typed rows as
// written, and the bare words older versions stored by the row's kind and
// tenant — a tenant named "quota" and the quota guard, which both stored
// "quota", read apart.
func TestReadActor(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stored string
		kind   ledger.AuditKind
		tenant string
		want   ledger.Actor
	}{
		{"Typed", "tenant:quota", ledger.AuditAdmit, "quota", ledger.TenantActor("quota")},
		{"TypedGuard", "system:quota-guard", ledger.AuditEvict, "", ledger.ActorQuotaGuard},
		{"OldTenantNamedQuota", "quota", ledger.AuditAdmit, "quota", ledger.TenantActor("quota")},
		{"OldTenantNamedQuotaSettles", "quota", ledger.AuditSettle, "quota", ledger.TenantActor("quota")},
		{"OldGuardEvicts", "quota", ledger.AuditEvict, "", ledger.ActorQuotaGuard},
		{"OldGuardLearnsOverrun", "quota", ledger.AuditSync, "", ledger.ActorQuotaGuard},
		{"OldTenant", "tenant-a", ledger.AuditHold, "tenant-a", ledger.TenantActor("tenant-a")},
		{"OldTopUp", "quota-topup", ledger.AuditSync, "filler", ledger.ActorTopUp},
		{"OldTopUpOfTenantNamedLikeIt", "quota-topup", ledger.AuditSync, "quota-topup", ledger.ActorTopUp},
		{"OldOperatorOnTenantNamedAdmin", "admin", ledger.AuditReconcile, "admin", ledger.ActorAdmin},
		{"OldConfig", "config", ledger.AuditConfig, "config", ledger.ActorConfig},
		{"OldRecovery", "recovery", ledger.AuditRecover, "a", ledger.ActorRecovery},
		{"OldGateway", "gateway", ledger.AuditAdmit, "a", ledger.System("gateway")},
		{"OldSource", "volcengine", ledger.AuditSync, "", ledger.System("volcengine")},
		{"OldManualReading", "manual", ledger.AuditSync, "", ledger.ActorAdmin},
		{"OldManualB0", "manual-b0", ledger.AuditSync, "", ledger.ActorAdmin},
		{"OldOperatorText", "operator:admin", ledger.AuditCancel, "a", ledger.ActorAdmin},
		{"OldSystemText", "system:recovery", ledger.AuditRecover, "a", ledger.ActorRecovery},
		{"None", "", ledger.AuditConfig, "a", ledger.Actor{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ledger.ReadActor(tc.stored, tc.kind, tc.tenant); got != tc.want {
				t.Fatalf("ReadActor(%q, %s, %q) = %s, want %s", tc.stored, tc.kind, tc.tenant, got, tc.want)
			}
		})
	}
}
