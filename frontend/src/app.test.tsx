// Renders the whole dashboard from the fixture state (fixture mode) and
// checks what a person would read, plus the operator actions' round trips.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { App } from './app';
import { ApiError, type Api } from './lib/api';
import { Store } from './lib/store';
import type { SocketLike } from './lib/live';
import type { State } from './lib/types';
import fixture from './fixtures/state.json';

const state = fixture as unknown as State;
const NOW = Date.parse('2026-11-29T11:02:00Z');
const ACTIVE = 'run_01JQ7ACTIVE0000000000000';
const QUEUED = 'run_01JQ7QUEUED0000000000000';
const UNKNOWN = 'run_01JQ7UNKNOWN000000000000';
const DONE = 'run_01JQ7DONE000000000000000';

let root: HTMLElement;
let calls: unknown[][];

function api(over: Partial<Api> = {}): Api {
  return {
    state: async () => state,
    reconcile: async (...a) => void calls.push(['reconcile', ...a]),
    cancelRun: async (...a) => void calls.push(['cancel', ...a]),
    syncQuota: async (...a) => void calls.push(['sync', ...a]),
    setBalance: async (...a) => void calls.push(['balance', ...a]),
    auditCSV: async () => new Blob([]),
    wsURL: () => 'ws://127.0.0.1:8787/admin/ws?token=t',
    ...over,
  };
}

function mount(a: Api = api(), initial: State | null = state): Store {
  const store = new Store(
    { api: a, exportCSV: async (_api, q) => (calls.push(['export', q]), { kind: 'downloaded', name: 'x.csv' }), now: () => NOW },
    initial ?? undefined,
  );
  act(() => render(<App store={store} clock={() => NOW} tick={false} />, root));
  return store;
}

const $ = (id: string) => root.querySelector<HTMLElement>(`[data-testid="${id}"]`);
const text = (id: string) => {
  const el = $(id);
  if (!el) throw new Error(`no element with data-testid=${id}`);
  return el.textContent?.replace(/\s+/g, ' ').trim();
};

async function flush() {
  await act(async () => {
    await new Promise((r) => setTimeout(r, 0));
  });
}

async function click(id: string) {
  const el = $(id);
  if (!el) throw new Error(`no element with data-testid=${id}`);
  await act(async () => el.click());
  await flush();
}

