// The quota chart's data, kept pure: usage over the day as a line, usage +
// held-in-flight as the band's top, balance snapshots as points, and the
// guard's thresholds as labelled horizontal lines.
import type { QuotaState, Snapshot } from './types';
import { synced } from './quota';
import { parseTime } from './format';

export interface Threshold {
  key: 'cap' | 'limit' | 'wall' | 'buffer' | 'limitV6';
  value: number;
}

export interface ChartData {
  xs: number[]; // unix seconds
  usage: (number | null)[];
  top: (number | null)[]; // usage + held in flight (only at now)
  snaps: (number | null)[]; // usage_at_sync at each snapshot's time
  lags: (number | null)[];
  thresholds: Threshold[];
}

/** dayStart is local midnight of the day containing now, in unix seconds. */
function dayStart(now: Date): number {
  const d = new Date(now);
  d.setHours(0, 0, 0, 0);
  return Math.floor(d.getTime() / 1000);
}

export function chartData(q: QuotaState, snapshots: Snapshot[], now: Date): ChartData {
  const pts = snapshots
    .map((s) => ({ at: parseTime(s.synced_at), s }))
    .filter((p): p is { at: Date; s: Snapshot } => p.at !== null)
    .sort((a, b) => a.at.getTime() - b.at.getTime());
  const start = Math.min(dayStart(now), ...pts.map((p) => Math.floor(p.at.getTime() / 1000)));
  const end = Math.floor(now.getTime() / 1000);
  const d: ChartData = { xs: [start], usage: [0], top: [null], snaps: [null], lags: [null], thresholds: [] };
  for (const p of pts) {
    const x = Math.floor(p.at.getTime() / 1000);
    if (x <= d.xs[d.xs.length - 1] || x >= end) continue;
    d.xs.push(x);
    d.usage.push(p.s.usage_at_sync);
    d.top.push(null);
    d.snaps.push(p.s.usage_at_sync);
    d.lags.push(p.s.lag_seconds);
  }
  d.xs.push(end);
  d.usage.push(q.usage_today);
  d.top.push(q.usage_today + q.held_in_flight);
  d.snaps.push(null);
  d.lags.push(null);
  if (q.daily_cap) d.thresholds.push({ key: 'cap', value: q.daily_cap });
  if (synced(q)) {
    d.thresholds.push({ key: 'limit', value: q.limit });
    if (q.limit_v6 !== q.limit) d.thresholds.push({ key: 'limitV6', value: q.limit_v6 });
    if (q.small_buffer && q.b0_estimate) d.thresholds.push({ key: 'buffer', value: q.b0_estimate - q.small_buffer });
  }
  if (q.usage_wall) d.thresholds.push({ key: 'wall', value: q.usage_wall });
  return d;
}
