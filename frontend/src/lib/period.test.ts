import { afterEach, describe, expect, it } from 'vitest';
import { clockOffsetMs, goDurationMs, history, offsetText, periodKind, periodName, periodShort, runPeriodNote, secondsLeft, timeLeft } from './period';
import { setLang } from './i18n';

afterEach(() => setLang('en'));

describe('period labels', () => {
  it.each([
    ['2026-12', 'month', 'December 2026', '2026年12月', 'Dec'],
    ['2026-W49', 'week', 'week 49 of 2026', '2026年第49周', 'W49'],
    ['2026-W01', 'week', 'week 1 of 2026', '2026年第1周', 'W01'],
    ['2026-12-01', 'day', 'Tue, Dec 1, 2026', '2026年12月1日周二', '12/1'],
  ])('%s is a %s: %s / %s', (label, kind, en, zh, short) => {
    expect(periodKind(label)).toBe(kind);
    expect(periodName(label, 'en')).toBe(en);
    expect(periodShort(label, 'en')).toBe(short);
    setLang('zh-CN');
    expect(periodName(label, 'zh-CN')).toBe(zh);
  });
  it('a label of a shape it does not know is shown as it came; none is empty', () => {
    expect(periodKind('Q4')).toBeNull();
    expect(periodName('Q4')).toBe('Q4');
    expect(periodName(undefined)).toBe('');
    expect(periodKind('')).toBeNull();
  });
  it('the month is the label’s, whatever the page’s zone (a label is a date, not an instant)', () => {
    expect(periodName('2027-01', 'en')).toBe('January 2027');
    expect(periodShort('2026-11-30', 'en')).toBe('11/30');
  });
});

describe('the gateway clock', () => {
  it.each([
    ['72h0m0s', 72 * 3600_000],
    ['0s', 0],
    ['0', 0],
    ['-1h30m0s', -90 * 60_000],
    ['1.5h', 90 * 60_000],
    ['2m3.5s', 123_500],
    ['250ms', 250],
    ['', null],
    ['72 hours', null],
    ['h', null],
  ])('Go duration %j → %s ms', (text, ms) => {
    expect(goDurationMs(text)).toBe(ms);
  });
  it('an absent or unreadable offset is real time', () => {
    expect(clockOffsetMs(undefined)).toBe(0);
    expect(clockOffsetMs({ offset: 'soon', now: '' })).toBe(0);
    expect(clockOffsetMs({ offset: '72h0m0s', now: '' })).toBe(259_200_000);
  });
  it.each([
    [72 * 3600_000, '+72h'],
    [-90 * 60_000, '-1h30m'],
    [45_000, '+45s'],
    [3600_000 + 5_000, '+1h5s'],
    [250, '+250ms'],
  ])('offset %s ms reads %s', (ms, text) => {
    expect(offsetText(ms)).toBe(text);
  });
});

describe('time left', () => {
  const now = Date.parse('2026-12-30T10:00:00Z');
  it('counts whole seconds to the end, never below zero', () => {
    expect(secondsLeft('2026-12-31T10:00:30Z', now)).toBe(86_430);
    expect(secondsLeft('2026-12-30T09:00:00Z', now)).toBe(0);
    expect(secondsLeft(undefined, now)).toBeNull();
  });
  it('says it in the page language, by the two largest parts', () => {
    // the end in the tenant's zone: Kiritimati is UTC+14
    expect(timeLeft('2027-01-01T00:00:00+14:00', now)).toBe('1d 00h left');
    expect(timeLeft('2026-12-31T10:00:00+14:00', now)).toBe('10h 00m left');
    expect(timeLeft('2027-01-03T13:30:00Z', now)).toBe('4d 03h left');
    expect(timeLeft('2026-12-30T10:00:00Z', now)).toBe('renewing now');
    expect(timeLeft(null, now)).toBe('');
    setLang('zh-CN');
    expect(timeLeft('2027-01-03T13:30:00Z', now)).toBe('剩余 4天03小时');
  });
});

describe('history', () => {
  const rows = [
    { period: '2026-12', period_start: '2026-12-01T00:00:00-10:00', spent_units: 10, spent_micros: 1_500_000 },
    { period: '2026-10', period_start: '2026-10-01T00:00:00-10:00', spent_units: 30, spent_micros: 3_000_001 },
    { period: '2026-11', period_start: '2026-11-01T00:00:00-10:00', spent_units: 20 },
  ];
  it('orders the newest-first periods oldest first, in integer micros', () => {
    expect(history(rows)).toEqual({
      periods: ['2026-10', '2026-11', '2026-12'],
      starts: [Date.parse('2026-10-01T10:00:00Z') / 1000, Date.parse('2026-11-01T10:00:00Z') / 1000, Date.parse('2026-12-01T10:00:00Z') / 1000],
      units: [30, 20, 10],
      micros: [3_000_001n, 0n, 1_500_000n],
    });
  });
  it('keeps the last max periods, units only when none carries money, nothing for none', () => {
    const h = history(rows.map(({ spent_micros: _m, ...r }) => r), 2);
    expect(h.periods).toEqual(['2026-11', '2026-12']);
    expect(h.micros).toBeNull();
    expect(history(undefined)).toEqual({ periods: [], starts: [], units: [], micros: null });
  });
  it('leaves out a period without a readable start and counts a repeated one once', () => {
    const h = history([...rows, { period: '2026-09', period_start: 'soon', spent_units: 1 }, { ...rows[0], spent_units: 11 }]);
    expect(h.periods).toEqual(['2026-10', '2026-11', '2026-12']);
    expect(h.units).toEqual([30, 20, 11]);
  });
});

describe('a held run’s period', () => {
  it('names a closed period and says so', () => {
    expect(runPeriodNote('2026-11', '2026-12')).toBe(
      'This hold belongs to 2026-11 (November 2026), already closed: the reconcile lands in that period, not in the current 2026-12.',
    );
    expect(runPeriodNote('2026-12', '2026-12')).toBe('This hold belongs to the current period, 2026-12 (December 2026); the reconcile lands there.');
    expect(runPeriodNote('', '2026-12')).toBeNull();
    expect(runPeriodNote(undefined, undefined)).toBeNull();
    setLang('zh-CN');
    expect(runPeriodNote('2026-11', '2026-12')).toContain('已结束');
  });
});
