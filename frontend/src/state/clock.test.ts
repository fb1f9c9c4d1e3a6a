import { describe, expect, it } from 'vitest';
import { ticker, type Timers } from './clock';

/** fakeTimers runs the interval when the test says so. */
function fakeTimers() {
  const live = new Map<number, () => void>();
  let next = 1;
  const timers: Timers = {
    set: (fn) => (live.set(next, fn), next++),
    clear: (id) => void live.delete(id as number),
  };
  return { timers, live, tick: () => [...live.values()].forEach((f) => f()) };
}

describe('ticker', () => {
  it('one interval for every leaf, running only while a leaf is on the page', () => {
    const ft = fakeTimers();
    const clock = ticker(() => 0, 1000, ft.timers);
    expect(ft.live.size).toBe(0);
    let a = 0;
    let b = 0;
    const stopA = clock.subscribe(() => a++);
    const stopB = clock.subscribe(() => b++);
    expect(ft.live.size).toBe(1);
    ft.tick();
    expect([a, b]).toEqual([1, 1]);
    stopA();
    ft.tick();
    expect([a, b]).toEqual([1, 2]);
    stopB();
    expect(ft.live.size).toBe(0);
  });
});
