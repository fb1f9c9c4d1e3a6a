// Renders the whole dashboard from the fixture state (fixture mode) and
// checks what a person would read, plus the operator actions' round trips.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { App } from './app';
import { ApiError, type Api } from './lib/api';
import { Store } from './state/store';
import type { SocketLike } from './lib/live';
import type { State } from './lib/types';
import fixture from './fixtures/state.json';
import { MISSING, setLang } from './lib/i18n';
import type { AuditRow, ConnectInfo } from './lib/api';

const connectInfo: ConnectInfo = {
  base_url: 'http://127.0.0.1:8787/v1',
  origin: 'http://127.0.0.1:8787',
  locale: 'C',
  tenants: [{ tenant: 'local', key: 'sk-qg-local-secret-0123456789', models: [] }],
  models: [{ id: 'demo-chat', upstream: 'demo' }],
};
const tenantSettings = {
  tenants: [{ id: 'local', budget_units: 4242, max_concurrent: 4, per_minute: 0, per_hour: 0, allowed_models: [], key_generated: true }],
  overrides: [{ tenant: 'local', field: 'budget_units', file: '1000000', now: '4242' }],
};
const auditRows: AuditRow[] = [
  { seq: 9, at: '2026-11-29T11:00:00Z', kind: 'sync', actor: 'volcengine', units: 0, balance: 1726526, available_before: 0, available_after: 0 },
  { seq: 8, at: '2026-11-29T10:40:12Z', kind: 'hold', tenant: 'local', run: 'run_01JQ7UNKNOWN000000000000', units: 1002, available_before: 745904, available_after: 745904, reason: 'stream cut before [DONE]' },
  { seq: 7, at: '2026-11-29T10:40:10Z', kind: 'admit', tenant: 'local', run: 'run_01JQ7UNKNOWN000000000000', actor: 'tenant:local', units: 1002, available_before: 746906, available_after: 745904 },
];

const state = fixture as unknown as State;
const NOW = Date.parse('2026-11-29T11:02:00Z');
const ACTIVE = 'run_01JQ7ACTIVE0000000000000';
const UNKNOWN = 'run_01JQ7UNKNOWN000000000000';

let root: HTMLElement;
let calls: unknown[][];

function api(over: Partial<Api> = {}): Api {
  return {
    state: async () => state,
    reconcile: async (...a) => void calls.push(['reconcile', ...a]),
    applyFinding: async (...a) => void calls.push(['applyFinding', ...a]),
    cancelRun: async (...a) => void calls.push(['cancel', ...a]),
    syncQuota: async (...a) => void calls.push(['sync', ...a]),
    setBalance: async (...a) => void calls.push(['balance', ...a]),
    auditCSV: async () => ({ blob: new Blob([]), name: 'x.csv' }),
    audit: async (q) => (calls.push(['audit', q]), { rows: auditRows, more: false }),
    connect: async () => connectInfo,
    tenants: async () => tenantSettings,
    saveTenant: async (p) => (calls.push(['saveTenant', p]), tenantSettings),
    rotateKey: async (id) => (calls.push(['rotate', id]), 'sk-qg-local-new'),
    deleteTenant: async () => ({ tenants: [], overrides: [] }),
    discardTenants: async () => tenantSettings,
    writeBack: async () => ({ file: '/etc/quotagate.yaml', notes: [], settings: { ...tenantSettings, overrides: [] } }),
    wsURL: () => 'ws://127.0.0.1:8787/admin/ws?token=t',
    ...over,
  };
}

function mount(a: Api = api(), initial: State | null = state, tab: 'overview' | 'connect' | 'quota' | 'audit' | 'settings' = 'overview'): Store {
  const store = new Store(
    { api: a, exportCSV: async (_api, q) => (calls.push(['export', q]), { kind: 'downloaded', name: 'x.csv' }), now: () => NOW },
    initial ?? undefined,
  );
  act(() => render(<App store={store} clock={() => NOW} tick={false} tab={tab} />, root));
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
  setLang('en');
  localStorage.clear(); // a language chosen in a test is not the next test's

  act(() => render(null, root));
  root.remove();
});

