// The live pipe: fetch the whole state, then apply the states the server
// pushes over /admin/ws. The hub drops slow subscribers, so any close is
// treated as a gap: wait (backoff), re-fetch the state, reopen the socket.

import { normalizeState, type State } from './types';
import { applyDelta, type Delta } from './delta';

export type ConnStatus = 'connecting' | 'live' | 'reconnecting' | 'closed';

/** The part of the WebSocket API this module uses, so tests can inject a fake. */
export interface SocketLike {
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  close(code?: number, reason?: string): void;
  send?(data: string): void;
}

export type SocketFactory = (url: string) => SocketLike;

export interface LiveOptions {
  fetchState: () => Promise<State>;
  wsURL: string;
  onState: (s: State) => void;
  onStatus: (s: ConnStatus) => void;
  onError?: (err: Error) => void;
  socket?: SocketFactory;
  initialDelayMs?: number; // first reconnect delay; doubles up to maxDelayMs
  maxDelayMs?: number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (t: unknown) => void;
  afterPaint?: (fn: () => void) => void; // runs fn once the browser has painted
}

/**
 * RENDERED is what the page tells the server once it has painted the first
 * pushed state: the desktop smoke test waits for the server's log of it
 * instead of guessing when the window shows live data.
 */
export const RENDERED = JSON.stringify({ type: 'rendered' });

/** rendered is RENDERED with the page's language, so the smoke test can see the window chose zh-CN. */
export function rendered(): string {
  const lang = typeof document !== 'undefined' ? document.documentElement.lang : '';
  return lang ? JSON.stringify({ type: 'rendered', lang }) : RENDERED;
}

function defaultAfterPaint(fn: () => void) {
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(() => setTimeout(fn, 0));
  else setTimeout(fn, 0);
}

export interface Live {
  close(): void;
}

/** backoffDelay is the wait before reconnect attempt n (0-based): initial·2ⁿ, capped. */
export function backoffDelay(attempt: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30));
}

export type Message = { type: 'state'; seq: number; state: State } | { type: 'delta'; seq: number; delta: Delta };

/** readFrame is a frame's JSON object, read once; null for anything that is not one. */
function readFrame(data: unknown): { type?: unknown; seq?: unknown; state?: unknown; delta?: unknown } | null {
  if (typeof data !== 'string') return null;
  let msg: unknown;
  try {
    msg = JSON.parse(data);
  } catch {
    return null;
  }
  return msg && typeof msg === 'object' ? (msg as { type?: unknown }) : null;
}

/**
 * parseFrame reads a {"type":"state","seq":n,"state":…} or
 * {"type":"delta","seq":n,"delta":…} message; null for anything else
 * (unknown types are ignored so the server can add kinds). A frame's text is
 * parsed once: a state is normalised from the object already read.
 */
export function parseFrame(data: unknown): Message | null {
  const m = readFrame(data);
  if (!m) return null;
  const seq = typeof m.seq === 'number' ? m.seq : 0;
  if (m.type === 'delta') {
    if (!m.delta || typeof m.delta !== 'object' || seq <= 0) return null;
    return { type: 'delta', seq, delta: m.delta as Delta };
  }
  if (m.type !== 'state') return null;
  try {
    return { type: 'state', seq, state: normalizeState(m.state) };
  } catch {
    return null;
  }
}

/**
 * parseMessage returns the state carried by a {"type":"state","state":…}
 * message, or null for any other message.
 */
export function parseMessage(data: unknown): State | null {
  const m = parseFrame(data);
  return m && m.type === 'state' ? m.state : null;
}

/** drop detaches a socket's handlers and closes it, so its late events reach nobody. */
function drop(s: SocketLike) {
  s.onopen = s.onmessage = s.onerror = s.onclose = null;
  try {
    s.close();
  } catch {
    // already closed
  }
}

/**
 * sequencer applies one socket's frames in order: a state replaces what was
 * read, a delta must follow the message before it. A gap (or a delta before
 * any state) means a lost message: 'gap' asks for the whole state again.
 */
function sequencer(): (m: Message) => State | 'gap' {
  let seq = 0; // the last message applied on this socket
  let cur: State | null = null;
  return (m) => {
    if (m.type === 'delta' && (!cur || m.seq !== seq + 1)) return 'gap';
    const st = m.type === 'state' ? m.state : applyDelta(cur as State, m.delta);
    seq = m.seq;
    cur = st;
    return st;
  };
}

/** listen feeds a socket's frames to the page and tells the server, once, when the first state has been painted. */
function listen(s: SocketLike, o: LiveOptions, current: () => boolean, delivered: (st: State) => void, reconnect: () => void) {
  const apply = sequencer();
  let told = false;
  s.onmessage = (ev) => {
    if (!current()) return;
    const m = parseFrame(ev.data);
    if (!m) return;
    const st = apply(m);
    if (st === 'gap') {
      reconnect();
      return;
    }
    delivered(st);
    if (told) return;
    told = true;
    (o.afterPaint ?? defaultAfterPaint)(() => {
      if (!current()) return;
      try {
        s.send?.(rendered());
      } catch {
        // the socket closed meanwhile; the reconnect will tell again
      }
    });
  };
  s.onclose = reconnect;
  s.onerror = reconnect;
}

export function connectLive(o: LiveOptions): Live {
  const socket: SocketFactory = o.socket ?? ((url) => new WebSocket(url) as unknown as SocketLike);
  const initial = o.initialDelayMs ?? 500;
  const max = o.maxDelayMs ?? 10_000;
  const setTimer = o.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
  const clearTimer = o.clearTimer ?? ((t) => clearTimeout(t as ReturnType<typeof setTimeout>));

  let closed = false;
  let attempt = 0;
  let timer: unknown = null;
  let ws: SocketLike | null = null;
  // Each connect cycle gets a generation; callbacks from an older cycle
  // (a late fetch, a socket we already gave up on) are ignored.
  let gen = 0;

  function status(s: ConnStatus) {
    if (!closed || s === 'closed') o.onStatus(s);
  }

  function scheduleReconnect(myGen: number) {
    if (closed || myGen !== gen) return;
    gen++;
    if (ws) {
      const old = ws;
      ws = null;
      drop(old);
    }
    status('reconnecting');
    const delay = backoffDelay(attempt, initial, max);
    attempt++;
    timer = setTimer(() => {
      timer = null;
      void cycle();
    }, delay);
  }

  function delivered(st: State) {
    attempt = 0; // a delivered state proves the pipe works again
    o.onState(st);
    status('live');
  }

  async function cycle() {
    if (closed) return;
    const myGen = ++gen;
    const current = () => !closed && myGen === gen;
    try {
      const s = await o.fetchState();
      if (!current()) return;
      o.onState(s);
    } catch (err) {
      if (!current()) return;
      o.onError?.(err as Error);
      scheduleReconnect(myGen);
      return;
    }
    try {
      ws = socket(o.wsURL);
    } catch (err) {
      o.onError?.(err as Error);
      scheduleReconnect(myGen);
      return;
    }
    listen(ws, o, current, delivered, () => scheduleReconnect(myGen));
  }

  status('connecting');
  void cycle();

  return {
    close() {
      if (closed) return;
      closed = true;
      gen++;
      if (timer !== null) clearTimer(timer);
      timer = null;
      if (ws) {
        drop(ws);
        ws = null;
      }
      o.onStatus('closed');
    },
  };
}
