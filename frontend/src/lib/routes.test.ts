import { describe, expect, it } from 'vitest';
import { attemptsText, restingKeys } from './routes';
import type { Run } from './types';

describe('routes', () => {
  it('counts the keys resting at the gateway clock', () => {
    const keys = [{ last4: '7f3a' }, { last4: 'c0de', resting_until: '2026-11-29T10:10:00Z' }];
    expect(restingKeys(keys, '2026-11-29T10:05:00Z')).toBe(1);
    expect(restingKeys(keys, '2026-11-29T10:10:01Z')).toBe(0);
    expect(restingKeys(undefined, undefined)).toBe(0);
  });
  it('names the attempt a call failed over to', () => {
    expect(attemptsText({ attempts: 2 } as Run)).toBe('attempt 2');
    expect(attemptsText({ attempts: 1 } as Run)).toBe('');
    expect(attemptsText({} as Run)).toBe('');
  });
});
