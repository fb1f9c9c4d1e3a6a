import { afterEach, describe, expect, it } from 'vitest';
import { check, errorField, maxUnits, preview } from './reconcile';
import { reasonKind, reasonSentence, isHeld } from './reason';
import { setLang } from './i18n';

afterEach(() => setLang('en'));

describe('reconcile preview', () => {
  it.each([
    // reserve, units, available → spend, release, available after (seed 000: 102 held, 15 spent)
    [102, 15, 4140, 15, 87, 4227],
    [102, 0, 4140, 0, 102, 4242],
    [102, 102, 4140, 102, 0, 4140],
    [1002, 6, 998998, 6, 996, 999994],
  ])('reserve %i at %i units, available %i', (reserve, n, avail, spend, release, after) => {
    expect(preview([{ reserve_units: reserve }], n, avail)).toEqual({ spend, release, available: after });
  });
  it('bulk: each run at the same units', () => {
    expect(preview([{ reserve_units: 102 }, { reserve_units: 200 }], 10, null)).toEqual({ spend: 20, release: 282, available: null });
    expect(maxUnits([{ reserve_units: 102 }, { reserve_units: 200 }])).toBe(102);
  });
});

describe('reconcile form check', () => {
  it('units 0..reserve and evidence are required', () => {
    expect(check('15', ' bill ', 102)).toEqual({ units: 15, evidence: 'bill' });
    expect(check('1,002', 'bill', 1002)).toEqual({ units: 1002, evidence: 'bill' });
    expect(check('103', 'bill', 102)).toEqual({ field: 'units', error: 'Units must be a whole number from 0 to 102.' });
    expect(check('-1', 'bill', 102)).toMatchObject({ field: 'units' });
    expect(check('1.5', 'bill', 102)).toMatchObject({ field: 'units' });
    expect(check('', 'bill', 102)).toMatchObject({ field: 'units' });
    expect(check('5', '  ', 102)).toMatchObject({ field: 'evidence' });
    setLang('zh-CN');
    expect(check('5000', 'x', 4096)).toEqual({ field: 'units', error: '单位必须是 0 到 4,096 之间的整数。' });
  });
  it('a server error goes beside the field it names', () => {
    expect(errorField('reconciling a hold needs evidence (a bill, a console figure)')).toBe('evidence');
    expect(errorField('units 5000 exceed the reserve 102')).toBe('units');
  });
});

describe('why held', () => {
  it.each([
    [{ status: 'interrupted', evidence: 'stream cut before [DONE]' }, 'cut'],
    [{ status: 'cancelled', evidence: 'client went away' }, 'cancelled'],
    [{ status: 'interrupted', evidence: 'recovery: active at restart' }, 'restart'],
    [{ status: 'completed', evidence: 'no usage in the stream' }, 'missing'],
    [{ status: 'completed', evidence: 'usage contradicts the relayed text' }, 'contradicted'],
  ] as const)('%o → %s', (r, want) => {
    expect(reasonKind(r)).toBe(want);
  });
  it('a sentence, with the units when the evidence names them', () => {
    expect(reasonSentence({ status: 'interrupted', evidence: 'upstream cut after 1,234 units' })).toBe(
      'The upstream cut the stream after 1,234 units, before its usage and [DONE].',
    );
    setLang('zh-CN');
    expect(reasonSentence({ status: 'cancelled' })).toBe('在服务商处理期间被调用方、操作员或客户端取消。');
  });
  it('only ended runs with a held reserve are holds', () => {
    expect(isHeld({ status: 'active', usage: 'pending', held_units: 10 })).toBe(false);
    expect(isHeld({ status: 'queued', usage: 'pending', held_units: 10 })).toBe(false);
    expect(isHeld({ status: 'interrupted', usage: 'unknown', held_units: 10 })).toBe(true);
    expect(isHeld({ status: 'completed', usage: 'trusted', held_units: 0 })).toBe(false);
  });
});
