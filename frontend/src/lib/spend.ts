// Spend per day, kept pure for the Overview's chart, in integer micros per
// day and per tenant or per model: from the ledger's rollup
// (GET /admin/api/spend, every run of the period, days of the gateway's
// zone), or, from a gateway without one, from the runs the state carries
// (the most recent ones only, so the days those runs span).

import { parseTime } from './format';
import { toBig } from './money';
import type { Run } from './types';
import type { SpendPage } from './api';

export interface SpendSeries {
  name: string;
  micros: bigint[]; // one per day of SpendData.days
  total: bigint;
}

export interface SpendData {
  days: string[]; // local YYYY-MM-DD, oldest first, every day between the first and last run
  starts: number[]; // each day's local midnight, unix seconds
  series: SpendSeries[]; // largest total first
}

function localDay(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

function midnight(d: Date): Date {
  const m = new Date(d);
  m.setHours(0, 0, 0, 0);
  return m;
}

/** series orders each name's cells (day → micros) along days, largest total first. */
function series(cells: Map<string, Map<string, bigint>>, days: string[]): SpendSeries[] {
  const out = [...cells.entries()].map(([name, row]) => {
    const micros = days.map((d) => row.get(d) ?? 0n);
    return { name, micros, total: micros.reduce((a, b) => a + b, 0n) };
  });
  out.sort((a, b) => (a.total === b.total ? a.name.localeCompare(b.name) : a.total > b.total ? -1 : 1));
  return out;
}

/** spendFromRollup sums the rollup's rows per day and per tenant ('tenant') or per upstream/model ('model'), over every day asked for (none when nothing was spent). */
export function spendFromRollup(page: SpendPage, by: 'tenant' | 'model'): SpendData {
  const cells = new Map<string, Map<string, bigint>>(); // name → day → micros
  const spent = new Set<string>();
  for (const r of page.rows) {
    const cost = toBig(r.cost_micros);
    if (cost === null || cost === 0n) continue;
    spent.add(r.day);
    const name = by === 'tenant' ? r.tenant : `${r.upstream}/${r.model}`;
    const row = cells.get(name) ?? new Map<string, bigint>();
    row.set(r.day, (row.get(r.day) ?? 0n) + cost);
    cells.set(name, row);
  }
  const days = spent.size === 0 ? [] : [...page.days];
  const starts = days.map((d) => {
    const [y, m, day] = d.split('-').map(Number);
    return Math.floor(new Date(y, m - 1, day).getTime() / 1000);
  });
  return { days, starts, series: series(cells, days) };
}

/** spendByDay sums the runs' cost per local day of admission and per tenant ('tenant') or per upstream/model ('model'). */
export function spendByDay(runs: readonly Run[], by: 'tenant' | 'model'): SpendData {
  const cells = new Map<string, Map<string, bigint>>(); // name → day → micros
  let first: Date | null = null;
  let last: Date | null = null;
  for (const r of runs) {
    const cost = toBig(r.cost_micros);
    const at = parseTime(r.created_at);
    if (cost === null || cost === 0n || !at) continue;
    const day = midnight(at);
    if (!first || day < first) first = day;
    if (!last || day > last) last = day;
    const name = by === 'tenant' ? r.tenant : `${r.upstream}/${r.model}`;
    const row = cells.get(name) ?? new Map<string, bigint>();
    row.set(localDay(day), (row.get(localDay(day)) ?? 0n) + cost);
    cells.set(name, row);
  }
  const days: string[] = [];
  const starts: number[] = [];
  for (let d = first; d && last && d <= last; d = new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1)) {
    days.push(localDay(d));
    starts.push(Math.floor(d.getTime() / 1000));
  }
  return { days, starts, series: series(cells, days) };
}
