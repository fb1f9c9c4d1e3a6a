// Every number, duration and time on the dashboard is formatted here, in the
// current language (i18n.lang()), so units look the same in every panel.

import { lang, t } from './i18n';

const dash = '—';

const numberFormats = new Map<string, Intl.NumberFormat>();
function nf(): Intl.NumberFormat {
  const l = lang();
  let f = numberFormats.get(l);
  if (!f) {
    f = new Intl.NumberFormat(l, { maximumFractionDigits: 0 });
    numberFormats.set(l, f);
  }
  return f;
}

/** units formats an integer count with the language's separators: 1234567 → "1,234,567". */
export function units(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return dash;
  return nf().format(Math.trunc(n) || 0); // trunc: a stray fraction is cut, never rounded up
}

/** known is units() for a value that may not have been read yet: "unknown", never 0. */
export function known(n: number | null | undefined, isKnown: boolean): string {
  return isKnown ? units(n) : t('fmt.unknown');
}

/** count is units() for plain counts (requests, waiters); kept separate for intent. */
export const count = units;

/** duration formats whole seconds as the two largest parts: "45s", "3m 05s", "2h 03m", "4d 02h" (zh: "3分05秒"). */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return dash;
  const s = Math.floor(seconds);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const p = (x: number) => x.toString().padStart(2, '0');
  const sep = t('fmt.sep');
  const two = (a: string, b: string) => `${a}${sep}${b}`;
  if (d > 0) return two(t('fmt.d', { n: d }), t('fmt.h', { n: p(h) }));
  if (h > 0) return two(t('fmt.h', { n: h }), t('fmt.m', { n: p(m) }));
  if (m > 0) return two(t('fmt.m', { n: m }), t('fmt.s', { n: p(sec) }));
  return t('fmt.s', { n: sec });
}

/** millis formats a short wait: "0 ms", "850 ms", "1.2 s", "12 s". */
export function millis(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return dash;
  if (Math.round(ms) < 1000) return `${Math.round(ms)} ms`;
  // Integer tenths avoid toFixed's binary rounding (1.45.toFixed(1) is "1.4").
  const tenths = Math.round(ms / 100);
  if (tenths < 100) return `${Math.floor(tenths / 10)}.${tenths % 10} s`;
  return `${Math.round(ms / 1000)} s`;
}

export function parseTime(iso: string | null | undefined): Date | null {
  if (!iso) return null;
  const d = new Date(iso);
  // Go's zero time.Time marshals as 0001-01-01T00:00:00Z: treat as "never".
  if (Number.isNaN(d.getTime()) || d.getUTCFullYear() <= 1) return null;
  return d;
}

const dateFormats = new Map<string, Intl.DateTimeFormat>();
function df(kind: 'time' | 'day' | 'full'): Intl.DateTimeFormat {
  const k = `${lang()}|${kind}`;
  let f = dateFormats.get(k);
  if (!f) {
    const o: Intl.DateTimeFormatOptions =
      kind === 'time'
        ? { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short' }
        : kind === 'day'
          ? { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZoneName: 'short' }
          : { dateStyle: 'medium', timeStyle: 'long', hourCycle: 'h23' };
    f = new Intl.DateTimeFormat(lang(), o);
    dateFormats.set(k, f);
  }
  return f;
}

/**
 * time formats an RFC 3339 instant in local time with its zone: "14:03:09 UTC"
 * when it falls on the same local day as now, else "Nov 28, 2026, 14:03 UTC"
 * (zh-CN: "UTC 14:03:09", "2026年11月28日 UTC 14:03").
 */
export function time(iso: string | null | undefined, now: Date = new Date()): string {
  const d = parseTime(iso);
  if (!d) return dash;
  const sameDay =
    d.getFullYear() === now.getFullYear() && d.getMonth() === now.getMonth() && d.getDate() === now.getDate();
  return df(sameDay ? 'time' : 'day').format(d);
}

/** fullTime is the long local form for tooltips: date, time and zone. */
export function fullTime(iso: string | null | undefined): string {
  const d = parseTime(iso);
  return d ? df('full').format(d) : dash;
}

/** ago formats how long before now an instant was: "12s ago", "3分05秒前"; future instants read "just now". */
export function ago(iso: string | null | undefined, now: Date = new Date()): string {
  const d = parseTime(iso);
  if (!d) return t('fmt.never');
  const s = Math.floor((now.getTime() - d.getTime()) / 1000);
  if (s <= 0) return t('fmt.justNow');
  return t('fmt.ago', { d: duration(s) });
}

/** elapsed is the whole seconds from iso to now (0 when in the future or unreadable). */
export function elapsed(iso: string | null | undefined, now: Date): number {
  const d = parseTime(iso);
  return d ? Math.max(0, Math.floor((now.getTime() - d.getTime()) / 1000)) : 0;
}

/** fraction returns part/whole clamped to [0, 1]; 0 when whole is not positive. */
export function fraction(part: number, whole: number): number {
  if (!Number.isFinite(part) || !Number.isFinite(whole) || whole <= 0) return 0;
  return Math.min(1, Math.max(0, part / whole));
}

/**
 * percent formats a fraction: whole percent from 10 % to 90 %, one decimal
 * nearer the ends (so a 0.4 % hold reads "0.4%", not "0%"). A share that is
 * not zero never reads "0%" and one that is not whole never reads "100%":
 * those read "<0.1%" and ">99.9%".
 */
export function percent(f: number): string {
  if (!Number.isFinite(f)) return dash;
  const digits = Math.abs(f) < 0.1 || (f > 0.9 && f < 1) ? 1 : 0;
  const s = pct(f, digits);
  if (f > 0 && (f < 0.001 || s === pct(0, digits))) return `<${pct(0.001, 1)}`;
  if (f < 1 && f > 0.9 && s === pct(1, digits)) return `>${pct(0.999, 1)}`;
  return s;
}

function pct(f: number, digits: number): string {
  return new Intl.NumberFormat(lang(), { style: 'percent', maximumFractionDigits: digits }).format(f);
}

/** The characters of a run id's tail shown in tables: ids are time-ordered, so their heads are alike. */
const TAIL = 6;

/** runLabel is a run id as tables show it: its distinct tail, "…c0bddf"; short ids whole. */
export function runLabel(id: string, tail = TAIL): string {
  return id.length > tail + 4 ? `…${id.slice(-tail)}` : id;
}

/**
 * runLabels labels the ids shown together: each the shortest tail, from
 * TAIL characters up, that no other id shown shares, so two rows never read
 * alike even when random tails collide.
 */
export function runLabels(ids: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const unique = [...new Set(ids)];
  for (const id of unique) {
    let n = TAIL;
    while (n < id.length && unique.some((o) => o !== id && o.endsWith(id.slice(-n)))) n++;
    out.set(id, runLabel(id, n));
  }
  return out;
}
