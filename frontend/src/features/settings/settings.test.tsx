// The Settings panel's own parts: the window-only start-at-login switch and
// write-back of the overrides to the config file.
import { describe, expect, it, vi } from 'vitest';
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { AutostartSwitch } from './AutostartSwitch';
import { TenantSettings } from './TenantSettings';
import { autostartApp, type AutostartApp } from '../../lib/autostart';
import type { Api, TenantSettings as Settings, WriteBack } from '../../lib/api';
import type { Host } from '../../lib/desktop';
import { setLang } from '../../lib/i18n';
import { InStore, testStore } from '../../fixtures/store';
import { page } from '../../fixtures/page';
import fixture from '../../fixtures/state.json';
import type { State } from '../../lib/types';

const { root } = page(() => vi.unstubAllGlobals());

const flush = async () => {
  for (let i = 0; i < 5; i++) await act(async () => await Promise.resolve());
};
const q = (id: string) => root().querySelector(`[data-testid="${id}"]`) as HTMLInputElement | null;

const host = (app: object | undefined): Host => ({
  go: app ? { app: { App: app as never } } : undefined,
  location: { origin: 'http://x', hash: '', pathname: '/', search: '' },
  history: { replaceState() {} },
});

describe('autostartApp', () => {
  it.each([
    ['a browser (no window.go)', undefined, false],
    ['a window without the switch bindings', { Connection: async () => ({ url: '', token: '' }) }, false],
    ['the window', { Connection: async () => ({ url: '', token: '' }), StartAtLogin: async () => false, SetStartAtLogin: async () => {} }, true],
  ])('%s', (_name, app, shown) => {
    expect(autostartApp(host(app)) !== null).toBe(shown);
  });
});

describe('AutostartSwitch', () => {
  it('is absent in a browser', () => {
    act(() => render(<AutostartSwitch app={null} />, root()));
    expect(q('autostart-panel')).toBeNull();
  });

  it('shows the system state, sets it and reads it back', async () => {
    let on = false;
    const calls: boolean[] = [];
    const app: AutostartApp = {
      StartAtLogin: async () => on,
      SetStartAtLogin: async (v) => {
        calls.push(v);
        on = v;
        return undefined;
      },
    };
    act(() => render(<AutostartSwitch app={app} />, root()));
    await flush();
    expect(q('autostart')!.checked).toBe(false);
    q('autostart')!.checked = true;
    act(() => void q('autostart')!.dispatchEvent(new Event('change', { bubbles: true })));
    await flush();
    expect(calls).toEqual([true]);
    expect(q('autostart')!.checked).toBe(true);
  });

  it('a refusal says why, next to the switch, and the box shows the unchanged state', async () => {
    const app: AutostartApp = {
      StartAtLogin: async () => false,
      SetStartAtLogin: async () => {
        throw new Error('no autostart directory');
      },
    };
    act(() => render(<AutostartSwitch app={app} />, root()));
    await flush();
    q('autostart')!.checked = true;
    act(() => void q('autostart')!.dispatchEvent(new Event('change', { bubbles: true })));
    await flush();
    expect(root().querySelector('[role="alert"]')?.textContent).toBe('Could not change start at login: no autostart directory');
  });
});

describe('write back', () => {
  const withOverride: Settings = {
    tenants: [{ id: 'team', budget_units: 250000, max_concurrent: 2, per_minute: 0, per_hour: 0, allowed_models: [] }],
    overrides: [{ tenant: 'team', field: 'budget_units', file: '100000', now: '250000' }],
  };
  const api = (writeBack: () => Promise<WriteBack>): Partial<Api> => ({ tenants: async () => withOverride, writeBack });

  it('asks, rewrites the file, clears the banner and says where and what became of keys', async () => {
    vi.stubGlobal('confirm', () => true);
    const wb = vi.fn(async () => ({
      file: '/home/me/quotagate.yaml',
      notes: [{ kind: 'rotated_hash', tenant: 'team', text: 'tenant team: the rotated key is in the file as its SHA-256 (key_hashes)' }],
      settings: { ...withOverride, overrides: [] },
    }));
    act(() => render(<InStore store={testStore(undefined, api(wb))}><TenantSettings /></InStore>, root()));
    await flush();
    expect(q('override-banner')).not.toBeNull();
    act(() => q('write-back')!.click());
    await flush();
    expect(wb).toHaveBeenCalledTimes(1);
    expect(q('override-banner')).toBeNull();
    expect(q('written-back')!.textContent).toContain('Written to /home/me/quotagate.yaml.');
    expect(q('written-back')!.textContent).toContain('SHA-256');
  });

  it('does nothing when not confirmed; a refusal shows the server sentence', async () => {
    let answer = false;
    vi.stubGlobal('confirm', () => answer);
    const wb = vi.fn(async (): Promise<WriteBack> => {
      throw new Error('quotagate was started without --config');
    });
    act(() => render(<InStore store={testStore(undefined, api(wb))}><TenantSettings /></InStore>, root()));
    await flush();
    act(() => q('write-back')!.click());
    expect(wb).not.toHaveBeenCalled();
    answer = true;
    act(() => q('write-back')!.click());
    await flush();
    expect(root().querySelector('[role="alert"]')?.textContent).toContain('without --config');
    expect(q('override-banner')).not.toBeNull();
  });
});

