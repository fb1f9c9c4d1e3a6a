// The quota guard's figures as the dashboard reads them (seed 002).
import type { QuotaState } from './types';
import { t } from './i18n';
import { units } from './format';

/** synced: the guard has read a balance today; before that its balance-based figures are unknown. */
export function synced(q: QuotaState): boolean {
  return !!q.synced_at && !q.synced_at.startsWith('0001-');
}

/** wall is where the model is evicted: min(limit, usage_wall) (a usage wall of 0 means none configured). */
export function wall(q: QuotaState): number | null {
  const uw = q.usage_wall && q.usage_wall > 0 ? q.usage_wall : null;
  const lim = synced(q) ? q.limit : null;
  if (uw === null) return lim;
  if (lim === null) return uw;
  return Math.min(uw, lim);
}

export type Tone = 'ok' | 'near' | 'evicted';

/** tone: evicted, amber from 80 % of the wall (usage + held in flight), else ok. */
export function tone(q: QuotaState): Tone {
  if (q.evicted) return 'evicted';
  const w = wall(q);
  if (w !== null && w > 0 && (q.usage_today + q.held_in_flight) / w >= 0.8) return 'near';
  return 'ok';
}

/** evictionWords says in a sentence why the guard evicted a model. */
export function evictionWords(q: QuotaState): string {
  const r = q.evicted_reason ?? '';
  if (r.startsWith('usage_wall')) {
    return t('quota.evictedUsage', {
      usage: units(q.usage_today),
      wall: units(wall(q)),
      limit: synced(q) ? units(q.limit) : t('fmt.unknown'),
      uwall: units(q.usage_wall),
    });
  }
  if (r.startsWith('balance_wall')) {
    return t('quota.evictedBalance', { balance: units(q.balance_at_sync), bwall: units(q.balance_wall) });
  }
  return t('quota.evictedOther', { reason: r });
}
