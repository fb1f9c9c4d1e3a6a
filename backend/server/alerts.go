package server

import (
	"context"
	"fmt"
	"os"

	"github.com/quotagate/quotagate/backend/alert"
	"github.com/quotagate/quotagate/backend/alert/dispatch"
	"github.com/quotagate/quotagate/backend/notify"
)

// startAlerts builds the alerts' dispatcher from the config's alerts key,
// hooks it to the ledger's commits and starts it; nil without the key.
// Before any write at start, so that the runs the last exit left held are
// alerted too.
func (s *Server) startAlerts() {
	a := s.cfg.Alerts
	if a == nil {
		return
	}
	st, ok := s.store.(dispatch.Store)
	if !ok {
		s.log.Warn("alerts: this ledger keeps no alert outbox; alerts are off")
		return
	}
	o := dispatch.Options{
		Store:      st,
		Thresholds: a.ParsedThresholds(),
		Currency:   s.money.Currency,
		Now:        s.opts.Clock.Now,
		Logger:     s.log,
	}
	// The session's notification server, when the gateway runs in a
	// desktop session: without one, D-Bus would try to launch a bus.
	if addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); addr != "" && addr != "autolaunch:" {
		o.Notifier = notify.New(addr)
	}
	if w := a.Webhook; w != nil {
		o.Webhook, _ = alert.ParseWebhookURL("alerts.webhook.url", w.URL) // checked by config.Validate
		o.Secret = w.Secret
	}
	s.alerts = dispatch.New(o)
	s.commits.alerts.Store(s.alerts)
	s.alerts.Start()
	s.log.Info("alerts", "thresholds", o.Thresholds, "webhook", o.Webhook != nil)
}

// alertsState is the admin state's alerts: nil without the alerts key.
func (s *Server) alertsState(ctx context.Context) (*alert.Status, error) {
	if s.alerts == nil {
		return nil, nil
	}
	st, err := s.alerts.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("alerts state: %w", err)
	}
	return &st, nil
}
