import { describe, expect, it } from 'vitest';
import { ApiError, type Api } from '../lib/api';
import { noteText, Store } from './store';
import { setLang } from '../lib/i18n';
import type { State } from '../lib/types';
import fixture from '../fixtures/state.json';
import { fakeApi as baseApi } from '../fixtures/store';

const state = fixture as unknown as State;

/** fakeApi is the fixtures' fake admin API answering state with the fixture. */
function fakeApi(over: Partial<Api> = {}): Api {
  return baseApi({ state: async () => state, ...over });
}

describe('Store actions', () => {
  it('a refused action shows the server sentence and clears busy', async () => {
    const st = new Store(
      {
        api: fakeApi({
          reconcile: async () => {
            throw new ApiError('run r1 holds nothing to reconcile', 409, 'not_held');
          },
        }),
        exportCSV: async () => ({ kind: 'cancelled' }),
      },
      state,
    );
    const busySeen: boolean[] = [];
    st.subscribe((v) => busySeen.push(v.busy.has('reconcile:r1')));
    expect(await st.reconcile('r1', 5, 'bill')).toBe(false);
    // Without the run as a param the catalogue cannot say it: the server's words stand.
    expect(st.get().notes.get('reconcile:r1')).toMatchObject({ kind: 'error', text: 'run r1 holds nothing to reconcile', code: 'not_held' });
    expect(st.get().busy.size).toBe(0);
    expect(busySeen[0]).toBe(true);
    st.dismiss('reconcile:r1');
    expect(st.get().notes.size).toBe(0);
  });
  it('a refusal the catalogue knows is said in the page language, again after a switch', async () => {
    const st = new Store(
      {
        api: fakeApi({
          reconcile: async () => {
            throw new ApiError('reconciled units 1500 exceed the reserve 1200 of run r1', 400, 'invalid_request', 'reconcile_over_reserve', { run: 'r1', units: 1500, reserve: 1200 });
          },
        }),
        exportCSV: async () => ({ kind: 'cancelled' }),
      },
      state,
    );
    expect(await st.reconcile('r1', 1500, 'bill')).toBe(false);
    const n = st.get().notes.get('reconcile:r1')!;
    expect([n.text, n.reason]).toEqual(['Reconciled units 1,500 exceed the reserve 1,200 of run r1.', 'reconcile_over_reserve']);
    setLang('zh-CN');
    expect(noteText(n)).toBe('对账单位 1,500 超过调用 r1 的预留 1,200。');
    setLang('en');
  });

  it('a successful action clears an old error and leaves a notice', async () => {
    const sent: unknown[] = [];
    const st = new Store(
      {
        api: fakeApi({ setBalance: async (u, m, r) => void sent.push([u, m, r]) }),
        exportCSV: async () => ({ kind: 'saved', path: '/tmp/a.csv' }),
      },
      state,
    );
    st.fail('quota:ark/m', 'old problem');
    expect(await st.setBalance('ark', 'm', 'b0', 2242178)).toBe(true);
    expect(sent).toEqual([['ark', 'm', { b0: 2242178 }]]);
    // The success replaces the error of the same place: never both.
    expect(st.get().notes.get('quota:ark/m')).toEqual({ kind: 'ok', text: 'B0 recorded for ark/m.' });
    expect(await st.exportCSV({})).toBe(true);
    expect(st.get().notes.get('export')?.text).toBe('Audit CSV saved to /tmp/a.csv.');
    expect(st.get().notes.get('quota:ark/m')?.kind).toBe('ok');
  });

  it('a second click while the first is in flight is ignored', async () => {
    let release!: () => void;
    let calls = 0;
    const st = new Store(
      {
        api: fakeApi({
          cancelRun: () => {
            calls++;
            return new Promise<void>((r) => (release = r));
          },
        }),
        exportCSV: async () => ({ kind: 'cancelled' }),
      },
      state,
    );
    const first = st.cancelRun('r1');
    expect(await st.cancelRun('r1')).toBe(false);
    release();
    expect(await first).toBe(true);
    expect(calls).toBe(1);
  });

  it('applyState records when the state arrived, for the uptime clock', () => {
    let now = 1000;
    const st = new Store({ api: fakeApi(), exportCSV: async () => ({ kind: 'cancelled' }), now: () => now });
    now = 5000;
    st.applyState(state);
    expect(st.get().receivedAt).toBe(5000);
    expect(st.get().state?.version).toBe('0.1.0');
  });
});
