// Periods, alerts and the test clock on the page: a tenant's current period
// and its countdown by the gateway's (shifted) clock, the last periods'
// spend, the header's clock badge, the failing webhook and the alerts'
// settings — and nothing of them when the state does not carry them.
import { describe, expect, it } from 'vitest';
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { setLang } from '../../lib/i18n';
import type { State, TenantState } from '../../lib/types';
import fixture from '../../fixtures/state.json';
import { InStore, NOW, testStore } from '../../fixtures/store';
import { page } from '../../fixtures/page';
import { PeriodFacts } from './PeriodFacts';
import { PeriodHistory } from './PeriodHistory';
import { Header } from '../header/Header';
import { WebhookBanner } from './WebhookBanner';
import { AlertSettings } from './AlertSettings';
import { Ago, Since, Uptime } from '../../ui/Ago';

const base = fixture as unknown as State;
const { root } = page();
const q = (id: string) => root().querySelector(`[data-testid="${id}"]`);
const text = (id: string) => q(id)?.textContent?.replace(/[\u00a0\u202f]/g, ' ').trim();

// NOW is 2026-11-29 11:02 UTC; the gateway's clock runs 72h ahead, to
// 2026-12-02 11:02 UTC, in December for a tenant in Pago Pago (UTC-11).
const team: TenantState = {
  ...base.tenants[0],
  tenant: 'team',
  period: '2026-12',
  period_start: '2026-12-01T00:00:00-11:00',
  period_end: '2027-01-01T00:00:00-11:00',
};

function state(over: Partial<State> = {}): State {
  return {
    ...base,
    tenants: [team],
    clock: { offset: '72h0m0s', now: '2026-12-02T11:02:00Z' },
    periods: {
      team: [
        { period: '2026-12', period_start: '2026-12-01T00:00:00-11:00', spent_units: 100, spent_micros: 1_000_000 },
        { period: '2026-11', period_start: '2026-11-01T00:00:00-11:00', spent_units: 900, spent_micros: 4_250_000 },
      ],
    },
    ...over,
  };
}

function show(s: State, el: preact.ComponentChildren) {
  act(() => render(<InStore store={testStore(s)}>{el}</InStore>, root()));
}

describe('a tenant’s period', () => {
  it('names the period and counts down by the gateway’s clock, not the page’s', () => {
    show(state(), <PeriodFacts x={team} />);
    expect(text('tenant-team-period')).toBe('December 2026');
    expect(q('tenant-team-period')?.getAttribute('data-period')).toBe('2026-12');
    // 2027-01-01 11:00 UTC less 2026-12-02 11:02 UTC
    expect(text('tenant-team-time-left')).toBe('29d 23h left');
  });
  it('by the page’s clock when the gateway’s is not shifted', () => {
    show(state({ clock: { offset: '0s', now: '' } }), <PeriodFacts x={team} />);
    expect(text('tenant-team-time-left')).toBe('32d 23h left');
  });
  it('in Chinese', () => {
    setLang('zh-CN');
    show(state(), <PeriodFacts x={team} />);
    expect(text('tenant-team-period')).toBe('2026年12月');
    expect(text('tenant-team-time-left')).toBe('剩余 29天23小时');
  });
  it('nothing for a budget that never renews', () => {
    show(state(), <PeriodFacts x={base.tenants[0]} />);
    expect(root().textContent).toBe('');
  });
});

describe('the last periods’ spend', () => {
  it('lists each period’s spend in money, oldest first, the current one marked', () => {
    show(state(), <PeriodHistory tenant="team" current="2026-12" currency="USD" />);
    const items = [...root().querySelectorAll('[data-testid^="history-team-"]')].map((e) => e.textContent?.replace(/[\u00a0\u202f]/g, ' '));
    expect(items).toEqual(['Nov $4.25', 'Dec $1.00 (current)']);
    expect(q('history-team-2026-12')?.classList.contains('current')).toBe(true);
  });
  it('in units without a currency; nothing without periods', () => {
    show(state(), <PeriodHistory tenant="team" current="2026-12" currency={null} />);
    expect(text('history-team-2026-11')).toBe('Nov 900');
    show(state({ periods: undefined }), <PeriodHistory tenant="team" current="2026-12" currency="USD" />);
    expect(q('history-team')).toBeNull();
  });
});

describe('the clock badge', () => {
  it('shows a shifted clock and its now', () => {
    show(state(), <Header tab="overview" onTab={() => {}} />);
    expect(text('clock-offset')).toBe('+72h');
    expect(q('clock-offset')?.getAttribute('title')).toContain('+72h');
    expect(q('clock-offset')?.getAttribute('title')).toContain('2026');
  });
  it('nothing on a real clock or an older gateway', () => {
    show(state({ clock: { offset: '0s', now: new Date(NOW).toISOString() } }), <Header tab="overview" onTab={() => {}} />);
    expect(q('clock-offset')).toBeNull();
    show(state({ clock: undefined }), <Header tab="overview" onTab={() => {}} />);
    expect(q('clock-offset')).toBeNull();
  });
});

describe('times of a shifted gateway', () => {
  it('ages and elapsed times count from the gateway’s now; the uptime from the page’s', () => {
    // a run of the gateway made 5 s before its (shifted) now
    show(state(), <><span data-testid="since"><Since at="2026-12-02T11:01:55Z" /></span><span data-testid="ago"><Ago at="2026-12-02T11:01:00Z" /></span><span data-testid="up"><Uptime seconds={7} receivedAt={NOW} /></span></>);
    expect(text('since')).toBe('5s');
    expect(text('ago')).toBe('1m 00s ago');
    expect(text('up')).toBe('7s');
  });
});

describe('alerts', () => {
  const webhook = { url: 'https://hooks.example/q', secret_set: true, pending: 3, failing: true, last_error: 'HTTP 500', last_attempt_at: '2026-12-02T11:01:00Z' };
  it('a failing webhook is a banner with its error and what waits', () => {
    show(state({ alerts: { thresholds: [50, 80, 95], webhook } }), <WebhookBanner />);
    expect(text('webhook-failing')).toBe('The alerts webhook is failing: HTTP 500. 3 alert(s) waiting to be sent; calls are admitted as usual. (last try 1m 00s ago)');
    show(state({ alerts: { thresholds: [50, 80, 95], webhook: { ...webhook, failing: false } } }), <WebhookBanner />);
    expect(q('webhook-failing')).toBeNull();
  });
  it('settings show the thresholds and the webhook, never a secret', () => {
    show(state({ alerts: { thresholds: [50, 80, 95], webhook } }), <AlertSettings />);
    expect(text('alerts-thresholds')).toBe('50%, 80%, 95%');
    expect(text('alerts-webhook')).toBe('https://hooks.example/q · signed (a secret is set) · failing: HTTP 500; 3 waiting');
    show(state({ alerts: { thresholds: [80] } }), <AlertSettings />);
    expect(text('alerts-webhook')).toBe('none: alerts go to the audit log and desktop notifications');
    show(state(), <AlertSettings />);
    expect(q('alerts-none')).not.toBeNull();
  });
});
