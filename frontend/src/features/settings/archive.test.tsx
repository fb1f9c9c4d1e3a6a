// The Settings tab's Archive action: a confirm, then the closed months'
// runs move into archive files, or the server's refusal is shown.
import { describe, expect, it, vi } from 'vitest';
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { ArchiveAction, firstOfMonth } from './ArchiveAction';
import type { ArchiveResult } from '../../lib/api';
import { setLang } from '../../lib/i18n';
import { InStore, testStore } from '../../fixtures/store';
import { page } from '../../fixtures/page';

const { root } = page(() => vi.unstubAllGlobals());

const flush = async () => {
  for (let i = 0; i < 5; i++) await act(async () => await Promise.resolve());
};
const q = (id: string) => root().querySelector(`[data-testid="${id}"]`) as HTMLInputElement | null;

const done: ArchiveResult = { months: [{ month: '2026-10', file: '/d/archive/quotagate-2026-10.jsonl.gz', runs: 12, rows: 24 }], dir: '/d/archive', freed_bytes: 4096 };

describe('ArchiveAction', () => {
  it('defaults to the first of the current month (UTC)', () => {
    expect(firstOfMonth(new Date(Date.UTC(2026, 11, 2, 9)))).toBe('2026-12-01');
  });

  it('asks first, then archives and says what moved', async () => {
    setLang('en');
    const calls: string[] = [];
    vi.stubGlobal('confirm', () => true);
    const archive = async (before: string) => {
      calls.push(before);
      return done;
    };
    act(() => render(<InStore store={testStore(undefined, { archive })}><ArchiveAction /></InStore>, root()));
    q('archive-before')!.value = '2026-11-01';
    q('archive-before')!.dispatchEvent(new Event('input'));
    await flush();
    act(() => q('archive-run')!.click());
    await flush();
    expect(calls).toEqual(['2026-11-01']);
    expect(q('archive-result')!.textContent).toBe('1 months, 12 runs archived to /d/archive.');
  });

  it('does nothing when the confirm is declined, and shows a refusal', async () => {
    setLang('en');
    let asked = 0;
    vi.stubGlobal('confirm', () => asked++ > 0);
    const archive = async () => {
      throw new Error('--before 2026-12-01 is in the current month');
    };
    act(() => render(<InStore store={testStore(undefined, { archive })}><ArchiveAction /></InStore>, root()));
    act(() => q('archive-run')!.click());
    await flush();
    expect(q('archive-error')).toBeNull();
    act(() => q('archive-run')!.click());
    await flush();
    expect(q('archive-error')!.textContent).toContain('in the current month');
  });
});
