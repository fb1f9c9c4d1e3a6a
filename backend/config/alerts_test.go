package config_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/alert"
	"github.com/quotagate/quotagate/backend/config"
)

func TestAlerts(t *testing.T) {
	c, err := config.Parse([]byte("alerts:\n  thresholds: [95, 50, 80]\n  webhook: {url: 'https://hooks.example.com/q', secret: '${HOOK_SECRET}'}\n"),
		env(map[string]string{"HOOK_SECRET": "whsec-1234"}))
	if err != nil {
		t.Fatal(err)
	}
	a := c.Alerts
	if !slices.Equal(a.ParsedThresholds(), alert.Thresholds{50, 80, 95}) || a.Webhook.URL != "https://hooks.example.com/q" ||
		string(a.Webhook.Secret) != "whsec-1234" {
		t.Fatalf("alerts %+v, webhook %+v", a, a.Webhook)
	}
	if shown := fmt.Sprintf("%+v %v", *a.Webhook, c); strings.Contains(shown, "whsec") {
		t.Fatalf("the secret prints: %s", shown)
	}
	for _, tc := range []struct {
		yaml string
		want alert.Thresholds
	}{
		{"alerts: {}\n", alert.Thresholds{50, 80, 95}},
		{"alerts: {thresholds: []}\n", alert.Thresholds{}},
		{"alerts: {thresholds: [100], webhook: {url: 'http://127.0.0.1:9/hook'}}\n", alert.Thresholds{100}},
	} {
		c, err := config.Parse([]byte(tc.yaml), env(nil))
		if err != nil || !slices.Equal(c.Alerts.ParsedThresholds(), tc.want) {
			t.Fatalf("%q: %v, %v; want %v", tc.yaml, c.Alerts, err, tc.want)
		}
	}
	if c, err := config.Parse(nil, env(nil)); err != nil || c.Alerts != nil {
		t.Fatalf("no alerts key: %+v, %v", c.Alerts, err)
	}
}

// Each bad alerts key is refused at start, naming the field.
func TestAlertsRefused(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"ThresholdZero", "alerts: {thresholds: [0]}\n", "alerts.thresholds[0]: 0 is not a percent from 1 to 100"},
		{"ThresholdAbove100", "alerts: {thresholds: [50, 101]}\n", "alerts.thresholds[1]: 101 is not a percent"},
		{"ThresholdTwice", "alerts: {thresholds: [80, 80]}\n", "alerts.thresholds[1]: 80 is listed twice"},
		{"ThresholdFloat", "alerts: {thresholds: [80.5]}\n", "whole numbers"},
		{"NotHTTP", "alerts: {webhook: {url: 'ftp://hooks.example.com'}}\n", "alerts.webhook.url"},
		{"PlainHTTPElsewhere", "alerts: {webhook: {url: 'http://hooks.example.com/q'}}\n", "alerts.webhook.url: \"http://hooks.example.com/q\": plain http goes only to this machine"},
		{"NoURL", "alerts: {webhook: {secret: s}}\n", "alerts.webhook.url"},
		{"UnknownKey", "alerts: {threshold: [50]}\n", "field threshold not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tc.yaml), env(nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse(%q) = %v, want %q", tc.yaml, err, tc.want)
			}
		})
	}
}
