import { describe, expect, it } from 'vitest';
import { currencyOf, decimalOf, microsOf, minorDigits, money, toBig } from './money';

// Intl may put a narrow no-break space between sign, symbol and digits.
const plain = (s: string) => s.replace(/[\u00a0\u202f]/g, ' ');

describe('money', () => {
  it.each([
    ['en-US', 'USD', 1_234_560_000, '$1,234.56'],
    ['en-US', 'USD', 0, '$0.00'],
    ['zh-CN', 'CNY', 1_234_560_000, '¥1,234.56'],
    ['zh-CN', 'CNY', 0, '¥0.00'],
    ['zh-CN', 'CNY', 7_100_000, '¥7.10'],
    // micros are rounded to the minor unit for display, half away from zero
    ['en-US', 'USD', 4_999, '$0.00'],
    ['en-US', 'USD', 5_000, '$0.01'],
    ['en-US', 'USD', 1_994_999, '$1.99'],
    ['en-US', 'USD', 1_995_000, '$2.00'],
    ['en-US', 'USD', 999_995_000, '$1,000.00'],
    ['en-US', 'USD', -5_000, '-$0.01'],
    ['en-US', 'USD', -1_234_560_000, '-$1,234.56'],
    // a currency without minor units
    ['en-US', 'JPY', 1_500_000, '¥2'],
  ] as const)('%s %s %d → %s', (locale, currency, micros, want) => {
    expect(plain(money(micros, currency, locale))).toBe(want);
  });

  it('keeps every digit of large values (no float on the way)', () => {
    // 9,007,199,254.740993 USD: beyond a float's exact integers once in micros
    expect(money(9_007_199_254_740_993n, 'USD', 'en-US')).toBe('$9,007,199,254.74');
    expect(money('123456789012345678', 'USD', 'en-US')).toBe('$123,456,789,012.35');
    expect(money(9_007_199_254_740_991, 'CNY', 'zh-CN')).toBe('¥9,007,199,254.74');
  });

  it('is empty without an amount or a currency, so units stand alone', () => {
    expect(money(undefined, 'USD', 'en-US')).toBe('');
    expect(money(null, 'USD', 'en-US')).toBe('');
    expect(money(1_000_000, undefined, 'en-US')).toBe('');
    expect(money(1_000_000, 'NOTACODE', 'en-US')).toBe('');
    expect(money(1.5, 'USD', 'en-US')).toBe('');
  });

  it('splits micros in integers', () => {
    expect(minorDigits(1_234_567n, 2)).toEqual({ whole: 1n, fraction: '23' });
    expect(minorDigits(1_234_567n, 0)).toEqual({ whole: 1n, fraction: '' });
    expect(minorDigits(1_234_567n, 6)).toEqual({ whole: 1n, fraction: '234567' });
    expect(toBig('42')).toBe(42n);
    expect(toBig('4.2')).toBeNull();
  });

  it('reads and writes the decimal strings the API takes', () => {
    expect(microsOf('12.5')).toBe(12_500_000n);
    expect(microsOf('0.000001')).toBe(1n);
    expect(microsOf('3')).toBe(3_000_000n);
    expect(microsOf('1.0000001')).toBeNull();
    expect(microsOf('-1')).toBeNull();
    expect(microsOf('abc')).toBeNull();
    expect(decimalOf(12_500_000n)).toBe('12.5');
    expect(decimalOf(3_000_000n)).toBe('3');
    expect(decimalOf(1n)).toBe('0.000001');
  });

  it('takes the currency from the tenants that carry one', () => {
    expect(currencyOf({ tenants: [] })).toBeNull();
    expect(currencyOf({ tenants: [{ tenant: 'a' } as never, { tenant: 'b', currency: 'CNY' } as never] })).toBe('CNY');
    expect(currencyOf({ currency: 'USD', tenants: [] })).toBe('USD');
  });
});
