package config

import (
	"github.com/quotagate/quotagate/backend/alert"
)

// Alerts warns before a tenant's budget runs out, and when a run ends held
// or a guarded model is evicted or restored: an audit row, a desktop
// notification, and with a webhook a signed POST.
type Alerts struct {
	// Thresholds are percents of a tenant's budget (units or money, in its
	// period), each fired once per tenant and period; left out:
	// DefaultThresholds, [] for none.
	Thresholds []int `yaml:"thresholds"`
	// Webhook receives every alert; nil: none (the alerts are still
	// audited and notified).
	Webhook *Webhook `yaml:"webhook"`
}

// Webhook is where alerts are POSTed.
type Webhook struct {
	// URL is https, or http only to this machine (alert.ParseWebhookURL).
	URL string `yaml:"url"`
	// Secret signs each body (X-Quotagate-Signature); "" sends unsigned.
	// It never prints (alert.Secret); write it as ${VAR} to keep it out of
	// the file.
	Secret alert.Secret `yaml:"secret"`
}

// DefaultThresholds are the thresholds of an alerts key that lists none.
var DefaultThresholds = []int{50, 80, 95}

// ParsedThresholds returns the thresholds ascending (checked by Validate).
func (a *Alerts) ParsedThresholds() alert.Thresholds {
	percents := a.Thresholds
	if percents == nil {
		percents = DefaultThresholds
	}
	ts, _ := alert.ParseThresholds("alerts.thresholds", percents)
	return ts
}

// validate refuses a threshold outside 1–100 or listed twice, and a
// webhook URL that is not https (or http to loopback), naming the field.
func (a *Alerts) validate() error {
	if a == nil {
		return nil
	}
	if _, err := alert.ParseThresholds("alerts.thresholds", a.Thresholds); err != nil {
		return err
	}
	if a.Webhook != nil {
		if _, err := alert.ParseWebhookURL("alerts.webhook.url", a.Webhook.URL); err != nil {
			return err
		}
	}
	return nil
}