async function type(id: string, value: string) {
  const el = $(id) as HTMLInputElement;
  await act(async () => {
    el.value = value;
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
}

beforeEach(() => {
  calls = [];
  root = document.createElement('div');
  document.body.appendChild(root);
});

afterEach(() => {
  act(() => render(null, root));
  root.remove();
});

describe('dashboard from the fixture', () => {
  it('header shows version, uptime, address, data dir, connection and the demo label', () => {
    mount();
    expect(text('version')).toBe('0.1.0');
    expect(text('uptime')).toBe('1h 02m');
    expect(text('addr')).toBe('127.0.0.1:8787');
    expect(text('data-dir')).toBe('/root/.local/share/quotagate');
    expect(text('meter')).toBe('tiktoken');
    expect(text('conn-status')).toBe('connecting');
    expect(text('demo-badge')).toContain('simulated model');
    expect($('error-banner')).toBeNull();
  });

  it('no demo badge when the demo upstream is off', () => {
    mount(api(), { ...state, demo: false });
    expect($('demo-badge')).toBeNull();
  });

  it('tenants table: formatted balances per tenant', () => {
    mount();
    expect($('tenants-table')).not.toBeNull();
    expect(text('tenant-local-available')).toBe('745,904');
    expect(text('tenant-local-held')).toBe('4,096');
    expect(text('tenant-tenant-a-available')).toBe('95');
    expect(text('tenant-tenant-a-held')).toBe('0');
    expect(text('tenant-row-local')).toContain('1,000,000');
    expect(text('tenant-row-local')).toContain('1 / 4');
    const bar = $('tenant-row-local')!.querySelector<HTMLElement>('.bar-spent')!;
    expect(bar.style.width).toBe('25%');
  });

  it('holds table lists held runs with a reconcile button each', () => {
    mount();
    const rows = $('holds-table')!.querySelectorAll('tbody tr');
    expect(rows).toHaveLength(2);
    expect(text(`hold-row-${UNKNOWN}`)).toContain('1,002');
    expect(text(`hold-row-${UNKNOWN}`)).toContain('unknown');
    expect($(`reconcile-${UNKNOWN}`)?.tagName).toBe('BUTTON');
    expect($(`reconcile-${ACTIVE}`)?.tagName).toBe('BUTTON');
  });

  it('runs table offers cancel only for queued and active runs', () => {
    mount();
    expect($(`cancel-${ACTIVE}`)?.tagName).toBe('BUTTON');
    expect($(`cancel-${QUEUED}`)?.tagName).toBe('BUTTON');
    expect($(`cancel-${UNKNOWN}`)).toBeNull();
    expect($(`cancel-${DONE}`)).toBeNull();
    expect(text(`run-row-${DONE}`)).toContain('2026-11-28 23:59');
  });

  it('gates table shows depth, in flight, rejections and p95', () => {
    mount();
    expect($('gates-table')).not.toBeNull();
    expect(text('gate-ark-queued')).toBe('3 / 4');
    const ark = text('gate-row-ark')!;
    expect(ark).toContain('2 / 2');
    expect(ark).toContain('5,678');
    expect(ark).toContain('12');
    expect(ark).toContain('1.5 s');
  });

  it('quota table shows the guard figures, the eviction and a never-synced model', () => {
    mount();
    expect($('quota-table')).not.toBeNull();
    const id = 'ark-deepseek-v4-flash';
    expect(text(`quota-${id}-usage`)).toBe('1,696,135');
    expect(text(`quota-${id}-limit`)).toBe('2,192,178');
    const row = text(`quota-row-${id}`)!;
    expect(row).toContain('2,242,178'); // B0 estimate
    expect(row).toContain('1,726,526'); // balance at sync
    expect(row).toContain('2,192,128'); // limit v6
    expect(row).toContain('lag 14m 00s');
    expect(row).toContain('2m 00s ago');
    expect(text(`quota-${id}-evicted`)).toBe('evicted');
    expect(text(`quota-${id}-reason`)).toBe('evicted: usage 1,696,135 + reserve 4,096 reached the usage wall');
    const never = text('quota-row-ark-doubao-seed')!;
    expect(never).toContain('never');
    expect(never).toContain('open');
  });

  it('snapshots list, latest first', () => {
    mount();
    const rows = $('snapshots-list')!.querySelectorAll('tbody tr');
    expect(rows).toHaveLength(2);
    expect(rows[0].getAttribute('data-testid')).toBe('snapshot-row-2');
    expect(text('snapshot-row-1')).toContain('manual');
  });

  it('empty lists (Go nil slices) render as empty tables, not a crash', () => {
    mount(api(), { ...state, tenants: [], holds: [], runs: [], gates: [], quota: [], snapshots: [] });
    expect(text('tenants-table')).toContain('No tenants configured.');
    expect(text('holds-table')).toContain('Nothing held.');
    expect(text('quota-table')).toContain('No guarded models.');
  });
});

describe('operator actions', () => {
  it('reconcile: form → POST with units and evidence → form closes, notice shown', async () => {
    mount();
    await click(`reconcile-${UNKNOWN}`);
    await type(`reconcile-units-${UNKNOWN}`, '1,002');
    await type(`reconcile-evidence-${UNKNOWN}`, 'console shows 1,002 tokens');
    await click(`reconcile-submit-${UNKNOWN}`);
    expect(calls).toEqual([['reconcile', UNKNOWN, 1002, 'console shows 1,002 tokens']]);
    expect($(`reconcile-form-${UNKNOWN}`)).toBeNull();
    expect(text('notice')).toContain('reconciled at 1002 units');
  });

  it('reconcile refused by the server: its message in the error banner, form stays open', async () => {
    mount(
      api({
        reconcile: async () => {
          throw new ApiError('run is still active; wait for it to end', 409, 'conflict');
        },
      }),
    );
    await click(`reconcile-${ACTIVE}`);
    await type(`reconcile-units-${ACTIVE}`, '10');
    await type(`reconcile-evidence-${ACTIVE}`, 'bill');
    await click(`reconcile-submit-${ACTIVE}`);
    expect(text('error-banner')).toBe('run is still active; wait for it to end');
    expect($(`reconcile-form-${ACTIVE}`)).not.toBeNull();
  });

  it('reconcile with bad units never calls the server', async () => {
    mount();
    await click(`reconcile-${UNKNOWN}`);
    await type(`reconcile-units-${UNKNOWN}`, '-3');
    await type(`reconcile-evidence-${UNKNOWN}`, 'bill');
    await click(`reconcile-submit-${UNKNOWN}`);
    expect(calls).toEqual([]);
    expect(text('error-banner')).toContain('whole number');
  });

  it('cancel posts for that run', async () => {
    mount();
    await click(`cancel-${QUEUED}`);
    expect(calls).toEqual([['cancel', QUEUED]]);
  });

  it('quota: sync, and a B0 reading', async () => {
    mount();
    const id = 'ark-deepseek-v4-flash';
    await click(`sync-${id}`);
    await click(`balance-${id}`);
    const kind = $(`balance-kind-${id}`) as HTMLSelectElement;
    await act(async () => {
      kind.value = 'b0';
      kind.dispatchEvent(new Event('change', { bubbles: true }));
    });
    await type(`balance-value-${id}`, '2,242,178');
    await click(`balance-submit-${id}`);
    expect(calls).toEqual([
      ['sync', 'ark', 'deepseek-v4-flash'],
      ['balance', 'ark', 'deepseek-v4-flash', { b0: 2242178 }],
    ]);
  });

  it('export CSV', async () => {
    mount();
    await click('export-csv');
    expect(calls).toEqual([['export', { from: '', to: '', tenant: '' }]]);
    expect(text('notice')).toBe('Audit CSV downloaded as x.csv.');
  });
});

describe('live updates', () => {
  it('a pushed state turns the status live and updates the tables without reload', async () => {
    const sockets: SocketLike[] = [];
    const store = mount(api(), null);
    expect(root.textContent).toContain('Connecting to quotagate');
    act(() =>
      store.start((url) => {
        expect(url).toBe('ws://127.0.0.1:8787/admin/ws?token=t');
        const s: SocketLike = { onopen: null, onmessage: null, onclose: null, onerror: null, close() {} };
        sockets.push(s);
        return s;
      }),
    );
    await flush();
    expect(sockets).toHaveLength(1);
    expect(text('tenant-local-available')).toBe('745,904');
    expect(text('conn-status')).toBe('connecting');

    const next = {
      ...state,
      tenants: state.tenants.map((t) => (t.tenant === 'local' ? { ...t, available_units: 123456 } : t)),
    };
    await act(async () => sockets[0].onmessage?.({ data: JSON.stringify({ type: 'state', state: next }) }));
    expect(text('conn-status')).toBe('live');
    expect(text('tenant-local-available')).toBe('123,456');

    await act(async () => sockets[0].onclose?.({}));
    expect(text('conn-status')).toBe('reconnecting');
    store.stop();
  });

  it('a refused token is said in the error banner', async () => {
    const store = mount(
      api({
        state: async () => {
          throw new ApiError('The admin token was refused (401)', 401);
        },
      }),
      null,
    );
    act(() => store.start(() => ({ onopen: null, onmessage: null, onclose: null, onerror: null, close() {} })));
    await flush();
    expect(text('error-banner')).toContain('refused (401)');
    expect(text('conn-status')).toBe('reconnecting');
    store.stop();
  });
});
