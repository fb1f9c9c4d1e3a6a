package ledger

// ForbiddenRequestFields are the top-level members every front door refuses
// in a request body, with why: accounting fields (a client cannot name its
// own identity or price) and fields that would redirect the call or its key
// elsewhere (RELIABILITY T29). One list, so the doors cannot drift apart.
var ForbiddenRequestFields = map[string]string{
	"usage":         "a client cannot report its own usage",
	"tenant":        "the tenant comes from the API key, not the body",
	"tenant_id":     "the tenant comes from the API key, not the body",
	"api_key":       "upstream keys are configured by the operator",
	"api_base":      "upstream addresses are configured by the operator",
	"base_url":      "upstream addresses are configured by the operator",
	"extra_headers": "upstream headers are configured by the operator",
}
