package alert

import "time"

// Status is the alerts' state as the dashboard shows it: the thresholds,
// and how delivery to the webhook is going.
type Status struct {
	Thresholds []int          `json:"thresholds"`
	Webhook    *WebhookStatus `json:"webhook"` // nil without a webhook
	// Notifies: the gateway shows every alert as a desktop notification
	// itself, so a dashboard in the same session leaves holds, evictions
	// and budget shares to it rather than notifying each twice.
	Notifies bool `json:"notifies"`
}

// WebhookStatus is how delivery to the webhook is going. The secret is
// never shown, only whether there is one.
type WebhookStatus struct {
	URL           string     `json:"url"`
	SecretSet     bool       `json:"secret_set"`
	Pending       int        `json:"pending"`    // alerts not yet delivered
	Failing       bool       `json:"failing"`    // the latest attempt failed
	LastError     string     `json:"last_error"` // its error; "" when it succeeded
	LastAttemptAt *time.Time `json:"last_attempt_at"`
}
