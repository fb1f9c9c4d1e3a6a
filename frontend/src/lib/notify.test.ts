import { afterEach, describe, expect, it } from 'vitest';
import { defaultPrefs, events } from './notify';
import { setLang } from './i18n';
import type { State } from './types';
import fixture from '../fixtures/state.json';

const base = fixture as unknown as State;
afterEach(() => setLang('en'));

describe('notification events', () => {
  const held = { ...base.runs[0], id: 'r-new', status: 'interrupted' as const, usage: 'unknown' as const, held_units: 102, reserve_units: 102 };
  it('nothing on the first state', () => {
    expect(events(null, base, defaultPrefs)).toEqual([]);
  });
  it('a new hold, a new eviction, a tenant passing 80 %', () => {
    const prev: State = { ...base, holds: [], quota: base.quota.map((q) => ({ ...q, evicted: false })) };
    const next: State = {
      ...base,
      holds: [held],
      tenants: base.tenants.map((x) => (x.tenant === 'tenant-a' ? { ...x, spent_units: 90, available_units: 20 } : x)),
    };
    const tags = events(prev, next, defaultPrefs).map((e) => e.tag);
    expect(tags).toContain('hold:r-new');
    expect(tags.some((x) => x.startsWith('evict:'))).toBe(base.quota.some((q) => q.evicted));
    expect(tags).toContain('budget:tenant-a');
    setLang('zh-CN');
    expect(events(prev, next, defaultPrefs).find((e) => e.tag === 'hold:r-new')?.title).toBe('local 有一笔 102 单位的占用');
  });
  it('each kind has its off switch', () => {
    const prev: State = { ...base, holds: [] };
    const next: State = { ...base, holds: [held] };
    expect(events(prev, next, { ...defaultPrefs, holds: false })).toEqual([]);
  });
});
