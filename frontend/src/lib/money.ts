// Money on the dashboard: amounts arrive as integer micros (10⁻⁶ of the
// gateway's currency) and are shown in the page's language with
// Intl.NumberFormat's currency style. The arithmetic stays in integers
// (BigInt): micros are rounded to the currency's minor unit by integer
// division and the digits are put into Intl's parts as text, so no amount
// ever passes through a float.

import { lang } from './i18n';
import type { Run, State, TenantState } from './types';

const MICROS = 1_000_000n;

/** Micros is an amount as the server sends it: an integer of micros (a JSON number, or a string or BigInt in tests). */
export type Micros = number | string | bigint;

/** toBig reads micros as a BigInt; null for anything that is not an integer. */
export function toBig(m: Micros | null | undefined): bigint | null {
  if (m === null || m === undefined) return null;
  if (typeof m === 'bigint') return m;
  if (typeof m === 'number') return Number.isSafeInteger(m) ? BigInt(m) : null;
  return /^-?\d+$/.test(m.trim()) ? BigInt(m.trim()) : null;
}

const formats = new Map<string, Intl.NumberFormat>();
function currencyFormat(locale: string, currency: string): Intl.NumberFormat {
  const k = `${locale}|${currency}`;
  let f = formats.get(k);
  if (!f) {
    f = new Intl.NumberFormat(locale, { style: 'currency', currency });
    formats.set(k, f);
  }
  return f;
}

/**
 * minorDigits splits |micros| into the whole part and the fraction digits
 * the currency shows, rounding half away from zero on the dropped micros.
 */
export function minorDigits(abs: bigint, digits: number): { whole: bigint; fraction: string } {
  const d = Math.max(0, Math.min(6, digits));
  const step = 10n ** BigInt(6 - d); // micros per shown minor unit
  const minor = (abs + step / 2n) / step; // rounded to the minor unit
  const scale = 10n ** BigInt(d);
  return { whole: minor / scale, fraction: d === 0 ? '' : (minor % scale).toString().padStart(d, '0') };
}

/**
 * money formats micros of currency in locale (the page's language by
 * default): 1234560000 USD in en → "$1,234.56", in zh-CN CNY → "¥1,234.56".
 * Empty when the amount or the currency is missing or not valid, so a caller
 * shows units only.
 */
export function money(micros: Micros | null | undefined, currency: string | null | undefined, locale: string = lang()): string {
  const m = toBig(micros);
  if (m === null || !currency) return '';
  let f: Intl.NumberFormat;
  try {
    f = currencyFormat(locale, currency);
  } catch {
    return ''; // not an ISO 4217 code this browser knows
  }
  const digits = f.resolvedOptions().maximumFractionDigits ?? 2;
  const neg = m < 0n;
  const { whole, fraction } = minorDigits(neg ? -m : m, digits);
  // Intl lays out the sign, symbol, grouping and separator; the digits are ours.
  const parts = f.formatToParts(neg ? -(whole === 0n ? 1n : whole) : whole);
  return parts
    .map((p) => {
      if (p.type === 'integer' && neg && whole === 0n) return '0';
      if (p.type === 'fraction') return fraction;
      return p.value;
    })
    .join('');
}

/** microsOf is a whole-currency decimal string's micros ("12.5" → 12500000n); null when not such a string or with more than 6 decimals. */
export function microsOf(text: string): bigint | null {
  const m = /^\s*(\d+)(?:\.(\d{0,6}))?\s*$/.exec(text);
  if (!m) return null;
  return BigInt(m[1]) * MICROS + BigInt((m[2] ?? '').padEnd(6, '0'));
}

/** decimalOf writes micros as the exact decimal string the API takes ("12.5"), without trailing zeros. */
export function decimalOf(micros: bigint): string {
  const neg = micros < 0n;
  const a = neg ? -micros : micros;
  const frac = (a % MICROS).toString().padStart(6, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${a / MICROS}${frac ? `.${frac}` : ''}`;
}

/**
 * currencyOf is the gateway's currency as the state shows it (one gateway,
 * one currency): the state's own, else a tenant balance's (as /v1/balance
 * carries it). Null when there is none — then the page shows units only.
 */
export function currencyOf(s: Pick<State, 'tenants' | 'currency'> | null | undefined): string | null {
  if (s?.currency) return s.currency;
  for (const x of s?.tenants ?? []) if (x.currency) return x.currency;
  return null;
}

/** hasMoneyBudget says whether a tenant's balance carries a money budget; without one it is shown in units only. */
export function hasMoneyBudget(x: TenantState): boolean {
  return x.budget_micros !== undefined && x.budget_micros !== null;
}

/** runCost is a run's cost in money, "" when the run or the gateway has none. */
export function runCost(r: Pick<Run, 'cost_micros'>, currency: string | null): string {
  return money(r.cost_micros, currency);
}
