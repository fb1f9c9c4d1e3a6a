import { afterEach, describe, expect, it } from 'vitest';
import { defaultPrefs, deliver, events, notifyApp, type NotifyEvent, type WebNotifications } from './notify';
import type { Host } from './desktop';
import { setLang } from './i18n';
import type { State } from './types';
import fixture from '../fixtures/state.json';

const base = fixture as unknown as State;
afterEach(() => setLang('en'));

describe('notification events', () => {
  const held = { ...base.runs[0], id: 'r-new', status: 'interrupted' as const, usage: 'unknown' as const, held_units: 102, reserve_units: 102 };
  it('nothing on the first state', () => {
    expect(events(null, base, defaultPrefs)).toEqual([]);
  });
  it('a new hold, a new eviction, a tenant passing 80 %', () => {
    const prev: State = { ...base, holds: [], quota: base.quota.map((q) => ({ ...q, evicted: false })) };
    const next: State = {
      ...base,
      holds: [held],
      tenants: base.tenants.map((x) => (x.tenant === 'tenant-a' ? { ...x, spent_units: 90, available_units: 20 } : x)),
    };
    const tags = events(prev, next, defaultPrefs).map((e) => e.tag);
    expect(tags).toContain('hold:r-new');
    expect(tags.some((x) => x.startsWith('evict:'))).toBe(base.quota.some((q) => q.evicted));
    expect(tags).toContain('budget:tenant-a');
    setLang('zh-CN');
    expect(events(prev, next, defaultPrefs).find((e) => e.tag === 'hold:r-new')?.title).toBe('local 有一笔 102 单位的占用');
  });
  it('nothing when the gateway notifies its alerts itself', () => {
    const prev: State = { ...base, holds: [] };
    const next: State = { ...base, holds: [held], alerts: { thresholds: [80], notifies: true } };
    expect(events(prev, next, defaultPrefs)).toEqual([]);
    expect(events(prev, { ...next, alerts: { thresholds: [80], notifies: false } }, defaultPrefs).map((e) => e.tag)).toContain('hold:r-new');
  });
  it('each kind has its off switch', () => {
    const prev: State = { ...base, holds: [] };
    const next: State = { ...base, holds: [held] };
    expect(events(prev, next, { ...defaultPrefs, holds: false })).toEqual([]);
  });
});

describe('delivery', () => {
  const evs: NotifyEvent[] = [
    { tag: 'hold:r1', title: 'A hold of 102 units for local', body: 'cut by the upstream' },
    { tag: 'evict:ark/m', title: 'ark/m is evicted', body: 'usage wall' },
  ];
  const web = (perm: NotificationPermission, answer: NotificationPermission = perm) => {
    const shown: string[] = [];
    let p = perm;
    let asked = 0;
    const w: WebNotifications = {
      permission: () => p,
      requestPermission: async () => {
        asked++;
        p = answer;
        return p;
      },
      show: (e) => void shown.push(e.tag),
    };
    return { w, shown, asked: () => asked };
  };

  it('the window: every event through its Notify binding, the Notification API untouched', async () => {
    const sent: string[][] = [];
    const app = { Notify: async (title: string, body: string, tag: string) => void sent.push([title, body, tag]) };
    const b = web('granted');
    expect(await deliver(evs, { app, web: b.w })).toEqual({ via: 'window' });
    expect(sent).toEqual([
      ['A hold of 102 units for local', 'cut by the upstream', 'hold:r1'],
      ['ark/m is evicted', 'usage wall', 'evict:ark/m'],
    ]);
    expect(b.shown).toEqual([]);
  });

  it('a window whose binding refuses (no notification server) falls back to the webview, keeping the reason', async () => {
    const app = { Notify: async () => Promise.reject(new Error('no notification server is running on the session bus')) };
    const b = web('granted');
    expect(await deliver(evs, { app, web: b.w })).toEqual({ via: 'web' });
    expect(b.shown).toEqual(['hold:r1', 'evict:ark/m']);
    const denied = web('default', 'denied');
    expect(await deliver(evs, { app, web: denied.w })).toEqual({ via: 'none', why: 'denied', error: 'no notification server is running on the session bus' });
    expect(denied.asked()).toBe(1);
  });

  it.each([
    ['a browser that grants on asking', 'default', 'granted', { via: 'web' }, 2],
    ['a browser already denied: not asked again', 'denied', 'denied', { via: 'none', why: 'denied' }, 0],
  ] as const)('%s', async (_name, perm, answer, want, shown) => {
    const b = web(perm, answer);
    expect(await deliver(evs, { app: null, web: b.w })).toEqual(want);
    expect(b.shown.length).toBe(shown);
    expect(b.asked()).toBe(perm === 'default' ? 1 : 0);
  });

  it('no API at all says so; nothing to deliver asks nothing', async () => {
    expect(await deliver(evs, { app: null, web: null })).toEqual({ via: 'none', why: 'unavailable' });
    const b = web('default', 'granted');
    await deliver([], { app: null, web: b.w });
    expect(b.asked()).toBe(0);
  });

  it('notifyApp finds the binding only in a window that has it', () => {
    const host = (app?: object): Host => ({
      go: app ? { app: { App: app as never } } : undefined,
      location: { origin: 'http://x', hash: '', pathname: '/', search: '' },
      history: { replaceState() {} },
    });
    const conn = async () => ({ url: '', token: '' });
    expect(notifyApp(host())).toBeNull();
    expect(notifyApp(host({ Connection: conn }))).toBeNull();
    expect(notifyApp(host({ Connection: conn, Notify: async () => {} }))).not.toBeNull();
  });
});
