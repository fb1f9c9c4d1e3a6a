package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

// books is what the writer decides admissions and transitions on, kept in
// memory: nine statements per call that read them were 47 % of the
// gateway's CPU. The writer is the only writer of the file (the data-dir lock keeps
// other processes out), so what it read once stays true until it writes:
//   - tenants: each tenant's balance row as the batch has moved it; the
//     moves are written once per batch per tenant, before the commit;
//   - periods: the books of each tenant's period that was read, likewise;
//   - days: each guarded model's day (usage, held), likewise;
//   - minutes: usage per model and minute added in this batch;
//   - spend: units and cost spent per hour of admission, tenant and model
//     in this batch (the spend chart's rollup);
//   - runs: the runs not ended yet, as written (their rows are written at
//     once: reads and Verify see them);
//   - audit: the audit rows appended in this batch, each with its seq drawn
//     from seq, written several to a statement before the commit (or before
//     a refusal is counted, which reads them).
//
// Everything is loaded on first use inside the writer's transaction. A
// batch that fails, and any write that is not one of the decided
// transitions (config, recovery), forgets it all: the file is then the
// truth again, and is read afresh. So does a commit by another connection
// (PRAGMA data_version moved), should anything but this writer ever write
// the file.
type books struct {
	tenants map[string]*tenantBook
	periods map[periodKey]*periodBook
	days    map[dayKey]*dayBook
	minutes map[minuteKey]ledger.Units
	spend   map[spendKey]spendMove
	runs    map[ledger.RunID]ledger.Run
	audit   []auditRow
	seq     int64 // the last audit seq drawn; 0: read it from the file
	version int64 // PRAGMA data_version when the books were last true
}

type tenantBook struct {
	pos   ledger.Position
	dirty bool
}

type dayKey struct{ upstream, model, day string }

type dayBook struct {
	usage, held ledger.Units
	dirty       bool
}

type spendKey struct {
	hour                    int64 // ledger.SpendHourIndex of the run's admission
	tenant, upstream, model string
}

type spendMove struct {
	units  ledger.Units
	micros price.Micros
}

type minuteKey struct {
	upstream, model string
	minute          int64 // Unix seconds at the minute's start
}

func newBooks() *books {
	b := &books{}
	b.forget()
	return b
}

// forget drops everything, for the file to be read again.
func (b *books) forget() {
	b.tenants = map[string]*tenantBook{}
	b.periods = map[periodKey]*periodBook{}
	b.days = map[dayKey]*dayBook{}
	b.minutes = map[minuteKey]ledger.Units{}
	b.spend = map[spendKey]spendMove{}
	b.runs = map[ledger.RunID]ledger.Run{}
	b.audit = b.audit[:0]
	b.seq = 0
}

// checkBooks forgets the books when another connection committed to the file
// since the writer's last batch.
func (w *wtx) checkBooks(ctx context.Context) error {
	var v int64
	if err := w.queryRow(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
		return fmt.Errorf("data version: %w", err)
	}
	if v != w.books.version {
		w.books.forget()
		w.books.version = v
	}
	return nil
}

// tenant returns tenantID's book, reading the row on first use; ok is false
// for an unknown tenant.
func (w *wtx) tenant(ctx context.Context, tenantID string) (t *tenantBook, ok bool, err error) {
	if t := w.books.tenants[tenantID]; t != nil {
		return t, true, nil
	}
	pos, ok, err := readBalance(ctx, w, tenantID)
	if err != nil || !ok {
		return nil, ok, err
	}
	t = &tenantBook{pos: pos}
	w.books.tenants[tenantID] = t
	return t, true, nil
}

// day returns a guarded model's day book, reading the row on first use
// (a day without a row yet is at 0, 0).
func (w *wtx) day(ctx context.Context, k dayKey) (*dayBook, error) {
	if d := w.books.days[k]; d != nil {
		return d, nil
	}
	d := &dayBook{}
	err := w.queryRow(ctx, `SELECT usage_units, held_units FROM quota_days WHERE upstream = ? AND model = ? AND day = ?`,
		k.upstream, k.model, k.day).Scan(&d.usage, &d.held)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("quota day: %w", err)
	}
	w.books.days[k] = d
	return d, nil
}

