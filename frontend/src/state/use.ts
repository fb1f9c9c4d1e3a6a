// How components reach the store: one context, and a selector hook that
// re-renders a component only when the part of the View it reads changes.

import { createContext } from 'preact';
import { useContext, useEffect, useReducer, useRef } from 'preact/hooks';
import type { Store, View } from './store';

export const StoreContext = createContext<Store | null>(null);

/** useStore is the page's store (its methods are the actions). */
export function useStore(): Store {
  const s = useContext(StoreContext);
  if (!s) throw new Error('useStore outside a StoreContext.Provider');
  return s;
}

/** shallow compares two selections field by field (a selector that returns a fresh object). */
export function shallow<T>(a: T, b: T): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ka = Object.keys(a) as (keyof T)[];
  return ka.length === Object.keys(b).length && ka.every((k) => Object.is(a[k], b[k]));
}

/** useView selects part of the store's View; the component re-renders when that part changes. */
export function useView<T>(select: (v: View) => T, equal: (a: T, b: T) => boolean = Object.is): T {
  const store = useStore();
  const [, force] = useReducer((n: number) => n + 1, 0);
  const latest = useRef({ select, equal, value: select(store.get()) });
  const value = select(store.get());
  latest.current = { select, equal, value };
  useEffect(() => {
    const changed = (v: View) => {
      const l = latest.current;
      if (!l.equal(l.select(v), l.value)) force(0);
    };
    const stop = store.subscribe(changed);
    changed(store.get()); // a change between the render and this subscription
    return stop;
  }, [store]);
  return value;
}
