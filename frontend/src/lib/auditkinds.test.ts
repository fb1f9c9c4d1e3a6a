// @vitest-environment node
// The audit filter's kinds are the ledger's (backend/ledger: AuditKind).
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { auditKinds } from './auditkinds';

const ledger = fileURLToPath(new URL('../../../backend/ledger/', import.meta.url));

describe('audit kinds', () => {
  it('are the ledger’s AuditKind constants, in order', () => {
    const kinds: string[] = [];
    for (const f of readdirSync(ledger).filter((f) => f.endsWith('.go') && !f.endsWith('_test.go')).sort()) {
      for (const m of readFileSync(ledger + f, 'utf8').matchAll(/^\s*(?:const\s+)?Audit\w+\s+AuditKind\s*=\s*"([a-z_]+)"/gm)) kinds.push(m[1]);
    }
    expect(kinds.length).toBeGreaterThan(0);
    expect([...auditKinds]).toEqual(kinds);
  });
});
