import { describe, expect, it } from 'vitest';
import { spendByDay } from './spend';
import type { Run } from './types';

function run(id: string, tenant: string, model: string, created: Date, cost?: number): Run {
  return {
    id, tenant, upstream: 'up', model, status: 'completed', usage: 'trusted',
    reserve_units: 10, spent_units: 5, held_units: 0,
    created_at: created.toISOString(), updated_at: created.toISOString(),
    ...(cost === undefined ? {} : { cost_micros: cost, cost: String(cost / 1e6) }),
  };
}

describe('spendByDay', () => {
  const d1 = new Date(2026, 11, 1, 10);
  const d3 = new Date(2026, 11, 3, 23);
  const runs = [
    run('a', 'alice', 'm1', d1, 1_500_000),
    run('b', 'alice', 'm2', d1, 250_000),
    run('c', 'bob', 'm1', d3, 3_000_001),
    run('d', 'bob', 'm1', d3), // unpriced: no money
    run('e', 'bob', 'm1', d3, 0),
  ];

  it('sums micros per tenant and local day, every day between first and last', () => {
    const s = spendByDay(runs, 'tenant');
    expect(s.days).toEqual(['2026-12-01', '2026-12-02', '2026-12-03']);
    expect(s.series).toEqual([
      { name: 'bob', micros: [0n, 0n, 3_000_001n], total: 3_000_001n },
      { name: 'alice', micros: [1_750_000n, 0n, 0n], total: 1_750_000n },
    ]);
  });

  it('sums per upstream/model', () => {
    const s = spendByDay(runs, 'model');
    expect(s.series.map((x) => [x.name, x.total])).toEqual([
      ['up/m1', 4_500_001n],
      ['up/m2', 250_000n],
    ]);
  });

  it('is empty when no run carries a cost (a gateway without prices)', () => {
    expect(spendByDay([run('d', 'bob', 'm1', d3)], 'tenant')).toEqual({ days: [], starts: [], series: [] });
  });
});
