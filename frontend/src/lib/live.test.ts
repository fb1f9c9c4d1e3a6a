import { describe, expect, it, vi } from 'vitest';
import { backoffDelay, connectLive, parseMessage, rendered, type ConnStatus, type SocketLike } from './live';
import type { State } from './types';
import fixture from '../fixtures/state.json';

const base = fixture as unknown as State;
const withVersion = (v: string): State => ({ ...base, version: v });

/** FakeSocket stands in for the browser WebSocket; the test drives its events. */
class FakeSocket implements SocketLike {
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  closed = false;
  sent: string[] = [];
  constructor(readonly url: string) {}
  send(data: string) {
    this.sent.push(data);
  }
  close() {
    this.closed = true;
  }
  push(s: State) {
    this.onmessage?.({ data: JSON.stringify({ type: 'state', state: s }) });
  }
  drop() {
    this.onclose?.({});
  }
}

/** A manual clock: timers run only when the test says so. */
class Timers {
  pending: { fn: () => void; ms: number; id: number }[] = [];
  private next = 1;
  set = (fn: () => void, ms: number) => {
    const id = this.next++;
    this.pending.push({ fn, ms, id });
    return id;
  };
  clear = (id: unknown) => {
    this.pending = this.pending.filter((t) => t.id !== id);
  };
  delays() {
    return this.pending.map((t) => t.ms);
  }
  fire() {
    const t = this.pending.shift();
    if (!t) throw new Error('no timer pending');
    t.fn();
  }
}

