// The provider's figure on a held run (state.evidence) with Apply, and the
// banner that says the ledger is unreachable (state.degraded).
import { afterEach, describe, expect, it } from 'vitest';
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { Holds } from './Holds';
import { LedgerBanner } from '../header/LedgerBanner';
import { setLang } from '../../lib/i18n';
import { errorFromBody } from '../../lib/api';
import { applyDelta } from '../../lib/delta';
import type { Finding, State } from '../../lib/types';
import fixture from '../../fixtures/state.json';
import { InStore, testStore } from '../../fixtures/store';
import { page } from '../../fixtures/page';

const state = fixture as unknown as State;
const { root } = page();
const q = (id: string) => root().querySelector(`[data-testid="${id}"]`);
const HELD = 'run_01JQ7UNKNOWN000000000000';
const found: Finding = {
  run: HELD,
  upstream: 'demo',
  provider_id: 'gen-1',
  state: 'found',
  input_tokens: 1234,
  output_tokens: 567,
  cost: '0.0042',
  looked_up_at: '2026-11-29T10:42:00Z',
  attempts: 1,
  answer: '{"data":{"native_tokens_prompt":1234}}',
};

afterEach(() => setLang('en'));

describe('the provider figure on a hold', () => {
  const show = (f: Finding, api = {}) => {
    const store = testStore({ ...state, evidence: { [HELD]: f } }, api);
    act(() => render(<InStore store={store}><Holds /></InStore>, root()));
    return store;
  };

  it('says the figure with the money and the time, and Apply posts from_provider once', async () => {
    const applied: string[] = [];
    show(found, { applyFinding: async (id: string) => void applied.push(id) });
    expect(q(`finding-text-${HELD}`)!.textContent).toBe('the provider reports 1,234 input + 567 output tokens, $0.0042, looked up at 10:42:00 UTC');
    await act(async () => (q(`finding-apply-${HELD}`) as HTMLButtonElement).click());
    expect(applied).toEqual([HELD]);
    expect(q(`applied-${HELD}`)!.textContent).toContain(`Run ${HELD} reconciled at 1,801 units.`);
  });

  it('shows the refusal of an Apply in the error style', async () => {
    const refusal = errorFromBody(409, '', JSON.stringify({ error: { message: `run ${HELD} holds nothing to reconcile`, type: 'conflict', code: 'not_held' } }));
    show(found, {
      applyFinding: async () => {
        throw refusal;
      },
    });
    await act(async () => (q(`finding-apply-${HELD}`) as HTMLButtonElement).click());
    const n = q(`apply-error-${HELD}`)!;
    expect(q(`applied-${HELD}`)).toBeNull();
    expect(n.classList.contains('error')).toBe(true);
    expect(n.getAttribute('role')).toBe('alert');
  });

  it.each([
    [{ state: 'refused', note: 'output 3 is below the 40 tokens relayed' }, "the provider's answer was refused as evidence: output 3 is below the 40 tokens relayed"],
    [{ state: 'gave_up', note: 'no answer in 1h0m0s' }, 'the provider never answered within the lookup window: no answer in 1h0m0s; the hold stays until reconciled by hand'],
    [{ state: 'looking', attempts: 2 }, 'asking the provider for its figure (2 attempt(s) so far)'],
  ] as [Partial<Finding>, string][])('a %o finding is said plainly, with no Apply', (over, text) => {
    show({ ...found, ...over });
    expect(q(`finding-text-${HELD}`)!.textContent).toBe(text);
    expect(q(`finding-apply-${HELD}`)).toBeNull();
  });

  it('a cost with more places than money has is shown as the provider wrote it; Chinese', () => {
    setLang('zh-CN');
    show({ ...found, cost: '0.00000042' });
    expect(q(`finding-text-${HELD}`)!.textContent).toBe('服务商报告 1,234 输入 + 567 输出 token，0.00000042 USD，查询于 UTC 10:42:00');
    expect(q(`finding-apply-${HELD}`)!.textContent).toBe('采用');
  });

  it('a hold without a finding has neither', () => {
    act(() => render(<InStore store={testStore(state)}><Holds /></InStore>, root()));
    expect(q(`finding-${HELD}`)).toBeNull();
  });
});

describe('ledger unreachable banner', () => {
  const why = 'ledger unreachable: dial tcp 127.0.0.1:5432: connection refused';
  const show = (s: State) => act(() => render(<InStore store={testStore(s)}><LedgerBanner /></InStore>, root()));

  it('stands while the state is degraded and goes when a delta clears it', () => {
    const down = applyDelta(state, { uptime_seconds: 1, degraded: why });
    show(down);
    expect(q('ledger-unreachable')!.textContent).toBe(
      `The ledger is unreachable (${why}): new calls are refused with 503 until it is back; the figures below are the last ones read.`,
    );
    expect(applyDelta(down, { uptime_seconds: 2 }).degraded).toBe(why);
    show(applyDelta(down, { uptime_seconds: 3, degraded: '' }));
    expect(q('ledger-unreachable')).toBeNull();
  });

  it('reads in Chinese', () => {
    setLang('zh-CN');
    show({ ...state, degraded: why });
    expect(q('ledger-unreachable')!.textContent).toContain('账本无法访问');
  });
});
