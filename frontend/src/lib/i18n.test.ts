import { afterEach, describe, expect, it } from 'vitest';
import { catalogues, langFromLocale, MISSING, pickLang, setLang, t } from './i18n';

afterEach(() => setLang('en'));

describe('catalogue', () => {
  const en = catalogues.en;
  const zh = catalogues['zh-CN'];
  it('every key is in both languages, none empty, none left in English', () => {
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort());
    for (const [k, v] of Object.entries(zh)) {
      if (k === 'fmt.sep') continue; // Chinese joins duration parts with nothing
      expect(v.trim(), k).not.toBe('');
    }
    // A zh-CN sentence identical to the English one is an untranslated key
    // (placeholders-only and product words excepted).
    const same = Object.keys(en).filter((k) => zh[k as keyof typeof zh] === en[k as keyof typeof en] && /[a-z]{3}/.test(en[k as keyof typeof en].replace(/\{\w+\}/g, '')));
    expect(same).toEqual([]);
  });
  it('the placeholders match', () => {
    const ph = (s: string) => (s.match(/\{\w+\}/g) ?? []).sort().join();
    for (const k of Object.keys(en) as (keyof typeof en)[]) expect(ph(zh[k]), k).toBe(ph(en[k]));
  });
  it('t fills placeholders and marks a missing key', () => {
    expect(t('rec.done', { run: 'r1', units: '1,002' })).toBe('Run r1 reconciled at 1,002 units.');
    setLang('zh-CN');
    expect(t('rec.done', { run: 'r1', units: '1,002' })).toBe('调用 r1 已按 1,002 个单位对账。');
    expect(t('no.such' as never)).toContain(MISSING);
  });
  it('setLang sets <html lang>', () => {
    setLang('zh-CN');
    expect(document.documentElement.lang).toBe('zh-CN');
  });
});

describe('language choice', () => {
  it.each([
    ['zh_CN.UTF-8', 'zh-CN'],
    ['zh_TW.UTF-8', 'zh-CN'],
    ['zh-Hans-CN', 'zh-CN'],
    ['en_US.UTF-8', 'en'],
    ['de_DE', 'en'],
    ['C', null],
    ['C.UTF-8', null],
    ['POSIX', null],
    ['', null],
  ])('%s → %s', (loc, want) => {
    expect(langFromLocale(loc)).toBe(want);
  });
  it('remembered choice, then system (window), then browser, then English', () => {
    expect(pickLang({ stored: 'en', system: 'zh_CN.UTF-8' })).toBe('en');
    expect(pickLang({ system: 'zh_CN.UTF-8', browser: ['en-US'] })).toBe('zh-CN');
    expect(pickLang({ system: 'C', browser: ['zh-CN'] })).toBe('en'); // LANG=C in the window means English
    expect(pickLang({ browser: ['fr-FR', 'zh-CN'] })).toBe('en');
    expect(pickLang({ browser: ['zh-CN', 'en'] })).toBe('zh-CN');
    expect(pickLang({})).toBe('en');
  });
});
