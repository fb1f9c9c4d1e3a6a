package dispatch

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/alert"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/notify"
	"github.com/quotagate/quotagate/backend/price"
)

// readTimeout bounds one balance or audit read, notifyTimeout one
// desktop notification.
const (
	readTimeout   = 10 * time.Second
	notifyTimeout = 5 * time.Second
)

// watch turns queued items into recorded alerts until Close has closed
// the queue and it is drained.
func (d *Dispatcher) watch() {
	for {
		items, ok := d.queue.take()
		if !ok {
			return
		}
		for _, it := range items {
			if err := d.look(it); err != nil {
				d.log.Warn("alerts: a change could not be checked", "tenant", it.tenant, "kind", it.kind, "err", err)
			}
		}
	}
}

// catchUp queues a look at every tenant's balance and every held run.
func (d *Dispatcher) catchUp() {
	ctx, cancel := context.WithTimeout(d.ctx, readTimeout)
	defer cancel()
	bs, err := d.o.Store.Balances(ctx)
	if err != nil {
		d.log.Warn("alerts: read the balances at start", "err", err)
	}
	for _, b := range bs {
		d.queue.check(b.TenantID, "")
	}
	held, err := d.o.Store.Runs(ctx, ledger.RunFilter{HoldingOnly: true, Limit: maxHeldAtStart})
	if err != nil {
		d.log.Warn("alerts: read the held runs at start", "err", err)
	}
	for _, r := range held {
		if r.Usage == ledger.UsageUnknown {
			d.queue.push(item{kind: ledger.AuditHold, tenant: r.TenantID, run: r.ID})
		}
	}
}

// maxHeldAtStart bounds the held runs looked at on start: more than any
// dashboard lists.
const maxHeldAtStart = 1000

// look records the alerts one item makes.
func (d *Dispatcher) look(it item) error {
	ctx, cancel := context.WithTimeout(d.ctx, readTimeout)
	defer cancel()
	switch it.kind {
	case ledger.AuditEvict, ledger.AuditRestore:
		return d.modelAlert(ctx, it)
	case ledger.AuditHold:
		return d.holdAlert(ctx, it)
	}
	return d.thresholdAlerts(ctx, it)
}

// budget is one of a tenant's budgets, in units or in money.
type budget struct {
	kind         string // "units" or "money", in the outbox key
	used, budget int64
	currency     string
	format       func(int64) string
}

// budgets lists the tenant's budgets with what its period used of each.
func (d *Dispatcher) budgets(b ledger.Balance) []budget {
	var out []budget
	if b.BudgetUnits != ledger.NoUnitsLimit {
		out = append(out, budget{kind: "units", used: int64(b.SpentUnits + b.HeldUnits), budget: int64(b.BudgetUnits),
			format: func(n int64) string { return strconv.FormatInt(n, 10) }})
	}
	if b.HasMoneyBudget {
		out = append(out, budget{kind: "money", used: int64(b.SpentMicros + b.HeldMicros), budget: int64(b.BudgetMicros),
			currency: d.o.Currency, format: func(n int64) string { return price.Micros(n).String() }})
	}
	return out
}

// thresholdAlerts records every threshold the tenant's use has reached of
// each of its budgets in its period. Reached rather than crossed: the
// balance is read after the fact, and the outbox key makes a threshold
// fire once however often it is found reached.
func (d *Dispatcher) thresholdAlerts(ctx context.Context, it item) error {
	if len(d.o.Thresholds) == 0 {
		return nil
	}
	b, err := d.o.Store.Balance(ctx, it.tenant)
	if err != nil {
		return fmt.Errorf("read the balance: %w", err)
	}
	label := b.Period // "" for a budget that never renews
	for _, bu := range d.budgets(b) {
		for _, t := range d.o.Thresholds.Reached(bu.used, bu.budget) {
			key := fmt.Sprintf("threshold:%s:%d:%s:%s", it.tenant, t, label, bu.kind)
			a := alert.Alert{Kind: alert.KindThreshold, Tenant: it.tenant, Threshold: t, Period: label,
				Used: bu.format(bu.used), Budget: bu.format(bu.budget), Currency: bu.currency, At: d.o.Now(), Run: string(it.run)}
			detail := fmt.Sprintf("%d%% of the %s budget reached: %s of %s%s", t, bu.kind, a.Used, a.Budget, inPeriod(label))
			if err := d.record(ctx, key, a, detail); err != nil {
				return err
			}
		}
	}
	return nil
}

