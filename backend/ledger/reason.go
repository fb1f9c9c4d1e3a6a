package ledger

// Reasons refine an error's Code for a person's screen (Error.Reason): the
// admin API sends them beside the code with their parameters, and the
// dashboard renders each from its catalogue in the operator's language.
// One spelling from Go to the wire to the catalogue; Reasons lists them
// all (the dashboard's catalogue test reads the list).
const (
	ReasonTenantUnknown        = "tenant_unknown"         // {tenant}
	ReasonTenantReserved       = "tenant_reserved"        // {tenant}: the quota top-up's own id
	ReasonTenantInFlight       = "tenant_in_flight"       // {tenant, runs}: runs active or queued
	ReasonTenantHolds          = "tenant_holds"           // {tenant, units, runs}: units held
	ReasonNoConfigFile         = "no_config_file"         // write-back without --config
	ReasonUnitsRequired        = "units_required"         // reconcile body without units
	ReasonUnitsNegative        = "units_negative"         // {got}
	ReasonUnitsTooLarge        = "units_too_large"        // {got, max}
	ReasonEvidenceRequired     = "evidence_required"      // reconcile or release without evidence
	ReasonReconcileOverReserve = "reconcile_over_reserve" // {run, units, reserve}
	ReasonBalanceOneOf         = "balance_one_of"         // a balance body with neither or both
	ReasonBodyMalformed        = "body_malformed"         // not one JSON object of the known fields
	ReasonBodyDuplicateKey     = "body_duplicate_key"     // {key}
	ReasonBodyTooLarge         = "body_too_large"         // {max_bytes}
	ReasonAuditLimit           = "audit_limit"            // {max}
	ReasonAuditBefore          = "audit_before"
	ReasonNotInBuild           = "not_in_build" // this build cannot delete tenants or write back

	// A tenant's settings that config validation refuses on the dashboard's
	// tenant form (a config file's other faults stop quotagate at start, in
	// words on the command line).
	ReasonTenantIDInvalid    = "tenant_id_invalid"    // {tenant}
	ReasonMaxConcurrentRange = "max_concurrent_range" // {tenant, got, min, max}
	ReasonRateLimitsNegative = "rate_limits_negative" // {tenant}
)

// Reasons is every reason above.
var Reasons = []string{
	ReasonTenantUnknown, ReasonTenantReserved, ReasonTenantInFlight, ReasonTenantHolds, ReasonNoConfigFile,
	ReasonUnitsRequired, ReasonUnitsNegative, ReasonUnitsTooLarge, ReasonEvidenceRequired,
	ReasonReconcileOverReserve, ReasonBalanceOneOf, ReasonBodyMalformed, ReasonBodyDuplicateKey,
	ReasonBodyTooLarge, ReasonAuditLimit, ReasonAuditBefore, ReasonNotInBuild,
	ReasonTenantIDInvalid, ReasonMaxConcurrentRange, ReasonRateLimitsNegative,
}
