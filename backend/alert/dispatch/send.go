package dispatch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/alert"
	"github.com/quotagate/quotagate/backend/ledger"
)

// send delivers the outbox's due alerts until Close: each queue's head,
// oldest first, then waits for the next one due, a new alert, or a while.
func (d *Dispatcher) send() {
	for d.ctx.Err() == nil {
		due, err := d.o.Store.DueAlerts(d.ctx, d.o.Now(), d.o.Lease, claimBatch)
		if err != nil && d.ctx.Err() == nil {
			d.log.Warn("alerts: read the outbox", "err", err)
		}
		for _, a := range due {
			d.deliver(a)
		}
		if len(due) > 0 {
			continue // a delivered alert's successor may be due now
		}
		d.sleep(d.nextDue())
	}
}

// nextDue is how long until the outbox's next alert is due.
func (d *Dispatcher) nextDue() time.Duration {
	st, err := d.o.Store.OutboxStatus(d.ctx)
	if err != nil || st.NextDue.IsZero() {
		return idlePoll
	}
	return min(max(st.NextDue.Sub(d.o.Now()), 0), idlePoll)
}

// sleep waits for wait, a signal or Close.
func (d *Dispatcher) sleep(wait time.Duration) {
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-d.wake:
	case <-d.ctx.Done():
	}
}

// deliver POSTs one alert and records the outcome: delivered on a 2xx,
// otherwise a failure with its next try after the backoff.
func (d *Dispatcher) deliver(a ledger.OutboxAlert) {
	err := d.post(a.Body)
	now := d.o.Now()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(d.ctx), readTimeout)
	defer cancel()
	if err == nil {
		if err := d.o.Store.AlertDelivered(ctx, a.ID, now); err != nil {
			d.log.Warn("alerts: record a delivery", "alert", a.Key, "err", err)
		}
		return
	}
	if d.ctx.Err() != nil {
		return // closing: the claim runs out and the alert is sent again
	}
	next := now.Add(d.o.Backoff.Delay(a.Attempts + 1))
	d.log.Warn("alerts: webhook delivery failed", "alert", a.Key, "attempts", a.Attempts+1, "next_try", next, "err", err)
	if err := d.o.Store.AlertFailed(ctx, a.ID, now, err.Error(), next); err != nil {
		d.log.Warn("alerts: record a failed delivery", "alert", a.Key, "err", err)
	}
}

// maxErrorBody is how much of a refusing receiver's answer is kept.
const maxErrorBody = 200

// post sends body to the webhook, signed; a 2xx is delivered.
func (d *Dispatcher) post(body []byte) error {
	req, err := http.NewRequestWithContext(d.ctx, http.MethodPost, d.o.Webhook.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "quotagate")
	if d.o.Secret != "" {
		req.Header.Set(alert.SignatureHeader, alert.Sign(d.o.Secret, body))
	}
	resp, err := d.o.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	said, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	if resp.StatusCode/100 == 2 {
		return nil
	}
	if s := strings.TrimSpace(strings.ToValidUTF8(string(said), "")); s != "" {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, s)
	}
	return fmt.Errorf("HTTP %d", resp.StatusCode)
}
