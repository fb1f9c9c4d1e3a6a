// The Overview reads the books beyond the state: the spend chart from the
// ledger's rollup (every run of the period, not only the listed ones), and
// the Runs and Holds tables' older pages, one tenant's on demand.
import { describe, expect, it } from 'vitest';
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { Holds } from './Holds';
import { Runs } from './Runs';
import { SpendChart } from './SpendChart';
import { setLang } from '../../lib/i18n';
import type { RunsQuery, SpendPage } from '../../lib/api';
import type { Run, State } from '../../lib/types';
import fixture from '../../fixtures/state.json';
import { heldRun } from '../../fixtures/run';
import { InStore, testStore } from '../../fixtures/store';
import { page } from '../../fixtures/page';

const base = fixture as unknown as State;
const { root } = page();
const q = (id: string) => root().querySelector(`[data-testid="${id}"]`);
const text = (id: string) => q(id)?.textContent?.replace(/[\u00a0\u202f]/g, ' ').trim();
const done = (id: string, sec: string, over: Partial<Run> = {}): Run =>
  heldRun(id, sec, { status: 'completed', usage: 'trusted', held_units: 0, spent_units: 10, ...over });
const rows = (table: string) => [...root().querySelectorAll(`[data-testid="${table}"] tr[data-testid]`)].map((r) => r.getAttribute('data-testid'));
const settle = () => act(async () => { await new Promise((r) => setTimeout(r, 0)); });

const rollup: SpendPage = {
  days: ['2026-11-27', '2026-11-28', '2026-11-29'],
  rows: [
    { day: '2026-11-27', tenant: 'local', upstream: 'demo', model: 'demo-chat', spent_units: 900, cost_micros: 40_000_000 },
    { day: '2026-11-29', tenant: 'local', upstream: 'demo', model: 'demo-chat', spent_units: 10, cost_micros: 1_500_000 },
    { day: '2026-11-29', tenant: 'tenant-a', upstream: 'demo', model: 'demo-reasoner', spent_units: 5, cost_micros: 2_000_000 },
  ],
};

describe('spend chart', () => {
  it('charts the rollup: days and money the listed runs do not hold', async () => {
    const listed = [done('run_a', '01', { cost_micros: 1_500_000 })];
    act(() => render(<InStore store={testStore({ ...base, currency: 'USD', runs: listed }, { spend: async () => rollup })}><SpendChart /></InStore>, root()));
    await settle();
    expect(text('spend-tenant-local')).toBe('local $41.50');
    expect(text('spend-tenant-tenant-a')).toBe('tenant-a $2.00');
    expect(text('spend-model-demo/demo-chat')).toBe('demo/demo-chat $41.50');
    expect(text('spend-window')).toBe('the last 3 days, 2026-11-27 – 2026-11-29');
  });

  it('says the window in Chinese; nothing when nothing was spent', async () => {
    setLang('zh-CN');
    act(() => render(<InStore store={testStore({ ...base, currency: 'CNY', runs: [] }, { spend: async () => rollup })}><SpendChart /></InStore>, root()));
    await settle();
    expect(text('spend-window')).toBe('最近 3 天，2026-11-27 – 2026-11-29');
    act(() => render(null, root()));
    act(() => render(<InStore store={testStore({ ...base, currency: 'CNY', runs: [] }, { spend: async () => ({ days: rollup.days, rows: [] }) })}><SpendChart /></InStore>, root()));
    await settle();
    expect(q('spend')).toBeNull();
  });
});

describe('older rows', () => {
  it('Runs: the button reads the page below the last row, the live rows stay on top, then says all are shown', async () => {
    const asked: RunsQuery[] = [];
    const listed = Array.from({ length: 48 }, (_, i) => done(`r${99 - i}`, '09'));
    const st = testStore({ ...base, runs: [done('r3', '03'), done('r2', '02')] }, {
      runs: async (qr) => (asked.push(qr), { runs: [done('r1', '01')], more: false }),
    });
    act(() => render(<InStore store={st}><Runs /></InStore>, root()));
    expect(rows('runs-table')).toEqual(['run-row-r3', 'run-row-r2']);
    expect(q('runs-older')).toBeNull(); // the state lists up to 50: two are all there is
    act(() => st.applyState({ ...st.get().state!, runs: [...listed, done('r3', '03'), done('r2', '02')] }));
    expect(rows('runs-table').length).toBe(50);
    act(() => (q('runs-older') as HTMLButtonElement).click());
    await settle();
    expect(asked).toEqual([{ tenant: undefined, before: 'r2' }]);
    expect(rows('runs-table').slice(-3)).toEqual(['run-row-r3', 'run-row-r2', 'run-row-r1']);
    expect(q('runs-older')).toBeNull();
    expect(text('runs-all')).toBe('All 51 shown.');
    act(() => st.applyState({ ...st.get().state!, runs: [done('r4', '04', { status: 'active', usage: 'pending' }), ...listed, done('r3', '03')] }));
    expect(rows('runs-table')[0]).toBe('run-row-r4');
    expect(rows('runs-table').slice(-3)).toEqual(['run-row-r3', 'run-row-r2', 'run-row-r1']);
    expect(rows('runs-table').length).toBe(52);
  });

  it("Holds: one tenant's, read from the server at once; a refused read is said under the table", async () => {
    const asked: RunsQuery[] = [];
    const st = testStore({ ...base, runs: [], holds: [heldRun('h_local', '02')] }, {
      holds: async (qr) => {
        asked.push(qr);
        if (!qr.before && qr.tenant === 'tenant-a') return { runs: [heldRun('h_a', '01', { tenant: 'tenant-a' })], more: true };
        throw new Error('gateway gone');
      },
    });
    act(() => render(<InStore store={st}><Holds /></InStore>, root()));
    const pick = q('holds-tenant') as HTMLSelectElement;
    expect([...pick.options].map((o) => o.value)).toEqual(['', 'local', 'tenant-a']);
    act(() => {
      pick.value = 'tenant-a';
      pick.dispatchEvent(new Event('change'));
    });
    await settle();
    expect(asked[0]).toEqual({ tenant: 'tenant-a', before: undefined });
    expect(rows('holds-table').filter((r) => r!.startsWith('hold-row-'))).toEqual(['hold-row-h_a']);
    act(() => (q('holds-older') as HTMLButtonElement).click());
    await settle();
    expect(asked[1]).toEqual({ tenant: 'tenant-a', before: 'h_a' });
    expect(text('holds-older-error')).toContain('gateway gone');
  });
});
