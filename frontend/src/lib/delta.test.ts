import { describe, expect, it } from 'vitest';
import { applyDelta } from './delta';
import { connectLive, type SocketLike } from './live';
import type { Run, State } from './types';
import fixture from '../fixtures/state.json';

const base = fixture as unknown as State;
const run = (id: string, over: Partial<Run> = {}): Run => ({ ...base.runs[0], id, ...over });

describe('applyDelta', () => {
  it('changed rows replace, new rows join, gone rows leave, an order is followed', () => {
    const s: State = { ...base, runs: [run('b'), run('a')] };
    const next = applyDelta(s, {
      uptime_seconds: 4000,
      runs: [run('c', { status: 'queued' }), run('a', { status: 'completed' })],
      runs_gone: ['b'],
      runs_order: ['c', 'a'],
    });
    expect(next.runs.map((r) => `${r.id}:${r.status}`)).toEqual(['c:queued', 'a:completed']);
    expect(next.uptime_seconds).toBe(4000);
    expect(next.tenants).toBe(s.tenants); // untouched lists keep their identity
  });
  it('small lists are replaced whole, the header when sent', () => {
    const next = applyDelta(base, { uptime_seconds: 1, gates: [], header: { version: 'v2', data_dir: '/d', addr: 'a', meter: 'm', demo: false } });
    expect(next.gates).toEqual([]);
    expect(next.version).toBe('v2');
    expect(next.quota).toBe(base.quota);
  });
  it('tenant balances move by delta', () => {
    const t = { ...base.tenants[0], held_units: 0, available_units: 750000 };
    expect(applyDelta(base, { uptime_seconds: 1, tenants: [t] }).tenants[0].available_units).toBe(750000);
  });
});

class Sock implements SocketLike {
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  closed = false;
  close() {
    this.closed = true;
  }
  send() {}
  msg(m: unknown) {
    this.onmessage?.({ data: JSON.stringify(m) });
  }
}

async function settle() {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
}

describe('live pipe: snapshot, then ordered deltas, a gap resyncs', () => {
  it('applies deltas in order and re-reads the state after a gap', async () => {
    const socks: Sock[] = [];
    const seen: State[] = [];
    const timers: (() => void)[] = [];
    let fetches = 0;
    const live = connectLive({
      wsURL: 'ws://x',
      fetchState: async () => (fetches++, base),
      onState: (s) => seen.push(s),
      onStatus: () => {},
      socket: () => {
        const s = new Sock();
        socks.push(s);
        return s;
      },
      setTimer: (fn) => timers.push(fn),
      clearTimer: () => {},
      afterPaint: () => {},
    });
    await settle();
    expect(fetches).toBe(1);
    socks[0].msg({ type: 'state', seq: 1, state: { ...base, runs: [run('a')] } });
    socks[0].msg({ type: 'delta', seq: 2, delta: { uptime_seconds: 5, runs: [run('b')], runs_order: ['b', 'a'] } });
    expect(seen.at(-1)!.runs.map((r) => r.id)).toEqual(['b', 'a']);
    socks[0].msg({ type: 'delta', seq: 3, delta: { uptime_seconds: 6, runs_gone: ['a'] } });
    expect(seen.at(-1)!.runs.map((r) => r.id)).toEqual(['b']);
    const before = seen.length;
    socks[0].msg({ type: 'delta', seq: 5, delta: { uptime_seconds: 7, runs: [run('z')] } }); // seq 4 was lost
    expect(seen.length).toBe(before); // not applied
    expect(socks[0].closed).toBe(true);
    timers.shift()!(); // the resync: fetch the whole state, open a new socket
    await settle();
    expect(fetches).toBe(2);
    expect(socks).toHaveLength(2);
    socks[1].msg({ type: 'delta', seq: 2, delta: { uptime_seconds: 8 } }); // a delta before any state on this socket
    expect(socks[1].closed).toBe(true);
    live.close();
  });
});
