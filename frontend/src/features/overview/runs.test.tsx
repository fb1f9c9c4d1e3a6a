// Door/protocol on Runs and Holds, cached tokens on Runs, and the retry
// group of one user call in Holds (what the ledger records about how a run was called).
import { describe, expect, it } from 'vitest';
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { Holds } from './Holds';
import { Runs } from './Runs';
import { setLang } from '../../lib/i18n';
import type { Run, State } from '../../lib/types';
import fixture from '../../fixtures/state.json';
import { heldRun } from '../../fixtures/run';
import { InStore, testStore } from '../../fixtures/store';
import { page } from '../../fixtures/page';

const state = fixture as unknown as State;
const { root } = page();
const q = (id: string) => root().querySelector(`[data-testid="${id}"]`);
const held = (id: string, sec: string, over: Partial<Run> = {}): Run =>
  heldRun(id, sec, { evidence: 'stream cut before [DONE]', door: 'chat', upstream_protocol: 'chat', ...over });

describe('Runs', () => {
  it('shows door and protocol, and cached tokens where usage is shown', () => {
    const runs: Run[] = [
      held('run_native', '01', { status: 'completed', usage: 'trusted', held_units: 0, spent_units: 1500, door: 'messages', upstream_protocol: 'messages', cached_tokens: 1024 }),
      held('run_transl', '02', { status: 'completed', usage: 'trusted', held_units: 0, spent_units: 15, door: 'responses', upstream_protocol: 'chat', cached_tokens: 0 }),
    ];
    act(() => render(<InStore store={testStore({ ...state, runs })}><Runs /></InStore>, root()));
    expect(q('door-run_native')!.textContent).toBe('messages');
    expect(q('door-run_transl')!.textContent).toBe('responses → chat');
    expect(q('door-run_transl')!.getAttribute('title')).toContain('translated to chat');
    expect(q('cached-run_native')!.textContent).toBe('1,024');
    expect(q('cached-run_transl')!.textContent).toBe('—');
    expect(root().textContent).toContain('cached tokens');
  });
});

describe('Holds retry groups', () => {
  const r1 = held('run_01FIRST000', '01');
  const r2 = held('run_01SECOND00', '02', { retry_of: r1.id, retry_count: 1 });
  const other = held('run_01OTHER000', '03', { door: 'messages', upstream_protocol: 'chat' });
  const show = (holds: Run[]) =>
    act(() => render(<InStore store={testStore({ ...state, holds, runs: [] })}><Holds /></InStore>, root()));

  it('the attempts of one call sit together under a header, first attempt first; a lone call has none', () => {
    show([other, r2, r1]);
    const rows = [...root().querySelectorAll('tbody tr')].map((tr) => tr.getAttribute('data-testid'));
    expect(rows).toEqual(['hold-row-run_01OTHER000', `hold-group-${r1.id}`, `hold-row-${r1.id}`, `hold-row-${r2.id}`]);
    expect(q(`hold-group-${r1.id}`)!.textContent).toBe('One call, 2 attempts held (first: run …RST000); 204 units reserved in all');
    expect(q(`hold-retry-${r1.id}`)!.textContent).toBe('first attempt');
    expect(q(`hold-retry-${r2.id}`)!.textContent).toBe('retry #1 of run …RST000');
    expect(q('hold-retry-run_01OTHER000')!.textContent).toBe('—');
    expect(q('door-run_01OTHER000')!.textContent).toBe('messages → chat');
  });

  it("the group's box selects every attempt, for one bulk reconcile", () => {
    show([r2, r1]);
    const box = q(`hold-pick-group-${r1.id}`) as HTMLInputElement;
    act(() => void box.dispatchEvent(new Event('change', { bubbles: true })));
    expect((q(`hold-pick-${r1.id}`) as HTMLInputElement).checked).toBe(true);
    expect((q(`hold-pick-${r2.id}`) as HTMLInputElement).checked).toBe(true);
    expect(q('reconcile-bulk')!.textContent).toBe('Reconcile 2 selected…');
  });

  it('in Chinese', () => {
    setLang('zh-CN');
    show([r2, r1]);
    expect(q(`hold-group-${r1.id}`)!.textContent).toBe('同一次调用的 2 次尝试均有占用（首次：调用 …RST000）；共预留 204 单位');
    expect(q(`hold-retry-${r2.id}`)!.textContent).toBe('第 1 次重试，原调用 …RST000');
  });
});

describe('run ids', () => {
  it('ten consecutive runs read as ten different labels; the whole id is the tooltip', () => {
    // As the gateway makes them: 12 hex digits of milliseconds, then 12 random ones.
    const ms = (1_795_000_000_000).toString(16).padStart(12, '0');
    const tails = ['3f09a1c0bddf', '77e2c4c0bddf', '0a1b2c3d4e5f', 'ffee01020304', '9a8b7c6d5e4f', '112233445566', 'abcdefabcdef', '0f0f0f0f0f0f', 'deadbeef0001', 'deadbeef0002'];
    const runs = tails.map((x, i) => held(`run_${ms}${x}`, String(10 + i).padStart(2, '0'), { status: 'completed', usage: 'trusted', held_units: 0 }));
    act(() => render(<InStore store={testStore({ ...state, runs })}><Runs /></InStore>, root()));
    const cells = runs.map((r) => q(`run-id-${r.id}`)!);
    const labels = cells.map((c) => c.textContent!);
    expect(new Set(labels).size).toBe(10);
    expect(labels.every((l) => l.startsWith('…') && l.length <= 14)).toBe(true);
    expect(cells.map((c) => c.getAttribute('title'))).toEqual(runs.map((r) => r.id));
    expect(labels.slice(0, 2)).toEqual(['…1c0bddf', '…4c0bddf']); // their last six characters alike, each reads one more
  });
});
