// The store keeps what the gateway says of periods, alerts and its clock
// across the live socket's deltas, and its selectors read them.
import { describe, expect, it } from 'vitest';
import { applyDelta } from '../lib/delta';
import type { State } from '../lib/types';
import fixture from '../fixtures/state.json';
import { testStore } from '../fixtures/store';
import { alertsOf, failingWebhook, gatewayOffset, historyOf } from './gateway';

const base = fixture as unknown as State;
const withAll: State = {
  ...base,
  clock: { offset: '72h0m0s', now: '2026-12-02T11:02:00Z' },
  periods: { local: [{ period: '2026-12', period_start: '2026-12-01T00:00:00Z', spent_units: 5, spent_micros: 10 }] },
  alerts: { thresholds: [80], webhook: { url: 'http://127.0.0.1:9/h', pending: 1, failing: true, last_error: 'refused' } },
};

describe('the store’s periods, alerts and clock', () => {
  it('reads them from the state', () => {
    const st = testStore(withAll);
    expect(gatewayOffset(st.get())).toBe(72 * 3600_000);
    expect(historyOf(st.get(), 'local').periods).toEqual(['2026-12']);
    expect(historyOf(st.get(), 'nobody').periods).toEqual([]);
    expect(alertsOf(st.get())?.thresholds).toEqual([80]);
    expect(failingWebhook(st.get())?.last_error).toBe('refused');
  });
  it('keeps them across a delta that does not carry them, and takes them from one that does', () => {
    const st = testStore(withAll);
    st.applyState(applyDelta(withAll, { uptime_seconds: 9 }));
    expect(gatewayOffset(st.get())).toBe(72 * 3600_000);
    expect(failingWebhook(st.get())).not.toBeNull();
    const healed = { thresholds: [80], webhook: { url: 'http://127.0.0.1:9/h', pending: 0, failing: false } };
    st.applyState(applyDelta(st.get().state!, { uptime_seconds: 10, alerts: healed, clock: { offset: '0s', now: '' } }));
    expect(failingWebhook(st.get())).toBeNull();
    expect(gatewayOffset(st.get())).toBe(0);
  });
  it('an older gateway without them: real time, no history, no alerts', () => {
    const st = testStore(base);
    expect(gatewayOffset(st.get())).toBe(0);
    expect(historyOf(st.get(), 'local').periods).toEqual([]);
    expect(alertsOf(st.get())).toBeNull();
    expect(failingWebhook(st.get())).toBeNull();
  });
});
