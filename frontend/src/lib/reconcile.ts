// The reconcile dialog's arithmetic and validation, kept pure for tests.
// Reconciling a held run at N units moves its whole reserve out of held and
// N into spent, so the tenant's available grows by reserve − N.

import { wholeUnits } from './parse';
import { t } from './i18n';
import { units } from './format';
import type { Run } from './types';
import { decimalOf, microsOf, money, toBig } from './money';

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

/** MoneyPreview is a reconcile in money: the run's reserve, and with a typed cost what is charged and released. */
export interface MoneyPreview {
  reserve: string; // the reserve in money, formatted
  charge: string | null; // the typed cost, formatted; null when none was typed
  release: string | null; // reserve − cost, formatted
}

/** moneyPreview is null when the run has no reserve in money (an unpriced model) or the gateway no currency. */
export function moneyPreview(run: Pick<Run, 'reserve_micros'>, costText: string, currency: string | null): MoneyPreview | null {
  const reserve = toBig(run.reserve_micros);
  if (reserve === null || !currency) return null;
  const cost = costText.trim() === '' ? null : microsOf(costText);
  const ok = cost !== null && cost <= reserve;
  return {
    reserve: money(reserve, currency),
    charge: ok ? money(cost, currency) : null,
    release: ok ? money(reserve - cost, currency) : null,
  };
}

export type CheckedCost = { cost?: string } | { field: 'cost'; error: string };

/**
 * checkCost validates the optional cost (the provider's bill): blank, or a
 * decimal with at most 6 places not above the run's reserve in money. The
 * server takes it as the exact decimal string.
 */
export function checkCost(costText: string, reserveMicros: number | undefined, currency: string | null): CheckedCost {
  if (costText.trim() === '') return {};
  const reserve = toBig(reserveMicros);
  const cost = microsOf(costText);
  if (cost === null || reserve === null || cost > reserve) {
    return { field: 'cost', error: t('rec.errCost', { max: reserve === null ? '—' : money(reserve, currency) || decimalOf(reserve) }) };
  }
  return { cost: decimalOf(cost) };
}
