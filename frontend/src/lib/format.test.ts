import { afterEach, describe, expect, it } from 'vitest';
import { ago, duration, fraction, known, millis, percent, runLabel, runLabels, time, units } from './format';
import { setLang } from './i18n';

afterEach(() => setLang('en'));

describe('units', () => {
  it.each([
    [0, '0'],
    [7, '7'],
    [999, '999'],
    [1000, '1,000'],
    [1002, '1,002'],
    [1000000, '1,000,000'],
    [2242178, '2,242,178'],
    [-1234, '-1,234'],
    [2 ** 53 - 1, '9,007,199,254,740,991'],
    [12.9, '12'], // units are integers; a stray fraction is cut, not rounded up
    [NaN, '—'],
    [Infinity, '—'],
    [null, '—'],
    [undefined, '—'],
  ])('%s → %s', (n, want) => {
    expect(units(n as number)).toBe(want);
  });
});

describe('duration', () => {
  it.each([
    [0, '0s'],
    [12, '12s'],
    [59, '59s'],
    [60, '1m 00s'],
    [185, '3m 05s'],
    [840, '14m 00s'],
    [3725, '1h 02m'],
    [7380, '2h 03m'],
    [86400 * 4 + 7200, '4d 02h'],
    [-1, '—'],
    [NaN, '—'],
  ])('%s → %s', (s, want) => {
    expect(duration(s)).toBe(want);
  });
});

describe('millis', () => {
  it.each([
    [0, '0 ms'],
    [850, '850 ms'],
    [999.4, '999 ms'],
    [999.6, '1.0 s'],
    [1450, '1.5 s'],
    [8000, '8.0 s'],
    [12000, '12 s'],
    [-5, '—'],
  ])('%s → %s', (ms, want) => {
    expect(millis(ms)).toBe(want);
  });
});

describe('time and ago (TZ=UTC in vitest config)', () => {
  const now = new Date('2026-11-29T11:02:00Z');
  it('shows only the clock for today', () => {
    expect(time('2026-11-29T11:01:40Z', now)).toBe('11:01:40 UTC');
  });
  it('shows the date for another day', () => {
    expect(time('2026-11-28T23:59:00Z', now)).toBe('Nov 28, 2026, 23:59 UTC');
  });
  it('treats Go zero time and garbage as never', () => {
    expect(time('0001-01-01T00:00:00Z', now)).toBe('—');
    expect(time('not a time', now)).toBe('—');
    expect(time('', now)).toBe('—');
    expect(ago('0001-01-01T00:00:00Z', now)).toBe('never');
  });
  it('ago', () => {
    expect(ago('2026-11-29T11:01:48Z', now)).toBe('12s ago');
    expect(ago('2026-11-29T11:00:00Z', now)).toBe('2m 00s ago');
    expect(ago('2026-11-29T11:05:00Z', now)).toBe('just now');
  });
});

describe('fraction and percent', () => {
  it('clamps and guards a zero budget', () => {
    expect(fraction(250000, 1000000)).toBe(0.25);
    expect(fraction(5, 0)).toBe(0);
    expect(fraction(200, 100)).toBe(1);
    expect(fraction(-1, 100)).toBe(0);
    expect(percent(0.4567)).toBe('46%');
  });
  it('a small share keeps a decimal, so 0.4 % held is not "0%"', () => {
    expect(percent(4119 / 1000000)).toBe('0.4%');
    expect(percent(0.00002)).toBe('<0.1%');
    expect(percent(0)).toBe('0%');
  });
});

describe('run labels', () => {
  it('show the tail of a long id, short ids whole', () => {
    expect(runLabel('run_1')).toBe('run_1');
    expect(runLabel('run_019ad3c2e5f1a4b7c0bddf42')).toBe('…bddf42');
  });
  it('ids shown together never read alike: a shared tail grows until it differs', () => {
    const labels = runLabels(['run_019ad3c2e5f1a4b7c0bddf42', 'run_019ad3c2e5f2ffffc0bddf42', 'run_019ad3c2e5f3000000000001']);
    expect([...labels.values()]).toEqual(['…7c0bddf42', '…fc0bddf42', '…000001']);
  });
});

describe('percent at the ends', () => {
  it.each([
    [0, '0%'],
    [0.00002, '<0.1%'], // 0.02 % spent is not "0%"
    [0.0004, '<0.1%'],
    [0.001, '0.1%'],
    [0.5, '50%'],
    [0.95, '95%'],
    [0.954, '95.4%'],
    [0.9994, '99.9%'],
    [0.9998, '>99.9%'], // the rest of a 0.02 % spend is not "100%"
    [1, '100%'],
  ])('%s → %s', (f, want) => {
    expect(percent(f)).toBe(want);
  });
});

describe('zh-CN', () => {
  const now = new Date('2026-11-29T11:02:00Z');
  it('numbers keep their separators', () => {
    setLang('zh-CN');
    expect(units(1234567)).toBe('1,234,567');
    expect(percent(0.004119)).toBe('0.4%');
  });
  it('durations and ago in Chinese words', () => {
    setLang('zh-CN');
    expect(duration(185)).toBe('3分05秒');
    expect(duration(7380)).toBe('2小时03分');
    expect(duration(86400 * 4 + 7200)).toBe('4天02小时');
    expect(ago('2026-11-29T11:01:48Z', now)).toBe('12秒前');
    expect(ago('0001-01-01T00:00:00Z', now)).toBe('从未');
  });
  it('dates are year-month-day with the zone, never mm/dd/yyyy', () => {
    setLang('zh-CN');
    expect(time('2026-11-29T11:01:40Z', now)).toBe('UTC 11:01:40');
    expect(time('2026-11-28T23:59:00Z', now)).toBe('2026年11月28日 UTC 23:59');
  });
  it('unknown is said, never 0', () => {
    setLang('zh-CN');
    expect(known(0, false)).toBe('未知');
    setLang('en');
    expect(known(0, false)).toBe('unknown');
    expect(known(0, true)).toBe('0');
  });
});