/** until polls a condition across microtasks (fetch resolution is async). */
async function until(cond: () => boolean, what: string) {
  for (let i = 0; i < 100; i++) {
    if (cond()) return;
    await Promise.resolve();
    await new Promise((r) => setTimeout(r, 0));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function harness(fetches: (() => Promise<State>)[]) {
  const sockets: FakeSocket[] = [];
  const states: string[] = [];
  const statuses: ConnStatus[] = [];
  const errors: string[] = [];
  const timers = new Timers();
  const paints: (() => void)[] = [];
  let calls = 0;
  const live = connectLive({
    wsURL: 'ws://127.0.0.1:8787/admin/ws?token=t',
    fetchState: () => {
      const f = fetches[Math.min(calls, fetches.length - 1)];
      calls++;
      return f();
    },
    onState: (s) => states.push(s.version),
    onStatus: (s) => statuses.push(s),
    onError: (e) => errors.push(e.message),
    socket: (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
    initialDelayMs: 100,
    maxDelayMs: 1000,
    setTimer: timers.set,
    clearTimer: timers.clear,
    afterPaint: (fn) => paints.push(fn),
  });
  return {
    paints, live, sockets, states, statuses, errors, timers, fetchCalls: () => calls };
}

describe('parseMessage', () => {
  it('returns the state of a state message only', () => {
    expect(parseMessage(JSON.stringify({ type: 'state', state: base }))?.version).toBe('0.1.0');
    expect(parseMessage(JSON.stringify({ type: 'ping' }))).toBeNull();
    expect(parseMessage('{not json')).toBeNull();
    expect(parseMessage(JSON.stringify({ type: 'state', state: 'nope' }))).toBeNull();
    expect(parseMessage(new ArrayBuffer(2))).toBeNull();
  });
  it('fills lists that Go sent as null', () => {
    const s = parseMessage(JSON.stringify({ type: 'state', state: { ...base, runs: null, gates: null } }));
    expect(s?.runs).toEqual([]);
    expect(s?.gates).toEqual([]);
  });
});

describe('backoffDelay', () => {
  it('doubles from the initial delay up to the cap', () => {
    expect([0, 1, 2, 3, 4, 5, 60].map((n) => backoffDelay(n, 500, 10_000))).toEqual([
      500, 1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
  });
});

describe('connectLive', () => {
  it('fetches, opens the socket, and reports live only after a pushed state', async () => {
    const h = harness([async () => withVersion('fetched')]);
    expect(h.statuses).toEqual(['connecting']);
    await until(() => h.sockets.length === 1, 'socket');
    expect(h.sockets[0].url).toBe('ws://127.0.0.1:8787/admin/ws?token=t');
    expect(h.states).toEqual(['fetched']);
    expect(h.statuses).toEqual(['connecting']);

    h.sockets[0].push(withVersion('pushed-1'));
    h.sockets[0].onmessage?.({ data: '{"type":"hello"}' }); // unknown kinds are ignored
    h.sockets[0].push(withVersion('pushed-2'));
    expect(h.states).toEqual(['fetched', 'pushed-1', 'pushed-2']);
    expect(h.statuses).toEqual(['connecting', 'live', 'live']);
    h.live.close();
  });

  it('tells the server once, after painting the first pushed state', async () => {
    const h = harness([async () => withVersion('fetched')]);
    await until(() => h.sockets.length === 1, 'socket');
    expect(h.paints).toHaveLength(0); // the fetched state is not a pushed one
    h.sockets[0].push(withVersion('pushed-1'));
    h.sockets[0].push(withVersion('pushed-2'));
    expect(h.sockets[0].sent).toEqual([]); // not before the paint
    expect(h.paints).toHaveLength(1);
    h.paints[0]();
    expect(h.sockets[0].sent).toEqual([rendered()]);
    h.live.close();
  });

  it('after a drop: reconnecting, backoff, re-fetch, new socket; backoff resets once live', async () => {
    const h = harness([async () => withVersion('f1'), async () => withVersion('f2'), async () => withVersion('f3')]);
    await until(() => h.sockets.length === 1, 'first socket');
    h.sockets[0].push(withVersion('p1'));

    h.sockets[0].drop();
    expect(h.statuses.at(-1)).toBe('reconnecting');
    expect(h.sockets[0].closed).toBe(true);
    expect(h.timers.delays()).toEqual([100]);
    // A late event from the dropped socket must not resurrect it.
    h.sockets[0].push(withVersion('stale'));
    expect(h.states).not.toContain('stale');

    h.timers.fire();
    await until(() => h.sockets.length === 2, 'second socket');
    expect(h.fetchCalls()).toBe(2);
    expect(h.states).toEqual(['f1', 'p1', 'f2']);

    // Dropped again before any push: the delay doubles.
    h.sockets[1].onerror?.({});
    expect(h.timers.delays()).toEqual([200]);
    h.timers.fire();
    await until(() => h.sockets.length === 3, 'third socket');
    h.sockets[2].push(withVersion('p3'));
    expect(h.statuses.at(-1)).toBe('live');

    // Live again: the next drop starts from the initial delay.
    h.sockets[2].drop();
    expect(h.timers.delays()).toEqual([100]);
    h.live.close();
  });

  it('an error and a close from the same socket schedule one reconnect, not two', async () => {
    const h = harness([async () => base]);
    await until(() => h.sockets.length === 1, 'socket');
    h.sockets[0].onerror?.({});
    h.sockets[0].onclose?.({});
    expect(h.timers.pending).toHaveLength(1);
    h.live.close();
  });

  it('a failed fetch is reported and retried with growing delays, capped', async () => {
    let n = 0;
    const h = harness([
      async () => {
        n++;
        throw new Error(`refused ${n}`);
      },
    ]);
    const want = [100, 200, 400, 800, 1000, 1000];
    for (const d of want) {
      await until(() => h.timers.pending.length === 1, `timer ${d}`);
      expect(h.timers.delays()).toEqual([d]);
      h.timers.fire();
    }
    expect(h.sockets).toHaveLength(0);
    expect(h.errors.slice(0, 2)).toEqual(['refused 1', 'refused 2']);
    expect(h.statuses.filter((s) => s === 'reconnecting').length).toBeGreaterThanOrEqual(6);
    h.live.close();
  });

  it('close stops timers and sockets, and ignores a fetch that lands afterwards', async () => {
    let resolve!: (s: State) => void;
    const h = harness([() => new Promise<State>((r) => (resolve = r))]);
    h.live.close();
    resolve(withVersion('late'));
    await new Promise((r) => setTimeout(r, 0));
    expect(h.states).toEqual([]);
    expect(h.sockets).toHaveLength(0);
    expect(h.statuses).toEqual(['connecting', 'closed']);

    const h2 = harness([async () => base]);
    await until(() => h2.sockets.length === 1, 'socket');
    h2.sockets[0].drop();
    expect(h2.timers.pending).toHaveLength(1);
    h2.live.close();
    expect(h2.timers.pending).toHaveLength(0);
    expect(h2.statuses.at(-1)).toBe('closed');
  });
});

describe('one parse per frame', () => {
  it('a pushed state and a delta are each read from their text once', async () => {
    const h = harness([async () => base]);
    await until(() => h.sockets.length === 1, 'socket');
    const parse = vi.spyOn(JSON, 'parse');
    try {
      h.sockets[0].onmessage?.({ data: JSON.stringify({ type: 'state', seq: 1, state: withVersion('pushed') }) });
      expect(parse).toHaveBeenCalledTimes(1);
      h.sockets[0].onmessage?.({ data: JSON.stringify({ type: 'delta', seq: 2, delta: { uptime_seconds: 5 } }) });
      expect(parse).toHaveBeenCalledTimes(2);
    } finally {
      parse.mockRestore();
    }
    expect(h.states).toEqual([base.version, 'pushed', 'pushed']);
    h.live.close();
  });
});
