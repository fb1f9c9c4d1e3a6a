// Budget periods on the dashboard, kept pure: a period's label in the page's
// language, the time left of the current one by the gateway's clock (which a
// test or a demo may shift with QUOTAGATE_CLOCK_OFFSET), and the last
// periods' spend as a chart's series. Labels are the server's: "2026-12" a
// month, "2026-W49" an ISO week, "2026-12-01" a day.

import { duration, parseTime } from './format';
import { lang, t } from './i18n';
import { toBig } from './money';
import type { ClockState, PeriodSpend } from './types';

export type PeriodKind = 'day' | 'week' | 'month';

const monthRe = /^(\d{4})-(\d{2})$/;
const weekRe = /^(\d{4})-W(\d{2})$/;
const dayRe = /^(\d{4})-(\d{2})-(\d{2})$/;

/** periodKind reads what a label names; null for anything else (none, or a shape this page does not know). */
export function periodKind(label: string | null | undefined): PeriodKind | null {
  if (!label) return null;
  if (monthRe.test(label)) return 'month';
  if (weekRe.test(label)) return 'week';
  if (dayRe.test(label)) return 'day';
  return null;
}

const dateFormats = new Map<string, Intl.DateTimeFormat>();
function df(locale: string, o: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const k = `${locale}|${JSON.stringify(o)}`;
  let f = dateFormats.get(k);
  if (!f) {
    // The label is a date of the tenant's calendar, not an instant: format it as written (in UTC).
    f = new Intl.DateTimeFormat(locale, { ...o, timeZone: 'UTC' });
    dateFormats.set(k, f);
  }
  return f;
}

/**
 * periodName says a period label in words: "December 2026", "week 49 of
 * 2026", "Tue, Dec 1, 2026" (zh-CN: "2026年12月", "2026年第49周",
 * "2026年12月1日周二"). A label it cannot read is shown as it came.
 */
export function periodName(label: string | null | undefined, locale: string = lang()): string {
  if (!label) return '';
  let m = monthRe.exec(label);
  if (m) return df(locale, { year: 'numeric', month: 'long' }).format(Date.UTC(+m[1], +m[2] - 1, 1));
  m = weekRe.exec(label);
  if (m) return t('period.week', { year: m[1], week: String(+m[2]) });
  m = dayRe.exec(label);
  if (m) return df(locale, { year: 'numeric', month: 'short', day: 'numeric', weekday: 'short' }).format(Date.UTC(+m[1], +m[2] - 1, +m[3]));
  return label;
}

/** periodShort is a label as a chart's axis shows it: "Nov", "W48", "11/30" (zh-CN: "11月", "W48", "11/30"). */
export function periodShort(label: string, locale: string = lang()): string {
  let m = monthRe.exec(label);
  if (m) return df(locale, { month: 'short' }).format(Date.UTC(+m[1], +m[2] - 1, 1));
  m = weekRe.exec(label);
  if (m) return `W${m[2]}`;
  m = dayRe.exec(label);
  if (m) return df(locale, { month: 'numeric', day: 'numeric' }).format(Date.UTC(+m[1], +m[2] - 1, +m[3]));
  return label;
}

const durationRe = /^([+-])?((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;
const partRe = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g;
const unitMs: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** goDurationMs reads a Go duration ("72h0m0s", "-1h30m", "0s", "0") in milliseconds; null when it is not one. */
export function goDurationMs(text: string | null | undefined): number | null {
  const s = (text ?? '').trim();
  if (s === '0' || s === '+0' || s === '-0') return 0;
  if (!durationRe.test(s)) return null;
  let ms = 0;
  for (const m of s.matchAll(partRe)) ms += Number(m[1]) * unitMs[m[2]];
  return s.startsWith('-') ? -ms : ms;
}

/** clockOffsetMs is how far the gateway's clock is shifted from real time; 0 when unsaid or unreadable. */
export function clockOffsetMs(c: ClockState | null | undefined): number {
  return goDurationMs(c?.offset) ?? 0;
}

/** offsetText writes a clock offset for the header's badge: "+72h", "-1h30m", "+45s", "+250ms". */
export function offsetText(ms: number): string {
  const sign = ms < 0 ? '-' : '+';
  let rest = Math.round(Math.abs(ms));
  if (rest < 1000) return `${sign}${rest}ms`;
  const parts: string[] = [];
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n}${unit}`);
  }
  return sign + parts.join('');
}

/** secondsLeft is the whole seconds from now (ms) to the period's end; null without an end. */
export function secondsLeft(end: string | null | undefined, nowMs: number): number | null {
  const e = parseTime(end);
  if (!e) return null;
  return Math.max(0, Math.floor((e.getTime() - nowMs) / 1000));
}

/** timeLeft says how long the period has to run: "29d 03h left"; "renewing" at its end (the next state brings the new one); "" without an end. */
export function timeLeft(end: string | null | undefined, nowMs: number): string {
  const s = secondsLeft(end, nowMs);
  if (s === null) return '';
  if (s === 0) return t('period.renewing');
  return t('period.left', { d: duration(s) });
}

/** History is a tenant's spend over its last periods, oldest first, for a chart. */
export interface History {
  periods: string[];
  starts: number[]; // each period's start, unix seconds
  units: number[];
  /** the same spend in micros of the gateway's currency; null when no period carries money */
  micros: bigint[] | null;
}

/**
 * history orders a tenant's periods (the state sends them newest first) oldest
 * first and keeps the last max of them; a period with no start it can read
 * is left out, and a period listed twice is counted once (the later entry).
 */
export function history(rows: readonly PeriodSpend[] | null | undefined, max = 12): History {
  const by = new Map<string, { p: PeriodSpend; at: number }>();
  for (const p of rows ?? []) {
    const at = parseTime(p.period_start);
    if (at && p.period) by.set(p.period, { p, at: at.getTime() });
  }
  const kept = [...by.values()].sort((a, b) => a.at - b.at).slice(-max);
  const money = kept.some((x) => toBig(x.p.spent_micros) !== null);
  return {
    periods: kept.map((x) => x.p.period),
    starts: kept.map((x) => Math.floor(x.at / 1000)),
    units: kept.map((x) => x.p.spent_units ?? 0),
    micros: money ? kept.map((x) => toBig(x.p.spent_micros) ?? 0n) : null,
  };
}

/**
 * runPeriodNote says which period a held run belongs to, for the reconcile
 * dialog: its own period is where the reconcile lands, even after the
 * tenant's current period moved on. Null for a run without a period.
 */
export function runPeriodNote(runPeriod: string | null | undefined, current: string | null | undefined): string | null {
  if (!runPeriod) return null;
  if (current && runPeriod !== current) return t('period.runClosed', { period: runPeriod, name: periodName(runPeriod), current });
  return t('period.runCurrent', { period: runPeriod, name: periodName(runPeriod) });
}
