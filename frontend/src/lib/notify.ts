// Desktop notifications: a hold appears, a guarded model is evicted, a
// tenant passes a share of its budget. Which events fire is pure (events);
// delivery uses the Notification API, which the browser and the window's
// webview both provide; each kind has an off switch, kept in localStorage.
import type { State } from './types';
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

/** events lists what became true between prev and next (nothing on the first state). */
export function events(prev: State | null, next: State, p: NotifyPrefs): NotifyEvent[] {
  if (!prev) return [];
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

/** deliver shows the events, asking for permission once; silent where notifications are unavailable. */
export async function deliver(evs: NotifyEvent[]) {
  if (evs.length === 0 || typeof Notification === 'undefined') return;
  try {
    if (Notification.permission === 'default') await Notification.requestPermission();
    if (Notification.permission !== 'granted') return;
    for (const e of evs) new Notification(e.title, { body: e.body, tag: e.tag });
  } catch {
    // a webview without notifications: the dashboard itself still shows everything
  }
}
