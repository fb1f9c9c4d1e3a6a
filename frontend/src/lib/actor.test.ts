// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { actorKind, actorKinds } from './actor';

const actorGo = fileURLToPath(new URL('../../../backend/ledger/actor.go', import.meta.url));

describe('actor kinds', () => {
  it('are the ledger’s ActorKind constants, in order', () => {
    const kinds = [...readFileSync(actorGo, 'utf8').matchAll(/^\s*Actor\w+\s+ActorKind\s*=\s*"([a-z]+)"/gm)].map((m) => m[1]);
    expect(kinds.length).toBeGreaterThan(0);
    expect([...actorKinds]).toEqual(kinds);
  });
});

describe('actorKind', () => {
  it.each([
    ['tenant:local', 'tenant'],
    ['operator:admin', 'operator'],
    ['system:quota', 'system'],
    ['system:quota-topup', 'system'],
    ['provider:openrouter', 'provider'],
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
