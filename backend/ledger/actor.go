package ledger

import (
	"slices"
	"strings"
)

// ActorKind is an Actor's shape: who is answerable for a change.
type ActorKind string

const (
	ActorTenant   ActorKind = "tenant"   // a tenant's own call; Name is the tenant id
	ActorOperator ActorKind = "operator" // a person running quotagate; Name is the way in (admin, config)
	ActorSystem   ActorKind = "system"   // quotagate's own work; Name is the part (recovery, quota-guard, …)
	// ActorProvider is an upstream provider whose own answer made the
	// change (a usage lookup applied by auto_reconcile); Name is the upstream.
	ActorProvider ActorKind = "provider"
)

// Actor names who made a state change; every transition records one in its
// audit row (the CSV's actor column, the admin API's "actor"). Its text is
// "<kind>:<name>" — tenant:a, operator:admin, system:quota-guard — so that a
// tenant named like one of quotagate's parts (a tenant "quota") can never
// read as that part. The zero Actor is no actor, which no store accepts.
type Actor struct {
	Kind ActorKind
	Name string
}

// TenantActor is the actor of a change made by tenant id's own call.
func TenantActor(id string) Actor { return Actor{ActorTenant, id} }

// Operator is the actor of an operator's change, made through how (for
// example "admin" for the admin API and dashboard, "config" for the config file).
func Operator(how string) Actor { return Actor{ActorOperator, how} }

// System is the actor of quotagate's own work, done by part.
func System(part string) Actor { return Actor{ActorSystem, part} }

// Provider is the actor of a change made on upstream's own answer.
func Provider(upstream string) Actor { return Actor{ActorProvider, upstream} }

// Actors of quotagate's fixed ways in and fixed jobs.
var (
	ActorConfig     = Operator("config")    // tenants applied from the config file
	ActorAdmin      = Operator("admin")     // the admin API and the dashboard
	ActorRecovery   = System("recovery")    // RecoverInterrupted at start
	ActorQuotaGuard = System("quota-guard") // the quota guard's evictions, restores and learned overrun
	ActorTopUp      = System("quota-topup") // the nightly top-up of a guarded model's free quota
)

// SourceActor is the actor of a balance snapshot's sync row, by the
// snapshot's source: the operator for a reading entered by hand
// (SourceManual, SourceManualB0: the admin API is their only way in), else
// the balance source that read the provider's API (system:volcengine, …).
func SourceActor(source string) Actor {
	if source == SourceManual || source == SourceManualB0 {
		return ActorAdmin
	}
	return System(source)
}

// IsZero reports whether a is no actor.
func (a Actor) IsZero() bool { return a == Actor{} }

// String is a's text, "<kind>:<name>"; "" for no actor.
func (a Actor) String() string {
	if a.IsZero() {
		return ""
	}
	return string(a.Kind) + ":" + a.Name
}

// MarshalText writes a's text, so that JSON shows an actor as one string.
func (a Actor) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText reads an actor's text (ParseActor); "" is no actor.
func (a *Actor) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*a = Actor{}
		return nil
	}
	p, err := ParseActor(string(b))
	if err != nil {
		return err
	}
	*a = p
	return nil
}

// ParseActor reads an actor's text: one of the three shapes with a
// non-empty name.
func ParseActor(s string) (Actor, error) {
	kind, name, ok := strings.Cut(s, ":")
	a := Actor{ActorKind(kind), name}
	if !ok || name == "" || strings.TrimSpace(name) != name || !a.Kind.known() {
		return Actor{}, Errorf(CodeInvalidRequest, "actor %q is not tenant:<id>, operator:<how>, system:<part> or provider:<upstream>", s)
	}
	return a, nil
}

func (k ActorKind) known() bool {
	switch k {
	case ActorTenant, ActorOperator, ActorSystem, ActorProvider:
		return true
	}
	return false
}

// CheckActor reports CodeInvalidRequest unless a is one of the three
// shapes with a name. Stores call it on every transition so that no audit
// row goes without its actor.
func CheckActor(a Actor) error {
	if !a.Kind.known() || strings.TrimSpace(a.Name) == "" || strings.TrimSpace(a.Name) != a.Name {
		return Errorf(CodeInvalidRequest, "a change needs an actor (tenant:<id>, operator:<how>, system:<part> or provider:<upstream>), not %q", a.String())
	}
	return nil
}

// ReadActor is the reading rule for an audit row's stored actor text,
// given the row's kind and tenant. Rows written since actors were typed
// hold "<kind>:<name>" and read as such. Older rows hold a bare word, which
// the row itself disambiguates (a tenant id never contains ':'):
//   - the row's own tenant id, on a row of a tenant's call (admit, reject,
//     start, settle, hold, release, cancel): that tenant;
//   - the names quotagate's parts wrote: "quota" (the quota guard),
//     "quota-topup", "recovery", "gateway" as system parts; "admin" and
//     "config" as operators;
//   - anything else: a balance source, read as SourceActor reads it (the
//     operator for "manual" and "manual-b0", else the system part of that
//     name, such as "volcengine" on a sync row).
//
// The rule reads old rows rather than rewriting them because the audit log
// is append-only evidence, kept byte for byte as written, and because a
// shared PostgreSQL ledger may still receive rows from a gateway of the
// previous version while the others already run this one.
func ReadActor(stored string, kind AuditKind, tenantID string) Actor {
	if stored == "" {
		return Actor{}
	}
	if a, err := ParseActor(stored); err == nil {
		return a
	}
	if stored == tenantID && tenantCallKind(kind) {
		return TenantActor(stored)
	}
	if a, ok := legacyActors[stored]; ok {
		return a
	}
	return SourceActor(stored)
}

// legacyActors are the bare names quotagate's own parts wrote before
// actors had a kind.
var legacyActors = map[string]Actor{
	"quota":       ActorQuotaGuard,
	"quota-topup": ActorTopUp,
	"recovery":    ActorRecovery,
	"gateway":     System("gateway"),
	"admin":       ActorAdmin,
	"config":      ActorConfig,
}

// StoredForms are the texts an audit row read as a may hold: its own
// text, and the bare words rows written before actors had a kind held for
// it (ReadActor). A store filtering by actor matches any of them; a few
// rows so found may read as another actor (a bare name is ambiguous
// without its row), which AuditMatches then drops.
func (a Actor) StoredForms() []string {
	forms := []string{a.String(), a.Name}
	for bare, b := range legacyActors {
		if b == a && bare != a.Name {
			forms = append(forms, bare)
		}
	}
	if a == ActorAdmin {
		forms = append(forms, SourceManual, SourceManualB0)
	}
	slices.Sort(forms[2:])
	return forms
}

// tenantCallKind reports the kinds of row a tenant's own call writes.
func tenantCallKind(k AuditKind) bool {
	switch k {
	case AuditAdmit, AuditReject, AuditStart, AuditSettle, AuditHold, AuditRelease, AuditCancel, AuditFailover:
		return true
	}
	return false
}