// run returns a run as written, from the books while it is open.
func (w *wtx) run(ctx context.Context, id ledger.RunID) (ledger.Run, error) {
	if run, ok := w.books.runs[id]; ok {
		return run, nil
	}
	return loadRun(ctx, w, id)
}

// noteRun keeps run in the books while it is open.
func (w *wtx) noteRun(run ledger.Run) {
	if run.Status.Ended() {
		delete(w.books.runs, run.ID)
		return
	}
	w.books.runs[run.ID] = run
}

// move applies m to the books of run's tenant (its period's, p, when it
// has one), quota day and minute (after
// the run's own row and audit row were written).
func (w *wtx) move(t *tenantBook, p *periodBook, d *dayBook, run ledger.Run, m ledger.Moves) {
	if m == (ledger.Moves{}) {
		return // Start: nothing moves
	}
	t.pos.Move(m, p == nil)
	t.dirty = true
	if m.Spent != 0 || m.SpentMicros != 0 {
		k := spendKey{ledger.SpendHourIndex(run.CreatedAt), run.TenantID, run.Upstream, run.Model}
		s := w.books.spend[k]
		s.units += m.Spent
		s.micros += m.SpentMicros
		w.books.spend[k] = s
	}
	if p != nil {
		p.books.Move(m)
		p.dirty = true
	}
	if d != nil && (m.Used != 0 || m.Held != 0) {
		d.usage += m.Used
		d.held += m.Held
		d.dirty = true
		if m.Used > 0 {
			w.books.minutes[minuteKey{run.Upstream, run.Model, w.now.Truncate(time.Minute).Unix()}] += m.Used
		}
	}
}

// flush writes what the batch moved: its audit rows, each moved tenant's
// balance row and quota day once, each minute's usage once.
func (w *wtx) flush(ctx context.Context) error {
	if err := w.flushAudit(ctx); err != nil {
		return err
	}
	for id, t := range w.books.tenants {
		if !t.dirty {
			continue
		}
		if _, err := w.exec(ctx, `UPDATE tenants SET spent_units = ?, held_units = ?, active = ?,
			spent_micros = ?, held_micros = ? WHERE id = ?`, int64(t.pos.SpentUnits), int64(t.pos.HeldUnits),
			t.pos.Active, int64(t.pos.SpentMicros), int64(t.pos.HeldMicros), id); err != nil {
			return fmt.Errorf("write balance of tenant %s: %w", id, err)
		}
		t.dirty = false
	}
	if err := w.flushPeriods(ctx); err != nil {
		return err
	}
	for k, d := range w.books.days {
		if !d.dirty {
			continue
		}
		if _, err := w.exec(ctx, `INSERT INTO quota_days (upstream, model, day, usage_units, held_units) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (upstream, model, day) DO UPDATE SET usage_units = excluded.usage_units, held_units = excluded.held_units`,
			k.upstream, k.model, k.day, int64(d.usage), int64(d.held)); err != nil {
			return fmt.Errorf("write quota day %s/%s %s: %w", k.upstream, k.model, k.day, err)
		}
		d.dirty = false
	}
	for k, u := range w.books.minutes {
		if _, err := w.exec(ctx, `INSERT INTO usage_minutes (upstream, model, minute, units) VALUES (?, ?, ?, ?)
			ON CONFLICT (upstream, model, minute) DO UPDATE SET units = units + excluded.units`,
			k.upstream, k.model, k.minute, int64(u)); err != nil {
			return fmt.Errorf("usage minute: %w", err)
		}
	}
	clear(w.books.minutes)
	for k, s := range w.books.spend {
		if _, err := w.exec(ctx, `INSERT INTO spend_hours (hour, tenant_id, upstream, model, spent_units, cost_micros)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (hour, tenant_id, upstream, model) DO UPDATE SET
			spent_units = spent_units + excluded.spent_units, cost_micros = cost_micros + excluded.cost_micros`,
			k.hour, k.tenant, k.upstream, k.model, int64(s.units), int64(s.micros)); err != nil {
			return fmt.Errorf("spend of tenant %s on %s/%s: %w", k.tenant, k.upstream, k.model, err)
		}
	}
	clear(w.books.spend)
	return nil
}