describe('dashboard from the fixture', () => {
  it('header shows version, uptime, address, data dir, connection and the demo label', () => {
    mount();
    expect(text('version')).toBe('0.1.0');
    expect(text('uptime')).toBe('1h 02m');
    expect(text('addr')).toBe('127.0.0.1:8787');
    expect(text('conn-status')).toBe('connecting');
    expect(text('demo-badge')).toContain('simulated model');
  });

  it('overview: a stacked bar with numbers and a legend per tenant, and totals', () => {
    mount();
    expect(text('tenant-local-available')).toBe('745,904');
    expect(text('tenant-local-held')).toBe('4,096');
    expect(text('tenant-local-spent')).toBe('250,000');
    expect(text('tenant-tenant-a-available')).toBe('95');
    expect(text('tenant-row-local')).toContain('(0.4%)'); // 4,096 of 1,000,000 is readable
    expect(text('tenant-_total-budget')).toBe('1,000,110');
    const held = $('bar-local')!.querySelector<HTMLElement>('.seg-held')!;
    expect(held.style.minWidth).toBe('4px');
    expect($('bar-local')!.getAttribute('aria-label')).toContain('held 4,096');
  });

  it('holds: only real holds, with why in a sentence', () => {
    mount();
    expect($(`hold-row-${UNKNOWN}`)).not.toBeNull();
    expect($(`hold-row-${ACTIVE}`)).toBeNull(); // an active run holds its reserve but is no hold
    expect(text(`hold-why-${UNKNOWN}`)).toContain('The upstream cut the stream');
    expect(text(`hold-why-${UNKNOWN}`)).toContain('stream cut before [DONE]');
  });

  it('reconcile: dialog with live preview, confirm → POST, fresh form next time', async () => {
    mount();
    await click(`reconcile-${UNKNOWN}`);
    expect(text(`reconcile-preview-${UNKNOWN}`)).toContain('Type the units');
    await type(`reconcile-units-${UNKNOWN}`, '6');
    expect(text(`reconcile-preview-${UNKNOWN}`)).toBe('Spend 6, release 996; local available becomes 746,900.');
    await type(`reconcile-evidence-${UNKNOWN}`, 'console: 6 tokens');
    await click(`reconcile-submit-${UNKNOWN}`);
    expect(calls).toContainEqual(['reconcile', UNKNOWN, 6, 'console: 6 tokens']);
    expect($(`reconcile-dialog-${UNKNOWN}`)).toBeNull();
    expect(text('notice')).toContain('reconciled at 6 units');
    await click(`reconcile-${UNKNOWN}`);
    expect(($(`reconcile-units-${UNKNOWN}`) as HTMLInputElement).value).toBe('');
    expect(($(`reconcile-evidence-${UNKNOWN}`) as HTMLTextAreaElement).value).toBe('');
  });

  it('reconcile errors stand next to their field; bad units never reach the server', async () => {
    mount(
      api({
        reconcile: async () => {
          throw new ApiError('reconciling a hold needs evidence (a bill, a console figure)', 400, 'invalid_request');
        },
      }),
    );
    await click(`reconcile-${UNKNOWN}`);
    await type(`reconcile-units-${UNKNOWN}`, '5000');
    await type(`reconcile-evidence-${UNKNOWN}`, 'bill');
    await click(`reconcile-submit-${UNKNOWN}`);
    expect(text(`reconcile-error-units-${UNKNOWN}`)).toBe('Units must be a whole number from 0 to 1,002.');
    expect(calls.filter((c) => c[0] === 'reconcile')).toEqual([]);
    await type(`reconcile-units-${UNKNOWN}`, '5');
    await click(`reconcile-submit-${UNKNOWN}`);
    expect(text(`reconcile-error-evidence-${UNKNOWN}`)).toContain('needs evidence');
    expect($(`reconcile-dialog-${UNKNOWN}`)).not.toBeNull();
  });

  it('cancel asks first and says the reserve stays held', async () => {
    mount();
    expect($(`cancel-${UNKNOWN}`)).toBeNull();
    await click(`cancel-${ACTIVE}`);
    expect(calls.filter((c) => c[0] === 'cancel')).toEqual([]);
    expect(text(`cancel-dialog-${ACTIVE}`)).toContain('stays held until you reconcile');
    await click(`cancel-confirm-${ACTIVE}`);
    expect(calls).toContainEqual(['cancel', ACTIVE]);
    expect(text(`notice-cancel-${ACTIVE}`)).toContain('Cancel sent');
  });

  it('quota: unknown before a sync, the wall in words when evicted', () => {
    mount(api(), state, 'quota');
    const never = state.quota.find((q) => !q.synced_at);
    if (never) expect(text(`quota-${never.upstream}-${never.model}-limit`)).toBe('unknown');
    const ev = state.quota.find((q) => q.evicted)!;
    expect(text(`quota-${ev.upstream}-${ev.model}-reason`)).toMatch(/^Evicted: /);
  });

  it('quota: what the ledger admits up to, and why it is below the limit', () => {
    const id = 'ark-deepseek-v4-flash'; // admit_limit 2,083,369 under the limit 2,192,178, overrun 1.25, tail 12,000
    mount(api(), state, 'quota');
    expect(text(`quota-${id}-admit-limit`)).toBe('2,083,369');
    expect(text(`quota-${id}-overrun`)).toBe('×1.25, 12,000 held back');
    expect(text(`quota-${id}-admit-why`)).toContain('up to 2,083,369, not the limit 2,192,178');
    expect(text('quota-ark-doubao-seed-overrun')).toBe('none');
    expect($('quota-ark-doubao-seed-admit-why')).toBeNull();
    setLang('zh-CN');
    mount(api(), state, 'quota');
    expect(text(`quota-${id}-overrun`)).toBe('×1.25，另预留 12,000');
    expect(text(`quota-${id}-admit-why`)).toContain('最多到 2,083,369');
  });

  it('quota: where the margin goes, term by term', () => {
    const id = 'ark-deepseek-v4-flash'; // 158,809 below the pool 2,242,178: buffer 50,000, overrun 108,809
    mount(api(), state, 'quota');
    expect(text(`quota-${id}-headroom`)).toBe(
      "Today's calls are admitted up to 2,083,369, 158,809 below the estimated pool 2,242,178: buffer 50,000, overrun 108,809. The usage wall evicts 242,178 below the limit.",
    );
    expect($('quota-ark-doubao-seed-headroom')).toBeNull();
    setLang('zh-CN');
    mount(api(), state, 'quota');
    expect(text(`quota-${id}-headroom`)).toContain('比估计的额度池 2,242,178 少 158,809：缓冲 50,000，超额 108,809');
  });

  it('audit log lists rows with balance in its own column, and exports the same filter', async () => {
    mount(api(), state, 'audit');
    await flush();
    expect(text('audit-row-9')).toContain('1,726,526');
    await type('audit-text', 'cut');
    await flush();
    expect(calls.filter((c) => c[0] === 'audit').pop()).toEqual(['audit', expect.objectContaining({ text: 'cut' })]);
    await click('export-csv');
    expect(calls).toContainEqual(['export', expect.objectContaining({ text: 'cut' })]);
  });

  it('connect: base URL, hidden key with reveal, snippets from the live config', async () => {
    mount(api(), state, 'connect');
    await flush();
    expect(text('connect-base-url')).toBe('http://127.0.0.1:8787/v1');
    expect(text('connect-key')).not.toContain('secret');
    await click('reveal-key');
    expect(text('connect-key')).toBe('sk-qg-local-secret-0123456789');
    const curl = $('snippet-curl')!.dataset.snippet!;
    expect(curl).toContain("'http://127.0.0.1:8787/v1/chat/completions'".replace(/'/g, ''));
    expect(curl).toContain('Bearer sk-qg-local-secret-0123456789');
    await click('tool-codex');
    expect($('snippet-codex')!.dataset.snippet).toContain('wire_api = "responses"');
    await click('tool-claude-code');
    expect($('snippet-claude-code')!.dataset.snippet).toContain('ANTHROPIC_BASE_URL=http://127.0.0.1:8787\n');
    await click('tool-gemini-cli');
    const gem = $('snippet-gemini-cli')!.dataset.snippet!;
    for (const line of ['"selectedType": "gemini-api-key"', 'export GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8787\n', 'export GEMINI_API_KEY=sk-qg-local-secret-0123456789\n']) {
      expect(gem).toContain(line);
    }
    await click('tool-google-genai');
    expect($('snippet-google-genai')!.dataset.snippet).toContain("httpOptions: { baseUrl: \"http://127.0.0.1:8787\" }");
    await click('tool-continue');
    const cont = $('snippet-continue')!.dataset.snippet!;
    for (const role of ['roles: [chat, edit, apply]', 'roles: [autocomplete]\n    useLegacyCompletionsEndpoint: true', 'roles: [embed]']) {
      expect(cont).toContain(role);
    }
    expect(cont.split('apiBase: "http://127.0.0.1:8787/v1"').length).toBe(4);
    expect(cont.split('apiKey: "sk-qg-local-secret-0123456789"').length).toBe(4);
  });

  it('zh-CN: Chinese words, lang attribute, no untranslated key on any tab', async () => {
    setLang('zh-CN');
    for (const tab of ['overview', 'connect', 'quota', 'audit', 'settings'] as const) {
      mount(api(), state, tab);
      await flush();
      expect(root.textContent).not.toContain(MISSING);
      expect(root.querySelector('.page')!.getAttribute('lang')).toBe('zh-CN');
      act(() => render(null, root));
    }
    mount();
    expect(text('conn-status')).toBe('连接中');
    expect(text(`hold-why-${UNKNOWN}`)).toContain('上游');
  });

  it('a pushed state turns the status live and a refused token is said', async () => {
    const st = mount(api({ state: async () => { throw new ApiError('The admin token was refused (401)', 401); } }), null);
    const sockets: SocketLike[] = [];
    st.start(() => {
      const s: SocketLike = { onopen: null, onmessage: null, onclose: null, onerror: null, close() {} };
      sockets.push(s);
      return s;
    });
    await flush();
    expect(text('error-banner')).toContain('refused');
    st.stop();
  });
  it('while reconnecting the data is marked stale', async () => {
    const st = mount();
    expect($('stale')).toBeNull();
    act(() => (st as unknown as { set(p: object): void }).set({ status: 'reconnecting' }));
    expect(text('stale')).toContain('may be out of date');
    expect(root.querySelector('main')!.classList.contains('stale')).toBe(true);
  });
  it('settings: the override banner says what differs from the file; an edit posts the policy', async () => {
    mount(api(), state, 'settings');
    await flush();
    expect(text('override-banner')).toContain('local.budget_units: 1000000 → 4242');
    await click('edit-local');
    await type('tenant-budget', '5,000');
    await click('tenant-save');
    expect(calls).toContainEqual(['saveTenant', expect.objectContaining({ id: 'local', budget_units: 5000, max_concurrent: 4 })]);
  });
});

describe('audit actors', () => {
  it('are shown as the server wrote them, a typed one marked by its kind', async () => {
    mount(api(), state, 'audit');
    await flush();
    const typed = $('audit-row-7')!.querySelector<HTMLElement>('.actor')!;
    expect(typed.textContent).toBe('tenant:local');
    expect(typed.dataset.kind).toBe('tenant');
    expect(text('audit-row-9')).toContain('volcengine'); // an actor from before they were typed
    expect($('audit-row-9')!.querySelector('.actor')).toBeNull();
  });
});

describe('one store', () => {
  async function switchLang(l: string) {
    const sel = $('lang-switch') as HTMLSelectElement;
    await act(async () => {
      sel.value = l;
      sel.dispatchEvent(new Event('change', { bubbles: true }));
    });
  }

  it('a language switch keeps an open dialog and what was typed in it', async () => {
    mount();
    await click(`reconcile-${UNKNOWN}`);
    await type(`reconcile-units-${UNKNOWN}`, '6');
    await switchLang('zh-CN');
    expect(root.querySelector('.page')!.getAttribute('lang')).toBe('zh-CN');
    expect($(`reconcile-dialog-${UNKNOWN}`)).not.toBeNull();
    expect(($(`reconcile-units-${UNKNOWN}`) as HTMLInputElement).value).toBe('6');
    expect(text(`reconcile-preview-${UNKNOWN}`)).toContain('746,900');
    expect(text(`reconcile-preview-${UNKNOWN}`)).not.toContain('Spend');
  });

  it('a language switch keeps an open tenant form', async () => {
    mount(api(), state, 'settings');
    await flush();
    await click('edit-local');
    await type('tenant-budget', '5,000');
    await switchLang('zh-CN');
    expect($('tenant-dialog')).not.toBeNull();
    expect(($('tenant-budget') as HTMLInputElement).value).toBe('5,000');
    await click('tenant-save');
    expect(calls).toContainEqual(['saveTenant', expect.objectContaining({ budget_units: 5000 })]);
  });

  it('asks /admin/api/connect once: before the first paint and for the Connect panel', async () => {
    let asked = 0;
    const store = new Store({ api: api({ connect: async () => (asked++, connectInfo) }), exportCSV: async () => ({ kind: 'cancelled' }), now: () => NOW }, state);
    await store.connectInfo(); // the window reads its locale before the first paint
    act(() => render(<App store={store} clock={() => NOW} tick={false} tab="overview" />, root));
    await flush();
    await click('nav-connect');
    expect(text('connect-base-url')).toBe('http://127.0.0.1:8787/v1');
    await click('nav-overview');
    await click('nav-connect');
    expect(asked).toBe(1);
  });
});
