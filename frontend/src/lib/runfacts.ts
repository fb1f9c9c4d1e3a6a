// What a run records about how it was called (the server's ledger.Run): the
// door it came in by, the protocol it was relayed in, the cached part of its
// prompt, and the retry group one user call made when the SDK retried it. Pure, so the tables and their tests share it.
import type { Run } from './types';
import { runLabel } from './format';
import { t } from './i18n';

/** doorText: "messages" when relayed natively, "messages → chat" when translated; "—" for runs recorded before doors were kept. */
export function doorText(r: Run): string {
  if (!r.door) return '—';
  if (r.upstream_protocol && r.upstream_protocol !== r.door) return `${r.door} → ${r.upstream_protocol}`;
  return r.door;
}

/** doorTitle is the cell's tooltip, in words. */
export function doorTitle(r: Run): string {
  if (!r.door) return t('door.unrecorded');
  if (r.upstream_protocol && r.upstream_protocol !== r.door) return t('door.translated', { door: r.door, protocol: r.upstream_protocol });
  return t('door.native', { door: r.door });
}

/** A retry group: the runs one user call made, first attempt first. */
export interface RetryGroup {
  root: string; // the first attempt's run id (possibly not listed any more)
  runs: Run[]; // the listed members, oldest first
}

/**
 * retryGroups orders runs so the attempts of one user call sit together: a
 * run's retry_of names the attempt before it, so each chain is followed back
 * (through `known`, e.g. the recent runs) to its first attempt. Groups appear
 * where their first listed member was; members are oldest first.
 */
export function retryGroups(runs: Run[], known: Run[] = []): RetryGroup[] {
  const byID = new Map<string, Run>();
  for (const r of [...known, ...runs]) byID.set(r.id, r);
  const rootOf = (r: Run): string => {
    let id = r.id;
    let next = r.retry_of;
    const seen = new Set([id]);
    while (next && !seen.has(next)) {
      id = next;
      seen.add(id);
      next = byID.get(id)?.retry_of;
    }
    return id;
  };
  const groups = new Map<string, RetryGroup>();
  for (const r of runs) {
    const root = rootOf(r);
    const g = groups.get(root) ?? { root, runs: [] };
    g.runs.push(r);
    groups.set(root, g);
  }
  for (const g of groups.values()) g.runs.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  return [...groups.values()];
}

/** retryText says where a run sits in its group: "retry #2 of run …c0bddf", "first attempt", or "" for a call made once. */
export function retryText(r: Run, g: RetryGroup): string {
  if (r.retry_of) return (r.retry_count ?? 0) > 0 ? t('holds.retryOfN', { run: runLabel(r.retry_of), n: r.retry_count! }) : t('holds.retryOf', { run: runLabel(r.retry_of) });
  if (g.runs.length > 1) return t('holds.firstAttempt');
  return '';
}