describe('delete a tenant', () => {
  const two: Settings = {
    tenants: [
      { id: 'team', budget_units: 100000, max_concurrent: 2, per_minute: 0, per_hour: 0, allowed_models: [] },
      { id: 'bot', budget_units: 5000, max_concurrent: 1, per_minute: 0, per_hour: 0, allowed_models: [] },
    ],
    overrides: [],
  };
  const api = (deleteTenant: (id: string) => Promise<Settings>): Partial<Api> => ({ tenants: async () => two, deleteTenant });

  it('asks first; a refusal stays under that row in words and keeps the tenant', async () => {
    let answer = false;
    vi.stubGlobal('confirm', () => answer);
    const del = vi.fn(async (): Promise<Settings> => {
      throw new Error('tenant team cannot be deleted: 102 units are held by 1 run; reconcile it on the Holds tab first');
    });
    act(() => render(<InStore store={testStore(undefined, api(del))}><TenantSettings /></InStore>, root()));
    await flush();
    act(() => q('delete-team')!.click());
    expect(del).not.toHaveBeenCalled();
    answer = true;
    act(() => q('delete-team')!.click());
    await flush();
    expect(del).toHaveBeenCalledWith('team');
    expect(q('delete-error-team')!.textContent).toBe(
      'Tenant team was not deleted. tenant team cannot be deleted: 102 units are held by 1 run; reconcile it on the Holds tab first',
    );
    expect(q('delete-error-bot')).toBeNull();
    expect(q('settings-row-team')).not.toBeNull();
    // The error row sits right after the tenant's own row.
    expect(q('settings-row-team')!.nextElementSibling!.contains(q('delete-error-team'))).toBe(true);
  });

  it('a deleted file tenant is gone from the table and the banner says the file still has it', async () => {
    vi.stubGlobal('confirm', () => true);
    setLang('zh-CN');
    const del = vi.fn(async (id: string) => ({
      tenants: two.tenants.filter((x) => x.id !== id),
      overrides: [{ tenant: id, field: 'tenant', file: 'in the file', now: 'deleted on the dashboard' }],
    }));
    act(() => render(<InStore store={testStore(undefined, api(del))}><TenantSettings /></InStore>, root()));
    await flush();
    act(() => q('delete-team')!.click());
    await flush();
    expect(q('settings-row-team')).toBeNull();
    expect(q('settings-row-bot')).not.toBeNull();
    expect(q('override-banner')!.textContent).toContain('team.tenant');
    expect(q('tenant-deleted')!.textContent).toContain('租户 team 已删除；在写回之前配置文件中仍有它');
  });
});

describe('money budget in Settings', () => {
  const one: Settings = { tenants: [{ id: 'team', budget_units: 1000, budget: '50', max_concurrent: 2, per_minute: 0, per_hour: 0, allowed_models: [] }], overrides: [] };
  const withCurrency = (currency?: string) => ({ ...(fixture as unknown as State), currency });
  const type = (id: string, v: string) => {
    const el = q(id)!;
    el.value = v;
    el.dispatchEvent(new Event('input', { bubbles: true }));
  };

  it('edits the money budget as a decimal string when the gateway has a currency', async () => {
    const save = vi.fn(async (): Promise<Settings> => one);
    act(() => render(<InStore store={testStore(withCurrency('USD'), { tenants: async () => one, saveTenant: save })}><TenantSettings /></InStore>, root()));
    await flush();
    expect(q('settings-money-team')!.textContent!.trim()).toBe('$50.00');
    act(() => q('edit-team')!.click());
    expect(q('tenant-money')!.value).toBe('50');
    act(() => type('tenant-money', '1.2345678'));
    await act(async () => q('tenant-save')!.click());
    expect(save).not.toHaveBeenCalled();
    expect(q('tenant-error')!.textContent).toContain('at most 6 places');
    act(() => type('tenant-money', '75.50'));
    await act(async () => q('tenant-save')!.click());
    await flush();
    expect(save).toHaveBeenCalledWith(expect.objectContaining({ id: 'team', budget_units: 1000, budget: '75.5' }));
  });

  it('asks no money budget of a gateway without a currency', async () => {
    act(() => render(<InStore store={testStore(withCurrency(undefined), { tenants: async () => one })}><TenantSettings /></InStore>, root()));
    await flush();
    expect(q('settings-money-team')).toBeNull();
    act(() => q('edit-team')!.click());
    expect(q('tenant-money')).toBeNull();
  });
});
