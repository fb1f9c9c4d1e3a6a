// Every number, duration and time on the dashboard is formatted here, so
// units look the same in every panel.

const dash = '—';

/** units formats an integer count with thousands separators: 1234567 → "1,234,567". */
export function units(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return dash;
  const neg = n < 0;
  const digits = Math.trunc(Math.abs(n)).toString();
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return neg ? `-${grouped}` : grouped;
}

/** count is units() for plain counts (requests, waiters); kept separate for intent. */
export const count = units;

/** duration formats whole seconds as the two largest parts: "45s", "3m 05s", "2h 03m", "4d 02h". */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return dash;
  const s = Math.floor(seconds);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const p = (x: number) => x.toString().padStart(2, '0');
  if (d > 0) return `${d}d ${p(h)}h`;
  if (h > 0) return `${h}h ${p(m)}m`;
  if (m > 0) return `${m}m ${p(sec)}s`;
  return `${sec}s`;
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

function parse(iso: string | null | undefined): Date | null {
  if (!iso) return null;
  const d = new Date(iso);
  // Go's zero time.Time marshals as 0001-01-01T00:00:00Z: treat as "never".
  if (Number.isNaN(d.getTime()) || d.getUTCFullYear() <= 1) return null;
  return d;
}

const p2 = (x: number) => x.toString().padStart(2, '0');

/**
 * time formats an RFC 3339 instant in local time: "14:03:09" when it falls on
 * the same local day as now, else "2026-11-28 14:03".
 */
export function time(iso: string | null | undefined, now: Date = new Date()): string {
  const d = parse(iso);
  if (!d) return dash;
  const hms = `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`;
  const sameDay =
    d.getFullYear() === now.getFullYear() && d.getMonth() === now.getMonth() && d.getDate() === now.getDate();
  if (sameDay) return hms;
  return `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())} ${p2(d.getHours())}:${p2(d.getMinutes())}`;
}

/** ago formats how long before now an instant was: "12s ago", "3m 05s ago"; future instants read "just now". */
export function ago(iso: string | null | undefined, now: Date = new Date()): string {
  const d = parse(iso);
  if (!d) return 'never';
  const s = Math.floor((now.getTime() - d.getTime()) / 1000);
  if (s <= 0) return 'just now';
  return `${duration(s)} ago`;
}

/** fraction returns part/whole clamped to [0, 1]; 0 when whole is not positive. */
export function fraction(part: number, whole: number): number {
  if (!Number.isFinite(part) || !Number.isFinite(whole) || whole <= 0) return 0;
  return Math.min(1, Math.max(0, part / whole));
}

/** percent formats a fraction as a whole percentage: 0.4567 → "46%". */
export function percent(f: number): string {
  if (!Number.isFinite(f)) return dash;
  return `${Math.round(f * 100)}%`;
}

/** shortID keeps run ids readable in narrow tables: the first 8 characters. */
export function shortID(id: string): string {
  return id.length > 10 ? `${id.slice(0, 8)}…` : id;
}
