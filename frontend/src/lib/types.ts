// The admin state JSON (CONTRACTS.md "Admin state JSON"); field names are the
// wire names so a fixture or a golden file can be read without mapping.

export type RunStatus = 'queued' | 'active' | 'completed' | 'interrupted' | 'cancelled' | 'failed';
export type UsageStatus = 'pending' | 'trusted' | 'unknown' | 'reconciled' | 'released';

export interface TenantState {
  tenant: string;
  budget_units: number;
  spent_units: number;
  held_units: number;
  available_units: number;
  active: number;
  /** calls waiting at a gate, from the gateway itself (not the listed runs) */
  queued: number;
  max_concurrent: number;
  per_minute: number;
  per_hour: number;
  /** use of the request windows, from the gateway's rate limiter; absent when no window is on */
  rate?: { last_minute: number; last_hour: number; refused: number };
  /** no longer configured (deleted, or gone from the file); its history stays */
  removed?: boolean;
  // The money budget, in micros (10⁻⁶) of the gateway's currency (ISO 4217);
  // all absent when the tenant has no money budget: it is then shown in units only.
  currency?: string;
  budget_micros?: number;
  spent_micros?: number;
  held_micros?: number;
  available_micros?: number;
  // The budget's current period, when it renews (budget_period day, week or
  // month): its label ("2026-12", "2026-W49", "2026-12-01") and its bounds
  // in RFC 3339 (the end exclusive, the next period's start). The spent,
  // held and available above are then this period's. All absent for a
  // budget that never renews.
  period?: string;
  period_start?: string;
  period_end?: string;
}

/** PeriodSpend is what one tenant spent in one period (the admin state's periods, newest first). */
export interface PeriodSpend {
  period: string;
  period_start: string;
  spent_units: number;
  spent_micros?: number;
}

/** WebhookState is how the alerts' webhook is doing; the secret itself is never shown. */
export interface WebhookState {
  url: string;
  secret_set?: boolean;
  pending?: number; // alerts waiting to be delivered
  failing?: boolean; // the latest attempt failed
  last_error?: string;
  last_attempt_at?: string | null;
}

/** AlertsState is the alerts' config and delivery; absent when no alerts are configured. */
export interface AlertsState {
  thresholds?: number[]; // percent of a tenant's budget
  webhook?: WebhookState | null;
  notifies?: boolean; // the gateway shows each alert on the desktop itself
}

/** ClockState is the gateway's clock: offset is a Go duration ("72h0m0s", "0s" when not shifted). */
export interface ClockState {
  offset: string;
  now: string;
}

export interface Run {
  id: string;
  tenant: string;
  upstream: string;
  model: string;
  quota_day?: string;
  status: RunStatus;
  usage: UsageStatus;
  reserve_units: number;
  spent_units: number;
  held_units: number;
  evidence?: string;
  overrun_units?: number;
  created_at: string;
  updated_at: string;
  // How the run was called; optional so older servers still render.
  door?: string; // the front door it came in by: chat, responses, messages ("" before doors were kept)
  upstream_protocol?: string; // the protocol it was relayed in: the door's own, or chat (translated)
  streamed_units?: number; // units relayed so far (active runs)
  cached_tokens?: number; // the part of the trusted prompt the provider served from its cache
  retry_count?: number; // the SDK's X-Stainless-Retry-Count
  retry_of?: string; // the attempt this run retried (its retry group)
  idempotency_key?: string;
  // Money, when the run's model has a price: micros of the gateway's currency.
  cost_micros?: number;
  cost?: string; // the same cost as an exact decimal string
  reserve_micros?: number;
  /** the budget period the run was admitted in; its hold and settlement stay there ("" or absent: none) */
  period?: string;
  /** how many attempts its call took up to this run: more than 1 when it failed over along its model's route */
  attempts?: number;
  /** the attempt before it, refused before any output and released */
  failover_of?: string;
}

/** RouteTarget is one upstream of a model's route and what it can take now. */
export interface RouteTarget {
  upstream: string;
  upstream_model: string;
  priority: number;
  evicted: boolean; // its quota guard evicted the model: calls pass it
  full: boolean; // every slot of its gate is taken
  keys: KeyState[];
}

/** RouteState is one model's route: its upstreams in the order calls try them. */
export interface RouteState {
  model: string;
  targets: RouteTarget[];
}

export interface GateState {
  upstream: string;
  max_concurrent: number;
  in_flight: number;
  queued: number;
  max_waiters: number;
  max_wait_ms: number;
  admitted: number;
  rejected: number;
  timed_out: number;
  wait_p95_ms: number;
}

