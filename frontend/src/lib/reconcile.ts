// The reconcile dialog's arithmetic and validation, kept pure for tests.
// Reconciling a held run at N units moves its whole reserve out of held and
// N into spent, so the tenant's available grows by reserve − N.

import { wholeUnits } from './parse';
import { t } from './i18n';
import { units } from './format';
import type { Run } from './types';

export interface Preview {
  spend: number; // units charged
  release: number; // units given back to available
  available: number | null; // the tenant's available afterwards; null when unknown
}

/** preview of reconciling runs (each at n units) for a tenant whose available is now `available`. */
export function preview(runs: readonly Pick<Run, 'reserve_units'>[], n: number, available: number | null): Preview {
  let spend = 0;
  let release = 0;
  for (const r of runs) {
    spend += n;
    release += r.reserve_units - n;
  }
  return { spend, release, available: available === null ? null : available + release };
}

/** maxUnits is the largest units every run accepts: the smallest reserve. */
export function maxUnits(runs: readonly Pick<Run, 'reserve_units'>[]): number {
  return runs.length === 0 ? 0 : Math.min(...runs.map((r) => r.reserve_units));
}

export type Checked = { units: number; evidence: string } | { field: 'units' | 'evidence'; error: string };

/** check validates the form: units 0..max, evidence not blank. */
export function check(unitsText: string, evidence: string, max: number): Checked {
  const n = wholeUnits(unitsText);
  if (n === null || n > max) return { field: 'units', error: t('rec.errUnits', { max: units(max) }) };
  if (evidence.trim() === '') return { field: 'evidence', error: t('rec.errEvidence') };
  return { units: n, evidence: evidence.trim() };
}

/**
 * errorField says which field a server error belongs to: messages about
 * evidence go beside the evidence box, everything else beside the units.
 * The server's reason decides when there is one; the English words otherwise.
 */
export function errorField(message: string, reason?: string): 'units' | 'evidence' {
  if (reason) return reason === 'evidence_required' ? 'evidence' : 'units';
  return /evidence/i.test(message) ? 'evidence' : 'units';
}
