// Periods and alerts where the operator meets them: the tenant rows of the
// Overview, the reconcile dialog of a hold from a closed period and the
// audit log's alert rows (the header's clock badge: periods.test.tsx).
import { describe, expect, it } from 'vitest';
import { render } from 'preact';
import { act } from 'preact/test-utils';
import type { State, TenantState } from '../../lib/types';
import type { AuditRow } from '../../lib/api';
import fixture from '../../fixtures/state.json';
import { heldRun } from '../../fixtures/run';
import { InStore, testStore } from '../../fixtures/store';
import { page } from '../../fixtures/page';
import { Overview } from '../overview/Overview';
import { Holds } from '../overview/Holds';
import { AuditDetail } from './AuditDetail';

const base = fixture as unknown as State;
const { root } = page();
const q = (id: string) => root().querySelector(`[data-testid="${id}"]`);
const text = (id: string) => q(id)?.textContent?.replace(/[\u00a0\u202f]/g, ' ').trim();

const local: TenantState = {
  ...base.tenants[0],
  budget_units: 1000,
  spent_units: 100,
  held_units: 0,
  available_units: 900,
  period: '2026-12',
  period_start: '2026-12-01T00:00:00-11:00',
  period_end: '2027-01-01T00:00:00-11:00',
};
const oldHold = heldRun('run_old', '05', { period: '2026-11' });
const newHold = heldRun('run_new', '06', { period: '2026-12' });

const state: State = {
  ...base,
  tenants: [local],
  runs: [oldHold, newHold],
  holds: [oldHold, newHold],
  clock: { offset: '72h0m0s', now: '2026-12-02T11:02:00Z' },
  periods: { local: [{ period: '2026-12', period_start: '2026-12-01T00:00:00-11:00', spent_units: 100, spent_micros: 500_000 }, { period: '2026-11', period_start: '2026-11-01T00:00:00-11:00', spent_units: 700, spent_micros: 3_500_000 }] },
};

function show(el: preact.ComponentChildren, s: State = state) {
  act(() => render(<InStore store={testStore(s)}>{el}</InStore>, root()));
}

describe('the overview’s tenant rows', () => {
  it('name the period, count down by the gateway’s clock and chart the last periods', () => {
    show(<Overview />);
    expect(text('tenant-local-period')).toBe('December 2026');
    expect(text('tenant-local-time-left')).toBe('29d 23h left');
    expect(text('history-local-2026-11')).toBe('Nov $3.50');
    expect(text('tenant-local-spent')).toBe('100');
  });
  it('stay as they were for a budget that never renews', () => {
    show(<Overview />, { ...base, tenants: [base.tenants[0]] });
    expect(q('tenant-local-period')).toBeNull();
    expect(q('history-local')).toBeNull();
  });
});

describe('the reconcile dialog', () => {
  const type = (id: string, v: string) => {
    const el = q(id) as HTMLInputElement;
    el.value = v;
    el.dispatchEvent(new Event('input', { bubbles: true }));
  };
  it('says a hold of a closed period lands there, and the available now does not move', () => {
    show(<Holds />);
    act(() => (q('reconcile-run_old') as HTMLButtonElement).click());
    expect(text('reconcile-period-run_old')).toBe(
      'This hold belongs to 2026-11 (November 2026), already closed: the reconcile lands in that period, not in the current 2026-12.',
    );
    act(() => type('reconcile-units-run_old', '80'));
    expect(text('reconcile-preview-run_old')).toBe('Spend 80, release 22 in 2026-11; local available now stays 900.');
  });
  it('says a hold of the current period lands there, and previews the available as before', () => {
    show(<Holds />);
    act(() => (q('reconcile-run_new') as HTMLButtonElement).click());
    expect(text('reconcile-period-run_new')).toBe('This hold belongs to the current period, 2026-12 (December 2026); the reconcile lands there.');
    act(() => type('reconcile-units-run_new', '80'));
    expect(text('reconcile-preview-run_new')).toBe('Spend 80, release 22; local available becomes 922.');
  });
});

describe('the audit log', () => {
  const row = (over: Partial<AuditRow>): AuditRow => ({ seq: 7, at: '2026-12-02T11:00:00Z', kind: 'alert', tenant: 'local', actor: 'system:alerts', units: 0, available_before: 0, available_after: 0, ...over });
  it('says an alert row in words, the gateway’s sentence as its tooltip', () => {
    show(<AuditDetail row={row({ reason: 'threshold', detail: '80% of the money budget reached: 4 of 5 in 2026-12' })} />);
    expect(text('audit-alert-7')).toBe('budget threshold local reached 80% of its budget in December 2026: $4.00 of $5.00 used.');
    expect(q('audit-alert-7')?.getAttribute('title')).toBe('80% of the money budget reached: 4 of 5 in 2026-12');
  });
  it('shows other rows as before', () => {
    show(<AuditDetail row={row({ kind: 'hold', reason: 'cut', evidence: 'no [DONE]', detail: 'x' })} />);
    expect(root().textContent).toBe('cut · no [DONE] · x');
  });
});
