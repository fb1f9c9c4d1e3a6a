// Desktop notifications: a hold appears, a guarded model is evicted, a
// tenant passes a share of its budget. Which events fire is pure (events);
// each kind has an off switch, kept in localStorage. Delivery: in the window
// through its Notify binding (Go: app/notify.go, D-Bus on Linux — Wails has
// no notification API and WebKitGTK denies the page's permission), falling
// back to the Notification API, which a browser on `quotagate serve` uses.
import type { State } from './types';
import { wailsApp, type Host } from './desktop';
import { t } from './i18n';
import { percent, units } from './format';
import { isHeld, reasonSentence } from './reason';

export interface NotifyPrefs {
  holds: boolean;
  evictions: boolean;
  budget: boolean;
  share: number; // 0..1, default 0.8
}

export const defaultPrefs: NotifyPrefs = { holds: true, evictions: true, budget: true, share: 0.8 };
const prefsKey = 'quotagate.notify';

export function loadPrefs(): NotifyPrefs {
  try {
    const v = JSON.parse(localStorage.getItem(prefsKey) ?? 'null') as Partial<NotifyPrefs> | null;
    return { ...defaultPrefs, ...(v ?? {}) };
  } catch {
    return defaultPrefs;
  }
}

export function savePrefs(p: NotifyPrefs) {
  try {
    localStorage.setItem(prefsKey, JSON.stringify(p));
  } catch {
    // storage disabled
  }
}

export interface NotifyEvent {
  tag: string; // one notification per tag
  title: string;
  body: string;
}

const used = (x: { spent_units: number; held_units: number; budget_units: number }) =>
  x.budget_units > 0 ? (x.spent_units + x.held_units) / x.budget_units : 0;

/**
 * events lists what became true between prev and next (nothing on the first
 * state). A gateway whose alerts notify the desktop themselves says holds,
 * evictions and budget thresholds already: the page then says none of them
 * again.
 */
export function events(prev: State | null, next: State, p: NotifyPrefs): NotifyEvent[] {
  if (!prev || next.alerts?.notifies) return [];
  const out: NotifyEvent[] = [];
  if (p.holds) {
    const had = new Set(prev.holds.filter(isHeld).map((r) => r.id));
    for (const r of next.holds.filter(isHeld)) {
      if (!had.has(r.id)) out.push({ tag: `hold:${r.id}`, title: t('notify.hold', { tenant: r.tenant, reserve: units(r.reserve_units) }), body: reasonSentence(r) });
    }
  }
  if (p.evictions) {
    const was = new Set(prev.quota.filter((q) => q.evicted).map((q) => `${q.upstream}/${q.model}`));
    for (const q of next.quota) {
      const k = `${q.upstream}/${q.model}`;
      if (q.evicted && !was.has(k)) out.push({ tag: `evict:${k}`, title: t('notify.evicted', { model: k }), body: q.evicted_reason });
    }
  }
  if (p.budget) {
    const before = new Map(prev.tenants.map((x) => [x.tenant, used(x)]));
    for (const x of next.tenants) {
      const u = used(x);
      if (u >= p.share && (before.get(x.tenant) ?? 0) < p.share) {
        out.push({ tag: `budget:${x.tenant}`, title: t('notify.budget', { tenant: x.tenant, share: percent(p.share) }), body: t('notify.budgetBody', { used: percent(u), available: units(x.available_units) }) });
      }
    }
  }
  return out;
}

/** NotifyApp is the part of the bound App that shows a notification. */
export interface NotifyApp {
  Notify(title: string, body: string, tag: string): Promise<void>;
}

/** notifyApp returns the window's Notify binding, or null (a browser, or an older window). */
export function notifyApp(host?: Host): NotifyApp | null {
  const app = wailsApp(host) as (Partial<NotifyApp> & object) | null;
  return app && typeof app.Notify === 'function' ? (app as NotifyApp) : null;
}

/** WebNotifications is the part of the Notification API used here. */
export interface WebNotifications {
  permission(): NotificationPermission;
  requestPermission(): Promise<NotificationPermission>;
  show(e: NotifyEvent): void;
}

export function webNotifications(): WebNotifications | null {
  if (typeof Notification === 'undefined') return null;
  return {
    permission: () => Notification.permission,
    requestPermission: () => Notification.requestPermission(),
    show: (e) => void new Notification(e.title, { body: e.body, tag: e.tag }),
  };
}

/** How the events were shown: by the window's system service, by the browser/webview, or not at all (with why). */
export type Delivery = { via: 'window' | 'web' } | { via: 'none'; why: 'unavailable' | 'denied' | 'failed'; error?: string };

/**
 * deliver shows the events: through the window's binding when there is one,
 * else (or when it refuses: no notification server) through the Notification
 * API, asking for permission once. The dashboard itself shows everything
 * either way.
 */
export async function deliver(
  evs: NotifyEvent[],
  deps: { app: NotifyApp | null; web: WebNotifications | null } = { app: notifyApp(), web: webNotifications() },
): Promise<Delivery> {
  if (evs.length === 0) return { via: 'window' };
  let error: string | undefined;
  if (deps.app) {
    try {
      for (const e of evs) await deps.app.Notify(e.title, e.body, e.tag);
      return { via: 'window' };
    } catch (x) {
      error = String((x as Error)?.message ?? x);
    }
  }
  const web = deps.web;
  if (!web) return { via: 'none', why: error ? 'failed' : 'unavailable', error };
  try {
    if (web.permission() === 'default') await web.requestPermission();
    if (web.permission() !== 'granted') return { via: 'none', why: 'denied', error };
    for (const e of evs) web.show(e);
    return { via: 'web' };
  } catch (x) {
    return { via: 'none', why: 'failed', error: error ?? String((x as Error)?.message ?? x) };
  }
}

/** testEvent is the Settings tab's "send a test notification". */
export function testEvent(): NotifyEvent {
  return { tag: 'test', title: t('notify.testTitle'), body: t('notify.testBody') };
}
