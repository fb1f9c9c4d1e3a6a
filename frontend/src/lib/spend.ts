// Spend per day, kept pure for the Overview's chart: the cost of the runs
// the state carries, summed in integer micros per local day and per tenant
// or per model. The state lists the most recent runs only (the server's
// runs limit), so the chart covers the days those runs span, not all time.

import { parseTime } from './format';
import { toBig } from './money';
import type { Run } from './types';

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
  const series = [...cells.entries()].map(([name, row]) => {
    const micros = days.map((d) => row.get(d) ?? 0n);
    return { name, micros, total: micros.reduce((a, b) => a + b, 0n) };
  });
  series.sort((a, b) => (a.total === b.total ? a.name.localeCompare(b.name) : a.total > b.total ? -1 : 1));
  return { days, starts, series };
}
