// Applying the server's deltas (backend/admin/delta.go) to the state: keyed
// lists get their changed rows, lose their gone keys and take a new order
// when one is sent; small lists are replaced whole. Pure, for tests.
import type { AlertsState, ClockState, Finding, GateState, KeyState, PeriodSpend, QuotaState, Run, Snapshot, State, TenantState, RouteState } from './types';

export interface Delta {
  uptime_seconds: number;
  runs?: Run[];
  runs_gone?: string[];
  runs_order?: string[];
  holds?: Run[];
  holds_gone?: string[];
  holds_order?: string[];
  tenants?: TenantState[];
  tenants_gone?: string[];
  tenant_order?: string[];
  gates?: GateState[];
  quota?: QuotaState[];
  snapshots?: Snapshot[];
  header?: Pick<State, 'version' | 'data_dir' | 'addr' | 'meter' | 'demo'>;
  // Replaced whole when sent; absent: unchanged.
  periods?: Record<string, PeriodSpend[]>;
  alerts?: AlertsState;
  clock?: ClockState;
  keys?: Record<string, KeyState[]>;
  routes?: RouteState[];
  /** the holds' provider findings, whole ({} when none is left) */
  evidence?: Record<string, Finding>;
  /** why the state is partial; "" when the ledger answers again */
  degraded?: string;
}

function keyed<T>(rows: T[], changed: T[] | undefined, gone: string[] | undefined, order: string[] | undefined, key: (r: T) => string): T[] {
  if (!changed?.length && !gone?.length && !order?.length) return rows;
  const by = new Map<string, T>();
  const keys: string[] = [];
  for (const r of rows) {
    by.set(key(r), r);
    keys.push(key(r));
  }
  for (const r of changed ?? []) {
    const k = key(r);
    if (!by.has(k)) keys.push(k);
    by.set(k, r);
  }
  for (const k of gone ?? []) by.delete(k);
  const out: T[] = [];
  for (const k of order?.length ? order : keys) {
    const r = by.get(k);
    if (r !== undefined) out.push(r);
  }
  return out;
}

/** applyDelta returns a new state; lists that did not change keep their identity (cheap re-renders). */
export function applyDelta(s: State, d: Delta): State {
  return {
    ...s,
    ...(d.header ?? {}),
    uptime_seconds: d.uptime_seconds,
    runs: keyed(s.runs, d.runs, d.runs_gone, d.runs_order, (r) => r.id),
    holds: keyed(s.holds, d.holds, d.holds_gone, d.holds_order, (r) => r.id),
    tenants: keyed(s.tenants, d.tenants, d.tenants_gone, d.tenant_order, (t) => t.tenant),
    gates: d.gates ?? s.gates,
    quota: d.quota ?? s.quota,
    snapshots: d.snapshots ?? s.snapshots,
    ...(d.periods ? { periods: d.periods } : {}),
    ...(d.alerts ? { alerts: d.alerts } : {}),
    ...(d.clock ? { clock: d.clock } : {}),
    ...(d.keys ? { keys: d.keys } : {}),
    ...(d.routes ? { routes: d.routes } : {}),
    ...(d.evidence ? { evidence: d.evidence } : {}),
    ...(d.degraded !== undefined ? { degraded: d.degraded || undefined } : {}),
  };
}
