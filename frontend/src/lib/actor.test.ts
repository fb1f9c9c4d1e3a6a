import { describe, expect, it } from 'vitest';
import { actorKind } from './actor';

describe('actorKind', () => {
  it.each([
    ['tenant:local', 'tenant'],
    ['operator:admin', 'operator'],
    ['system:quota', 'system'],
    ['system:quota-topup', 'system'],
    ['quota', null], // a row from before actors were typed
    ['volcengine', null],
    ['tenant:', null],
    [':x', null],
    ['robot:x', null],
    ['', null],
    [undefined, null],
  ])('%s → %s', (a, want) => {
    expect(actorKind(a)).toBe(want);
  });
});