/** KeyState is one key of an upstream's key pool: never the key, its last four characters. */
export interface KeyState {
  last4: string;
  /** absent while the key is in use */
  resting_until?: string;
  /** the provider's answer that rested it: "401", "403", "402" or "quota_exhausted" */
  why?: string;
}

export interface QuotaState {
  upstream: string;
  model: string;
  day: string;
  usage_today: number;
  held_in_flight: number;
  balance_at_sync: number;
  usage_at_sync: number;
  synced_at: string | null; // null until the first balance reading
  lag_seconds: number;
  b0_estimate: number;
  b0_manual?: boolean;
  limit: number;
  limit_v6: number;
  evicted: boolean;
  evicted_reason: string;
  source?: string;
  sync_error?: string;
  daily_cap?: number;
  usage_wall?: number;
  balance_wall?: number;
  small_buffer?: number;
  topup_plan?: number;
  expiring_units?: number;
  can_sync?: boolean; // false when the balance source is manual only
  // What the ledger enforces on today's calls: the limit less
  // yesterday's runs still drawing on today's pool, the learned overrun
  // ratio on every reserve, and a tail held back once for one call that
  // overruns further.
  admit_limit?: number;
  carry_settled?: number;
  carry_held?: number;
  overrun?: number;
  overrun_tail?: number;
  // Where today's margin goes: how far below the estimated pool today's
  // calls are admitted (gap = pool − admit), term by term; wall is beside
  // them (the usage wall evicts on settled usage).
  headroom?: Headroom;
}

export interface Headroom {
  pool: number;
  admit: number;
  gap: number;
  lag: number;
  expiry: number;
  buffer: number;
  skew: number;
  carry: number;
  overrun: number;
  wall: number;
}

export interface Snapshot {
  id: number;
  upstream: string;
  model: string;
  day: string;
  synced_at: string;
  balance_at_sync: number;
  usage_at_sync: number;
  limit: number;
  limit_v6: number;
  b0_estimate: number;
  lag_seconds: number;
  source: string;
  detail?: string;
}

export interface State {
  version: string;
  started_at: string;
  uptime_seconds: number;
  data_dir: string;
  addr: string;
  meter: string;
  /** the gateway's currency (ISO 4217) every *_micros figure is in; absent when the books are in units only */
  currency?: string;
  demo: boolean;
  tenants: TenantState[];
  runs: Run[];
  holds: Run[];
  gates: GateState[];
  quota: QuotaState[];
  snapshots: Snapshot[];
  // Periods, alerts and the test clock; each absent from a gateway that does
  // not send it, so the page shows what it has.
  /** the last periods' spend per tenant, newest first */
  periods?: Record<string, PeriodSpend[]>;
  alerts?: AlertsState | null;
  clock?: ClockState | null;
  /** the key pools of the upstreams that have one, by upstream name */
  keys?: Record<string, KeyState[]>;
  /** every model's route (absent from older servers) */
  routes?: RouteState[];
  /** what the providers reported of the holds, by run id; absent when no upstream has a usage_lookup */
  evidence?: Record<string, Finding>;
  /** why the state is partial ("ledger unreachable: …"); absent when the ledger answered */
  degraded?: string;
}

/**
 * FindingState is where the provider lookup of one held run is: looking
 * (retried with backoff), found (a figure to apply), refused (the answer
 * cannot be evidence), gave_up (the window passed unanswered), applied.
 */
export type FindingState = 'looking' | 'found' | 'refused' | 'gave_up' | 'applied';

/** Finding is what a held run's provider reported of it (backend/evidence). */
export interface Finding {
  run: string;
  upstream: string;
  provider_id: string;
  state: FindingState;
  input_tokens: number;
  output_tokens: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
  /** the provider's cost as it wrote it, a decimal string */
  cost?: string;
  looked_up_at?: string;
  attempts: number;
  /** why a figure was refused or the lookup gave up, or what the last attempt met */
  note?: string;
  /** the provider's answer, secrets scrubbed */
  answer?: string;
  auto?: boolean;
}

const listKeys = ['tenants', 'runs', 'holds', 'gates', 'quota', 'snapshots'] as const;

/**
 * normalizeState checks the outline of a decoded state and fills lists that
 * Go sent as null (a nil slice marshals to null, not []). It throws on
 * anything that is not a state object, so a bad message never reaches the UI.
 */
export function normalizeState(raw: unknown): State {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new Error('state is not an object');
  }
  const s = { ...(raw as Record<string, unknown>) };
  for (const k of listKeys) {
    const v = s[k];
    if (v === null || v === undefined) s[k] = [];
    else if (!Array.isArray(v)) throw new Error(`state.${k} is not a list`);
  }
  if (typeof s.version !== 'string') throw new Error('state.version is missing');
  return s as unknown as State;
}
