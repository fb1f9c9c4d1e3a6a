import { afterEach, describe, expect, it } from 'vitest';
import { doorText, doorTitle, retryGroups, retryText } from './runfacts';
import { setLang } from './i18n';
import type { Run } from './types';
import { heldRun } from '../fixtures/run';

afterEach(() => setLang('en'));

const run = heldRun;

describe('door and protocol', () => {
  it.each([
    ['native', { door: 'messages', upstream_protocol: 'messages' }, 'messages', 'came in by the messages door and was relayed natively'],
    ['translated', { door: 'responses', upstream_protocol: 'chat' }, 'responses → chat', 'came in by the responses door and was translated to chat for the upstream'],
    ['from before doors were kept', { door: '', upstream_protocol: '' }, '—', 'door not recorded (a run from before doors were kept)'],
    ['an older server without the fields', {}, '—', 'door not recorded (a run from before doors were kept)'],
  ])('%s', (_name, over, text, title) => {
    const r = run('r', '00', over as Partial<Run>);
    expect(doorText(r)).toBe(text);
    expect(doorTitle(r)).toBe(title);
  });
});

describe('retry groups', () => {
  // One user call: r1 cut, the SDK retried as r2 (X-Stainless-Retry-Count 1), then r3 (2).
  const r1 = run('run_01AAAAAAAA', '01', { retry_count: 0 });
  const r2 = run('run_01BBBBBBBB', '02', { retry_of: r1.id, retry_count: 1 });
  const r3 = run('run_01CCCCCCCC', '03', { retry_of: r2.id, retry_count: 2 });
  const solo = run('run_01SOLO0000', '04');

  it('a chain is followed to its first attempt; members oldest first; groups where first seen', () => {
    const gs = retryGroups([solo, r3, r1, r2]); // newest first, as the server sends holds
    expect(gs.map((g) => [g.root, g.runs.map((r) => r.id)])).toEqual([
      [solo.id, [solo.id]],
      [r1.id, [r1.id, r2.id, r3.id]],
    ]);
    const g = gs[1];
    expect([r1, r2, r3].map((r) => retryText(r, g))).toEqual(['first attempt', 'retry #1 of run …AAAAAA', 'retry #2 of run …BBBBBB']);
    expect(retryText(solo, gs[0])).toBe('');
  });

  it('a settled attempt not held any more still links the chain through the recent runs', () => {
    const settled = { ...r2, status: 'completed' as const, usage: 'trusted' as const, held_units: 0 };
    const gs = retryGroups([r3, r1], [settled]);
    expect(gs.length).toBe(1);
    expect(gs[0].root).toBe(r1.id);
  });

  it('an attempt whose first is gone from every list groups under that id; a key-only retry has no count', () => {
    const keyed = run('run_01KEYED000', '05', { retry_of: 'run_01GONE0000', idempotency_key: 'k-1' });
    const [g] = retryGroups([keyed]);
    expect(g.root).toBe('run_01GONE0000');
    setLang('zh-CN');
    expect(retryText(keyed, g)).toBe('重试调用 …NE0000');
  });

  it('a cycle (a damaged chain) ends instead of looping', () => {
    const a = run('a', '01', { retry_of: 'b' });
    const b = run('b', '02', { retry_of: 'a' });
    expect(retryGroups([a, b]).flatMap((g) => g.runs).length).toBe(2);
  });
});
