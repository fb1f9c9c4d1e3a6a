// What a route's targets say to a person (the server's admin.RouteState).
// Pure, so the table and its tests share it.
import type { KeyState, Run } from './types';
import { t } from './i18n';

/** restingKeys counts the pool keys resting at now (the gateway's clock; RFC 3339). */
export function restingKeys(keys: KeyState[] | undefined, now: string | undefined): number {
  const at = now ? Date.parse(now) : Date.now();
  return (keys ?? []).filter((k) => k.resting_until && Date.parse(k.resting_until) > at).length;
}

/** attemptsText: "attempt 2" for a run its call failed over to, "" for a first attempt. */
export function attemptsText(r: Run): string {
  return r.attempts && r.attempts > 1 ? t('runs.attempts', { n: r.attempts }) : '';
}

/** attemptsTitle says which run the call failed over from. */
export function attemptsTitle(r: Run): string {
  return r.attempts && r.attempts > 1 ? t('runs.failedOver', { n: r.attempts, run: r.failover_of ?? '' }) : '';
}
