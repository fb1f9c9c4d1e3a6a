import { expect, it } from 'vitest';
import { wholeUnits } from './parse';

it.each([
  ['0', 0],
  ['1002', 1002],
  ['2,242,178', 2242178],
  [' 1 200 ', 1200],
  ['', null],
  ['-5', null],
  ['1.5', null],
  ['12abc', null],
  ['99999999999999999999', null], // beyond 2^53: refused rather than rounded
])('wholeUnits(%j) = %s', (text, want) => {
  expect(wholeUnits(text)).toBe(want);
});
