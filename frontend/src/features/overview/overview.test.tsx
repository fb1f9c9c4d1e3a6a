// The Overview's rate-limit use comes from the gateway's limiter (the
// state's tenants[].rate), not from counting the listed runs.
import { describe, expect, it } from 'vitest';
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { Overview } from './Overview';
import { setLang } from '../../lib/i18n';
import type { State, TenantState } from '../../lib/types';
import fixture from '../../fixtures/state.json';
import { InStore, testStore } from '../../fixtures/store';
import { page } from '../../fixtures/page';

const state = fixture as unknown as State;
const { root } = page();
const q = (id: string) => root().querySelector(`[data-testid="${id}"]`);

describe('rate-limit use', () => {
  const show = (tenants: TenantState[]) => act(() => render(<InStore store={testStore({ ...state, tenants, runs: [] })}><Overview /></InStore>, root()));

  it('shows both windows and the refusals as the limiter counts them, a full window marked', () => {
    show(state.tenants); // no runs listed: the figures cannot come from the runs
    expect(q('tenant-tenant-a-rate-minute')!.textContent).toBe('10 / 10 calls in the last minute');
    expect(q('tenant-tenant-a-rate-minute')!.classList.contains('rate-full')).toBe(true);
    expect(q('tenant-tenant-a-rate-hour')!.textContent).toBe('22 / 120 in the last hour');
    expect(q('tenant-tenant-a-rate-hour')!.classList.contains('rate-full')).toBe(false);
    expect(q('tenant-tenant-a-rate-refused')!.textContent).toBe('1 refused (429)');
    expect(q('tenant-row-local')!.textContent).toContain('no rate limit');
  });

  it('limits without a count (another gateway, an older one) read unknown, not 0; Chinese', () => {
    setLang('zh-CN');
    show([{ ...state.tenants[1], rate: undefined, per_hour: 0 }]);
    expect(q('tenant-tenant-a-rate-minute')!.textContent).toBe('最近一分钟 未知 / 10 次调用');
    expect(q('tenant-tenant-a-rate-hour')).toBeNull();
    expect(q('tenant-tenant-a-rate-refused')).toBeNull();
  });

  it('a deleted tenant is marked as history', () => {
    show([{ ...state.tenants[0], removed: true }]);
    expect(q('tenant-local-removed')!.textContent).toBe('deleted: history only');
  });
});

describe('queued count', () => {
  it('comes from the gateway (tenants[].queued), not the listed runs: right with 1,000 queued and 50 listed', () => {
    const listed = Array.from({ length: 50 }, (_, i) => ({ ...state.runs[0], id: `r${i}`, tenant: 'local', status: 'queued' as const }));
    const tenants = [{ ...state.tenants[0], queued: 700 }, { ...state.tenants[1], queued: 300 }];
    act(() => render(<InStore store={testStore({ ...state, tenants, runs: listed })}><Overview /></InStore>, root()));
    expect(q('tenant-local-queued')!.textContent).toMatch(/ 700$/);
    expect(q('tenant-tenant-a-queued')!.textContent).toMatch(/ 300$/);
    expect(q('total-queued')!.textContent).toMatch(/ 1,000$/);
  });
});
