// The Overview's reads beyond the state: older pages of runs and holds below
// the last row shown (the live rows still on top), one tenant's on demand,
// and the spend rollup re-read as states arrive, at most every SPEND_EVERY.
import { describe, expect, it } from 'vitest';
import { ApiError, type Api, type RunsQuery, type SpendPage } from '../lib/api';
import type { Run, State } from '../lib/types';
import fixture from '../fixtures/state.json';
import { heldRun } from '../fixtures/run';
import { fakeApi } from '../fixtures/store';
import { Store } from './store';
import { SPEND_DAYS, SPEND_EVERY, shownRows } from './books';

const base = fixture as unknown as State;
const run = (id: string, over: Partial<Run> = {}): Run =>
  heldRun(id, '00', { status: 'completed', usage: 'trusted', held_units: 0, ...over });
const ids = (rows: readonly Run[]) => rows.map((r) => r.id);

function storeWith(api: Partial<Api>, state: State, now = () => 0): Store {
  return new Store({ api: fakeApi(api), exportCSV: async () => ({ kind: 'cancelled' }), now }, state);
}

describe('older runs', () => {
  it('reads below the last live run, keeps the live rows of that moment, and stops when none is older', async () => {
    const asked: RunsQuery[] = [];
    const pages = [
      { runs: [run('r3'), run('r2')], more: true },
      { runs: [run('r1')], more: false },
    ];
    const st = storeWith({ runs: async (q) => (asked.push(q), pages[asked.length - 1]) }, { ...base, runs: [run('r5'), run('r4')] });
    await st.books.older('runs');
    expect(asked[0]).toEqual({ tenant: undefined, before: 'r4' });
    // r4 leaves the state's list as newer runs arrive: it stays shown, between the live rows and the page.
    st.applyState({ ...base, runs: [run('r7'), run('r6'), run('r5')] });
    expect(ids(shownRows(st.get().state, 'runs', st.get().books.runs))).toEqual(['r7', 'r6', 'r5', 'r4', 'r3', 'r2']);
    await st.books.older('runs');
    expect(asked[1].before).toBe('r2');
    expect(st.get().books.runs.more).toBe(false);
    await st.books.older('runs');
    expect(asked.length).toBe(2);
    expect(ids(shownRows(st.get().state, 'runs', st.get().books.runs))).toEqual(['r7', 'r6', 'r5', 'r4', 'r3', 'r2', 'r1']);
  });

  it("one tenant's: reads the tenant's first page at once, drops an answer for the filter before, and notes a refusal", async () => {
    const asked: RunsQuery[] = [];
    let release: (() => void) | undefined;
    const st = storeWith(
      {
        runs: async (q) => {
          asked.push(q);
          if (!q.tenant) await new Promise<void>((r) => (release = r));
          if (q.tenant === 'nobody') throw new ApiError('no such tenant', 404, 'not_found');
          return { runs: [run(`old-${q.tenant ?? 'all'}`, { tenant: q.tenant ?? 'local' })], more: false };
        },
      },
      { ...base, runs: [run('a1', { tenant: 'tenant-a' }), run('l1')] },
    );
    const slow = st.books.older('runs');
    await Promise.resolve();
    st.books.setTenant('runs', 'tenant-a');
    release?.();
    await slow;
    await Promise.resolve();
    expect(asked[1]).toEqual({ tenant: 'tenant-a', before: 'a1' });
    expect(ids(shownRows(st.get().state, 'runs', st.get().books.runs))).toEqual(['a1', 'old-tenant-a']);
    st.books.setTenant('runs', 'nobody');
    await new Promise((r) => setTimeout(r, 0));
    expect(st.get().notes.get('older:runs')).toMatchObject({ kind: 'error', code: 'not_found' });
    expect(st.get().books.runs.loading).toBe(false);
  });

  it('a run settled or cancelled from this page shows as the gateway answered it, not as its page was read', async () => {
    const st = storeWith(
      {
        runs: async () => ({ runs: [heldRun('r2', '02'), run('r1', { status: 'active', usage: 'pending', held_units: 102 })], more: false }),
        reconcile: async (id, n) => run(id, { spent_units: n }),
        cancelRun: async (id) => run(id, { status: 'cancelled', usage: 'unknown', held_units: 102 }),
      },
      { ...base, runs: [run('r4'), heldRun('r3', '03')], holds: [heldRun('r3', '03')] },
    );
    await st.books.older('runs');
    expect(await st.reconcile('r2', 7, 'bill')).toBe(true);
    expect(await st.cancelRun('r1')).toBe(true);
    const older = st.get().books.runs.older;
    expect(older.find((r) => r.id === 'r2')).toMatchObject({ usage: 'trusted', spent_units: 7, held_units: 0 });
    expect(older.find((r) => r.id === 'r1')).toMatchObject({ status: 'cancelled' });
    // A run the older pages do not show is left to the state.
    expect(await st.reconcile('r9', 1, 'bill')).toBe(true);
    expect(st.get().books.runs.older).toBe(older);
  });
});

describe('older holds', () => {
  it('reads below the last live hold; a hold settled here or ended in the state leaves the older rows', async () => {
    const asked: RunsQuery[] = [];
    const st = storeWith(
      { holds: async (q) => (asked.push(q), { runs: [heldRun('h2', '02'), heldRun('h1', '01'), heldRun('h0', '00')], more: false }) },
      { ...base, runs: [], holds: [heldRun('h3', '03')] },
    );
    await st.books.older('holds');
    expect(asked[0].before).toBe('h3');
    expect(ids(st.get().books.holds.older)).toEqual(['h2', 'h1', 'h0']);
    expect(await st.reconcile('h1', 5, 'bill')).toBe(true);
    st.applyState({ ...base, runs: [run('h0')], holds: [heldRun('h3', '03')] });
    expect(ids(shownRows(st.get().state, 'holds', st.get().books.holds))).toEqual(['h3', 'h2']);
  });
});

describe('spend rollup', () => {
  it('is read while watched, again with a state only after SPEND_EVERY, and not after the watch ends', async () => {
    let now = 1_000_000;
    const asked: number[] = [];
    const page: SpendPage = { days: ['2026-11-29'], rows: [] };
    const st = storeWith({ spend: async (d) => (asked.push(d), page) }, base, () => now);
    const stop = st.books.watchSpend();
    await Promise.resolve();
    expect(asked).toEqual([SPEND_DAYS]);
    expect(st.get().books.spend).toEqual(page);
    now += SPEND_EVERY - 1;
    st.applyState(base);
    expect(asked.length).toBe(1);
    now += 1;
    st.applyState(base);
    expect(asked.length).toBe(2);
    stop();
    now += SPEND_EVERY;
    st.applyState(base);
    expect(asked.length).toBe(2);
  });

  it('a gateway without the rollup leaves it unread (the chart sums the listed runs)', async () => {
    const st = storeWith({ spend: async () => { throw new ApiError('not found', 404, 'not_found'); } }, base);
    st.books.watchSpend();
    await new Promise((r) => setTimeout(r, 0));
    expect(st.get().books.spend).toBeNull();
  });
});