func inPeriod(label string) string {
	if label == "" {
		return ""
	}
	return " in " + label
}

// holdAlert records a run that ended held, with its tenant's use then.
func (d *Dispatcher) holdAlert(ctx context.Context, it item) error {
	b, err := d.o.Store.Balance(ctx, it.tenant)
	if err != nil {
		return fmt.Errorf("read the balance: %w", err)
	}
	a := alert.Alert{Kind: alert.KindHold, Tenant: it.tenant, Period: b.Period, At: d.o.Now(), Run: string(it.run)}
	if bs := d.budgets(b); len(bs) > 0 {
		a.Used, a.Budget, a.Currency = bs[0].format(bs[0].used), bs[0].format(bs[0].budget), bs[0].currency
	}
	detail := fmt.Sprintf("run %s ended with its usage unknown; its hold stays until it is reconciled", it.run)
	return d.record(ctx, "hold:"+string(it.run), a, detail)
}

// modelAlert records a guarded model's eviction or restore, read from its
// audit row (which names the model).
func (d *Dispatcher) modelAlert(ctx context.Context, it item) error {
	rows, err := d.o.Store.Audit(ctx, ledger.AuditFilter{AfterSeq: it.seq - 1, Limit: 1})
	if err != nil {
		return fmt.Errorf("read audit row %d: %w", it.seq, err)
	}
	if len(rows) == 0 || rows[0].Seq != it.seq {
		return fmt.Errorf("audit row %d is gone", it.seq)
	}
	e := rows[0]
	kind := alert.KindEvict
	if e.Kind == ledger.AuditRestore {
		kind = alert.KindRestore
	}
	model, _, _ := strings.Cut(e.Detail, " ")
	detail := fmt.Sprintf("%s %s: %s", model, e.Kind, e.Reason)
	return d.record(ctx, fmt.Sprintf("%s:%d", kind, it.seq), alert.Alert{Kind: kind, At: e.At}, detail)
}

// record puts the alert in the outbox unless its key is there, and shows
// it on the desktop when this call recorded it.
func (d *Dispatcher) record(ctx context.Context, key string, a alert.Alert, detail string) error {
	if d.seen[key] {
		return nil
	}
	recorded, err := d.o.Store.RecordAlert(ctx, ledger.AlertRecord{Key: key, Tenant: a.Tenant, Kind: string(a.Kind),
		RunID: ledger.RunID(a.Run), Body: a.Body(), At: a.At, Detail: detail, Deliver: d.o.Webhook != nil})
	if err != nil {
		return err
	}
	if a.Kind == alert.KindThreshold { // the only kind found again and again
		d.seen[key] = true
	}
	if recorded {
		d.notify(key, a, detail)
		d.signal()
	}
	return nil
}

// notify shows the alert on the desktop. A desktop without a notification
// server is common (a headless gateway): that is logged at debug level.
func (d *Dispatcher) notify(key string, a alert.Alert, detail string) {
	if d.o.Notifier == nil {
		return
	}
	ctx, cancel := context.WithTimeout(d.ctx, notifyTimeout)
	defer cancel()
	n := notify.Notification{Title: title(a), Body: detail, Tag: "alert:" + key}
	if _, err := d.o.Notifier.Send(ctx, n); err != nil {
		d.log.Debug("alerts: desktop notification", "err", err)
	}
}

// title is the notification's summary line.
func title(a alert.Alert) string {
	switch a.Kind {
	case alert.KindThreshold:
		return fmt.Sprintf("%s has used %d%% of its budget", a.Tenant, a.Threshold)
	case alert.KindHold:
		return fmt.Sprintf("A run of %s ended held", a.Tenant)
	case alert.KindEvict:
		return "A guarded model was evicted"
	default:
		return "A guarded model was restored"
	}
}
