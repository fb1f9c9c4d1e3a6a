// A key pool is shown by last four characters only, a resting key with when
// it is back, and a pool whose every key rests says the upstream refuses.
import { afterEach, describe, expect, it } from 'vitest';
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { KeyPool } from './KeyPool';
import { GatesTable } from './GatesTable';
import { setLang } from '../../lib/i18n';
import type { KeyState, State } from '../../lib/types';
import fixture from '../../fixtures/state.json';
import { InStore, NOW, testStore } from '../../fixtures/store';
import { page } from '../../fixtures/page';

const state = fixture as unknown as State;
const { root } = page();
const q = (id: string) => root().querySelector(`[data-testid="${id}"]`);
const at = (ms: number) => new Date(NOW + ms).toISOString();
const show = (keys: KeyState[] | undefined) =>
  act(() => render(<InStore store={testStore(state)}><KeyPool upstream="ark" keys={keys} /></InStore>, root()));

afterEach(() => setLang('en'));

describe('key pool', () => {
  it('shows each key by its last four characters, a resting one with its return', () => {
    show([{ last4: '1111', resting_until: at(10 * 60_000), why: '401' }, { last4: '2222' }, { last4: '3333', resting_until: at(-1000), why: '403' }]);
    expect(q('key-ark-1111')!.getAttribute('data-resting')).toBe('yes');
    expect(q('key-ark-1111')!.getAttribute('title')).toMatch(/^…1111 resting until .* \(the provider answered 401\)$/);
    expect(q('key-ark-2222')!.getAttribute('data-resting')).toBe('no');
    expect(q('key-ark-3333')!.getAttribute('data-resting')).toBe('no'); // its rest is over by the gateway's clock
    expect(q('keys-ark-all-resting')).toBeNull();
  });

  it('every key resting: the upstream refuses until the first is back; Chinese', () => {
    setLang('zh-CN');
    show([{ last4: 'aaaa', resting_until: at(20 * 60_000), why: 'quota_exhausted' }, { last4: 'bbbb', resting_until: at(5 * 60_000), why: '401' }]);
    expect(q('keys-ark-all-resting')!.textContent).toContain('所有密钥都在休息');
    expect(q('key-ark-aaaa')!.getAttribute('title')).toContain('额度用尽');
  });

  it('no pool, nothing shown', () => {
    show(undefined);
    expect(q('keys-ark')).toBeNull();
  });
});

describe('gates table', () => {
  const gate = state.gates[0];
  const table = (keys?: State['keys']) =>
    act(() => render(<InStore store={testStore({ ...state, keys })}><GatesTable /></InStore>, root()));

  it('adds a keys column when an upstream has a pool, and shows the pool on its row', () => {
    table({ [gate.upstream]: [{ last4: '9999', resting_until: at(60_000), why: 'quota_exhausted' }] });
    const heads = [...root().querySelectorAll('[data-testid="gates-table"] th')].map((th) => th.textContent);
    expect(heads[heads.length - 1]).toBe('keys');
    expect(q(`gate-row-${gate.upstream}`)!.textContent).toContain('…9999');
    expect(q(`keys-${gate.upstream}-all-resting`)).not.toBeNull();
  });

  it('no pool anywhere, no keys column', () => {
    table(undefined);
    const heads = [...root().querySelectorAll('[data-testid="gates-table"] th')].map((th) => th.textContent);
    expect(heads).not.toContain('keys');
  });
});
