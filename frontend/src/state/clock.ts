// The page's clock. Only the few leaves that say a time relative to now
// (an age, an uptime, "12s ago") read it, so a second passing re-renders
// those text nodes and nothing else. One interval serves every leaf; it runs
// only while some leaf is on the page.

import { createContext } from 'preact';
import { useContext, useEffect, useReducer, useRef } from 'preact/hooks';

export interface Clock {
  now(): number;
  /** subscribe calls fn on every tick; the returned function stops it. */
  subscribe(fn: () => void): () => void;
}

export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(id: unknown): void;
}

const intervals: Timers = {
  set: (fn, ms) => setInterval(fn, ms),
  clear: (id) => clearInterval(id as ReturnType<typeof setInterval>),
};

/** ticker is a clock that ticks every periodMs while it has subscribers. */
export function ticker(now: () => number = Date.now, periodMs = 1000, timers: Timers = intervals): Clock {
  const subs = new Set<() => void>();
  let id: unknown = null;
  return {
    now,
    subscribe(fn) {
      subs.add(fn);
      if (id === null) id = timers.set(() => subs.forEach((f) => f()), periodMs);
      return () => {
        subs.delete(fn);
        if (subs.size === 0 && id !== null) {
          timers.clear(id);
          id = null;
        }
      };
    },
  };
}

/** stillClock reads now but never ticks (tests, screenshots). */
export function stillClock(now: () => number): Clock {
  return { now, subscribe: () => () => {} };
}

export const ClockContext = createContext<Clock>(ticker());

/**
 * useNow is the clock's time, re-read when it crosses a multiple of everyMs
 * (1 s for ages; a minute for what shows only hours and minutes).
 */
export function useNow(everyMs = 1000): Date {
  const clock = useContext(ClockContext);
  const [, force] = useReducer((n: number) => n + 1, 0);
  const bucket = useRef(Math.floor(clock.now() / everyMs));
  useEffect(
    () =>
      clock.subscribe(() => {
        const b = Math.floor(clock.now() / everyMs);
        if (b !== bucket.current) {
          bucket.current = b;
          force(0);
        }
      }),
    [clock, everyMs],
  );
  const ms = clock.now();
  bucket.current = Math.floor(ms / everyMs);
  return new Date(ms);
}
