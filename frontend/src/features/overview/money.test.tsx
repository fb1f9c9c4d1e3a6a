// Money beside units: balances, runs, holds, the reconcile dialog's preview
// and cost, and the spend chart — and units alone when the fields are absent.
import { describe, expect, it } from 'vitest';
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { Holds } from './Holds';
import { Runs } from './Runs';
import { Overview } from './Overview';
import { setLang } from '../../lib/i18n';
import type { Run, State, TenantState } from '../../lib/types';
import fixture from '../../fixtures/state.json';
import { heldRun } from '../../fixtures/run';
import { InStore, testStore } from '../../fixtures/store';
import { page } from '../../fixtures/page';

const base = fixture as unknown as State;
const { root } = page();
const q = (id: string) => root().querySelector(`[data-testid="${id}"]`);
const text = (id: string) => q(id)?.textContent?.replace(/[\u00a0\u202f]/g, ' ').trim();

function tenant(currency?: string): TenantState {
  const units = { tenant: 'local', budget_units: 1000, spent_units: 100, held_units: 102, available_units: 798, active: 0, queued: 0, max_concurrent: 4, per_minute: 0, per_hour: 0 };
  if (!currency) return units;
  return { ...units, budget_micros: 50_000_000, spent_micros: 1_234_567, held_micros: 5_000, available_micros: 48_760_433 };
}

const priced = (id: string, sec: string, over: Partial<Run> = {}) =>
  heldRun(id, sec, { reserve_micros: 2_500_000, ...over });

function state(currency: string | undefined, runs: Run[], holds: Run[] = []): State {
  return { ...base, currency, tenants: [tenant(currency)], runs, holds };
}

describe('money on the dashboard', () => {
  it('shows a money budget beside units in the balance (en, USD)', () => {
    act(() => render(<InStore store={testStore(state('USD', []))}><Overview /></InStore>, root()));
    expect(text('tenant-local-spent')).toBe('100');
    expect(text('tenant-local-spent-money')).toBe('$1.23');
    expect(text('tenant-local-held-money')).toBe('$0.01');
    expect(text('tenant-local-available-money')).toBe('$48.76');
    expect(text('tenant-local-budget-money')).toBe('$50.00');
  });

  it('shows units only for a tenant without a money budget, beside one with it', () => {
    const other = { ...tenant(), tenant: 'other', spent_micros: 24, held_micros: 0 };
    act(() => render(<InStore store={testStore({ ...state('CNY', []), tenants: [tenant('CNY'), other] })}><Overview /></InStore>, root()));
    expect(text('tenant-local-budget-money')).toBe('CN¥50.00');
    expect(text('tenant-other-spent')).toBe('100');
    expect(q('tenant-other-spent-money')).toBeNull();
  });

  it('shows units only when the gateway has no currency', () => {
    const done = priced('run_a', '01', { status: 'completed', usage: 'trusted', held_units: 0, spent_units: 90 });
    act(() => render(<InStore store={testStore(state(undefined, [done]))}><Overview /><Runs /></InStore>, root()));
    expect(text('tenant-local-spent')).toBe('100');
    expect(q('tenant-local-spent-money')).toBeNull();
    expect(q('spend')).toBeNull();
    expect(text('run-cost-run_a')).toBe('—');
    expect(q('run-reserve-money-run_a')).toBeNull();
  });

  it("shows a run's cost and reserve in zh-CN's yuan", () => {
    setLang('zh-CN');
    const done = priced('run_a', '01', { status: 'completed', usage: 'trusted', held_units: 0, spent_units: 90, cost_micros: 1_234_567, cost: '1.234567' });
    act(() => render(<InStore store={testStore(state('CNY', [done]))}><Runs /></InStore>, root()));
    expect(text('run-cost-run_a')).toBe('¥1.23');
    expect(q('run-cost-run_a')!.getAttribute('title')).toBe('1.234567');
    expect(text('run-reserve-money-run_a')).toBe('¥2.50');
  });

  it('charts spend per tenant and per model from the runs carried', () => {
    const runs = [
      priced('run_a', '01', { status: 'completed', usage: 'trusted', cost_micros: 1_000_000 }),
      priced('run_b', '02', { status: 'completed', usage: 'trusted', cost_micros: 2_500_000, model: 'demo-reasoner' }),
    ];
    act(() => render(<InStore store={testStore(state('USD', runs))}><Overview /></InStore>, root()));
    expect(text('spend-tenant-local')).toBe('local $3.50');
    expect(text('spend-model-demo/demo-reasoner')).toBe('demo/demo-reasoner $2.50');
    expect(text('spend-window')).toContain('2 most recent runs');
  });

  it("previews a reconcile in money and sends the cost beside the units", async () => {
    const sent: unknown[][] = [];
    const h = priced('run_h', '03');
    const st = testStore(state('USD', [h], [h]), { reconcile: async (...a) => void sent.push(a) });
    act(() => render(<InStore store={st}><Holds /></InStore>, root()));
    expect(text('hold-reserve-money-run_h')).toBe('$2.50');
    act(() => (q('reconcile-run_h') as HTMLButtonElement).click());
    expect(text('reconcile-money-run_h')).toBe('The reserve is $2.50.');
    const type = (id: string, v: string) => {
      const el = q(id) as HTMLInputElement;
      el.value = v;
      el.dispatchEvent(new Event('input', { bubbles: true }));
    };
    act(() => {
      type('reconcile-units-run_h', '80');
      type('reconcile-evidence-run_h', 'bill');
    });
    act(() => type('reconcile-cost-run_h', '3'));
    await act(async () => (q('reconcile-submit-run_h') as HTMLButtonElement).click());
    expect(text('reconcile-error-cost-run_h')).toContain('$2.50');
    expect(sent).toEqual([]);
    act(() => type('reconcile-cost-run_h', '1.20'));
    expect(text('reconcile-money-run_h')).toBe('The reserve is $2.50: charge $1.20, release $1.30.');
    await act(async () => (q('reconcile-submit-run_h') as HTMLButtonElement).click());
    expect(sent).toEqual([['run_h', 80, 'bill', '1.2']]);
  });

  it('asks no cost for a run without a reserve in money', () => {
    const h = heldRun('run_u', '04');
    act(() => render(<InStore store={testStore(state('USD', [h], [h]))}><Holds /></InStore>, root()));
    act(() => (q('reconcile-run_u') as HTMLButtonElement).click());
    expect(q('reconcile-cost-run_u')).toBeNull();
    expect(q('hold-reserve-money-run_u')).toBeNull();
  });
});
