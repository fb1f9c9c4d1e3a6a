// Typed wrappers for the admin API. This is the only module that knows the
// /admin URLs and how the admin token is sent.

import { normalizeState, type Run, type State } from './types';

/** Conn is where the backend is and the admin token that opens it. */
export interface Conn {
  url: string; // e.g. "http://127.0.0.1:8787", no trailing slash needed
  token: string;
}

/** ErrorParams are the names and numbers of an admin error's sentence (the server's params). */
export type ErrorParams = Record<string, string | number>;

/**
 * ApiError is a refused or failed admin call. message is the server's own
 * words (English); errorText (errors.ts) says it in the page's language
 * from code, reason and params, and falls back to message.
 */
export class ApiError extends Error {
  readonly status: number; // HTTP status; 0 when the server could not be reached
  readonly code: string; // the contract's error code, "" when the body had none
  readonly reason: string; // the admin API's refinement (ledger/reason.go), "" when none
  readonly params: ErrorParams;

  constructor(message: string, status: number, code = '', reason = '', params: ErrorParams = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.reason = reason;
    this.params = params;
  }
}

function parseParams(v: unknown): ErrorParams {
  const out: ErrorParams = {};
  if (!v || typeof v !== 'object' || Array.isArray(v)) return out;
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (typeof x === 'string' || (typeof x === 'number' && Number.isFinite(x))) out[k] = x;
  }
  return out;
}

/**
 * errorFromBody turns an error answer into an ApiError. The server sends
 * {"error":{"message":…,"code":…,"reason":…,"params":{…}}}; anything else (a
 * proxy's HTML page, an empty body) still yields a readable sentence with
 * the status.
 */
export function errorFromBody(status: number, statusText: string, body: string): ApiError {
  try {
    const j = JSON.parse(body) as { error?: { message?: unknown; code?: unknown; reason?: unknown; params?: unknown } };
    const e = j?.error;
    if (e && typeof e === 'object') {
      const code = typeof e.code === 'string' ? e.code : '';
      const msg = typeof e.message === 'string' && e.message.trim() !== '' ? e.message.trim() : '';
      const reason = typeof e.reason === 'string' ? e.reason : '';
      if (msg || code) return new ApiError(msg || humanStatus(status, statusText), status, code, reason, parseParams(e.params));
    }
  } catch {
    // not JSON: fall through to the status line
  }
  const text = body.trim();
  const brief = text && text.length <= 200 && !text.startsWith('<') ? text : '';
  return new ApiError(`${humanStatus(status, statusText)}${brief ? `: ${brief}` : ''}`, status, '', '', {
    status,
    detail: [statusText, brief].filter(Boolean).join(': '),
  });
}

function humanStatus(status: number, statusText: string): string {
  switch (status) {
    case 401:
      return 'The admin token was refused (401); reopen the dashboard from the URL quotagate printed';
    case 403:
      return 'Forbidden (403)';
    case 404:
      return 'Not found (404)';
    default:
      return `HTTP ${status}${statusText ? ` ${statusText}` : ''}`;
  }
}

export type FetchFn = (input: string, init?: RequestInit) => Promise<Response>;

export interface AuditQuery {
  from?: string; // YYYY-MM-DD (a local day) or RFC 3339; empty: no bound
  to?: string;
  tenant?: string;
  kind?: string;
  run?: string;
  actor?: string; // tenant:<id>, operator:<how> or system:<part>
  text?: string; // case-insensitive substring of reason, evidence, detail, actor
}

/** AuditRow is one audit log row (ledger.AuditEntry). */
export interface AuditRow {
  seq: number;
  at: string;
  kind: string;
  tenant?: string;
  run?: string;
  actor?: string;
  reason?: string;
  evidence?: string;
  units: number;
  balance?: number; // a balance reading (sync rows); units is then 0
  available_before: number;
  available_after: number;
  detail?: string;
}

export interface AuditPage {
  rows: AuditRow[]; // newest first
  more: boolean; // older rows exist before the last one
}

/** RunsQuery pages GET /admin/api/runs and /admin/api/holds: one tenant's (or everyone's), below the run `before` ("" or absent: from the newest). */
export interface RunsQuery {
  tenant?: string;
  before?: string;
  limit?: number;
}

/** RunsPage is a page of runs, newest first; more says older ones match after the last. */
export interface RunsPage {
  runs: Run[];
  more: boolean;
}

/** SpendDay is what one tenant's runs on one model, admitted on one day of the gateway's zone, spent. */
export interface SpendDay {
  day: string; // YYYY-MM-DD
  tenant: string;
  upstream: string;
  model: string;
  spent_units: number;
  cost_micros: number;
}

/** SpendPage is GET /admin/api/spend's answer, summed from the ledger's hourly rollup: the days asked for, oldest first, and their rows. */
export interface SpendPage {
  days: string[];
  rows: SpendDay[];
}

/** ConnectInfo is what a tool needs to reach this quotagate (GET /admin/api/connect). */
export interface ConnectInfo {
  base_url: string; // …/v1
  origin: string; // scheme://host:port, for clients that add /v1 themselves (Anthropic)
  locale: string; // the server process's LANG, for the window's language
  tenants: { tenant: string; key?: string; models: string[] }[];
  models: { id: string; upstream: string; reasoning?: boolean }[];
}

export interface TenantPolicy {
  id: string;
  budget_units: number;
  /** the money budget, a decimal string in the gateway's currency; absent: none (the budget is in units only) */
  budget?: string;
  max_concurrent: number;
  per_minute: number;
  per_hour: number;
  allowed_models: string[];
  key_generated?: boolean;
}

export interface TenantSettings {
  tenants: TenantPolicy[];
  overrides: { tenant: string; field: string; file: string; now: string }[];
}

/** WriteBackNote says what became of one tenant in the file (admin.WriteBackNote); text is the server's English. */
export interface WriteBackNote {
  kind: string;
  tenant: string;
  text: string;
}

/** WriteBack is POST /admin/api/tenants/write-back's answer. */
export interface WriteBack {
  file: string;
  notes: WriteBackNote[];
  settings: TenantSettings;
}

/** auditParams is the query string of q, shared by the JSON list and the CSV export. */
export function auditParams(q: AuditQuery): URLSearchParams {
  const p = new URLSearchParams();
  for (const k of ['from', 'to', 'tenant', 'kind', 'run', 'actor', 'text'] as const) {
    const v = q[k];
    if (v) p.set(k, v);
  }
  return p;
}

/** ArchiveResult is what POST /admin/api/archive moved: a month each, the directory, the bytes freed in the ledger file. */
export interface ArchiveResult {
  months: { month: string; file: string; runs: number; rows: number }[];
  dir: string;
  freed_bytes: number;
}

export interface Api {
  state(): Promise<State>;
  /** reconcile settles a held run and answers it as settled; cost (decimal string in the gateway's currency) is the provider's bill, sent only when given. */
  reconcile(runID: string, units: number, evidence: string, cost?: string): Promise<Run | void>;
  /** applyFinding reconciles a held run with the figure its provider reported (state.evidence), and answers it as settled. */
  applyFinding(runID: string): Promise<Run | void>;
  /** cancelRun cancels a run and answers it as the gateway has it then. */
  cancelRun(runID: string): Promise<Run | void>;
  syncQuota(upstream: string, model: string): Promise<void>;
  setBalance(upstream: string, model: string, reading: { balance: number } | { b0: number }): Promise<void>;
  auditCSV(q: AuditQuery): Promise<{ blob: Blob; name: string }>;
  audit(q: AuditQuery, before?: number, limit?: number): Promise<AuditPage>;
  connect(): Promise<ConnectInfo>;
  tenants(): Promise<TenantSettings>;
  saveTenant(p: TenantPolicy): Promise<TenantSettings>;
  rotateKey(id: string): Promise<string>;
  /** deleteTenant removes a tenant; refused (409, in words) while it has runs in flight or units held. */
  deleteTenant(id: string): Promise<TenantSettings>;
  discardTenants(): Promise<TenantSettings>;
  /** writeBack rewrites the config file with the overrides (notes: what became of keys). */
  writeBack(): Promise<WriteBack>;
  /** archive moves the closed months' runs that ended before the date (YYYY-MM-01) into archive files (absent from test fakes). */
  archive?(before: string): Promise<ArchiveResult>;
  /** runs and holds read a page of the ledger's runs (or held runs) below a cursor; spend reads the last days' spend (absent from test fakes). */
  runs?(q: RunsQuery): Promise<RunsPage>;
  holds?(q: RunsQuery): Promise<RunsPage>;
  spend?(days: number): Promise<SpendPage>;
  /** wsURL is the WebSocket address with the token as ?token= (browsers cannot set headers on a WebSocket). */
  wsURL(): string;
}

const seg = encodeURIComponent;

type Call = (method: string, path: string, body?: unknown) => Promise<Response>;

/** caller sends one admin request with the token and turns a refusal or an unreachable server into an ApiError. */
function caller(base: string, token: string, fetchFn: FetchFn): Call {
  return async (method, path, body) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    try {
      res = await fetchFn(base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
      });
    } catch (err) {
      const detail = (err as Error).message || 'network error';
      throw new ApiError(`Cannot reach quotagate at ${base} (${detail})`, 0, '', '', { base, detail });
    }
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      throw errorFromBody(res.status, res.statusText, text);
    }
    return res;
  };
}

/** runCalls are the state read and the calls that act on runs, holds and quota gates. */
function runCalls(call: Call): Pick<Api, 'state' | 'reconcile' | 'applyFinding' | 'cancelRun' | 'syncQuota' | 'setBalance' | 'connect'> {
  return {
    async state() {
      const res = await call('GET', '/admin/api/state');
      return normalizeState(await res.json());
    },
    async reconcile(runID, units, evidence, cost) {
      const res = await call('POST', `/admin/api/holds/${seg(runID)}/reconcile`, cost ? { units, evidence, cost } : { units, evidence });
      return (await res.json()) as Run;
    },
    async applyFinding(runID) {
      const res = await call('POST', `/admin/api/holds/${seg(runID)}/reconcile`, { from_provider: true });
      return (await res.json()) as Run;
    },
    async cancelRun(runID) {
      const res = await call('POST', `/admin/api/runs/${seg(runID)}/cancel`);
      return (await res.json()) as Run;
    },
    async syncQuota(upstream, model) {
      await call('POST', `/admin/api/quota/${seg(upstream)}/${seg(model)}/sync`);
    },
    async setBalance(upstream, model, reading) {
      await call('POST', `/admin/api/quota/${seg(upstream)}/${seg(model)}/balance`, reading);
    },
    async connect() {
      const res = await call('GET', '/admin/api/connect');
      return (await res.json()) as ConnectInfo;
    },
  };
}

/** auditCalls read the audit log as pages and as the CSV file. */
function auditCalls(call: Call): Pick<Api, 'audit' | 'auditCSV'> {
  return {
    async auditCSV(q) {
      const qs = auditParams(q).toString();
      const res = await call('GET', `/admin/api/audit.csv${qs ? `?${qs}` : ''}`);
      // The server names the file (the window's save dialog uses the same name).
      const cd = res.headers.get('Content-Disposition') ?? '';
      const m = /filename="([^"]+)"/.exec(cd);
      return { blob: await res.blob(), name: m ? m[1] : 'quotagate-audit.csv' };
    },
    async audit(q, before, limit) {
      const p = auditParams(q);
      if (before) p.set('before', String(before));
      if (limit) p.set('limit', String(limit));
      const res = await call('GET', `/admin/api/audit?${p.toString()}`);
      const j = (await res.json()) as AuditPage;
      return { rows: j.rows ?? [], more: !!j.more };
    },
  };
}

/** bookCalls read the ledger's books beyond the state: runs and holds a page at a time, and the spend per day. */
function bookCalls(call: Call): Pick<Api, 'runs' | 'holds' | 'spend'> {
  const page = async (path: string, q: RunsQuery): Promise<RunsPage> => {
    const p = new URLSearchParams();
    if (q.tenant) p.set('tenant', q.tenant);
    if (q.before) p.set('before', q.before);
    if (q.limit) p.set('limit', String(q.limit));
    const qs = p.toString();
    const j = (await (await call('GET', `${path}${qs ? `?${qs}` : ''}`)).json()) as RunsPage;
    return { runs: j.runs ?? [], more: !!j.more };
  };
  return {
    runs: (q) => page('/admin/api/runs', q),
    holds: (q) => page('/admin/api/holds', q),
    async spend(days) {
      const j = (await (await call('GET', `/admin/api/spend?days=${days}`)).json()) as SpendPage;
      return { days: j.days ?? [], rows: j.rows ?? [] };
    },
  };
}

type TenantCalls = Pick<Api, 'tenants' | 'saveTenant' | 'rotateKey' | 'deleteTenant' | 'discardTenants' | 'writeBack' | 'archive'>;

/** tenantCalls read and change the tenants' policies (the settings overrides and their write-back). */
function tenantCalls(call: Call): TenantCalls {
  const json = async <T,>(method: string, path: string, body?: unknown) => (await (await call(method, path, body)).json()) as T;
  return {
    tenants: () => json<TenantSettings>('GET', '/admin/api/tenants'),
    saveTenant: (p) => json<TenantSettings>('POST', '/admin/api/tenants', p),
    rotateKey: async (id) => (await json<{ key: string }>('POST', `/admin/api/tenants/${seg(id)}/rotate`)).key,
    deleteTenant: (id) => json<TenantSettings>('POST', `/admin/api/tenants/${seg(id)}/delete`),
    discardTenants: () => json<TenantSettings>('POST', '/admin/api/tenants/discard'),
    writeBack: () => json<WriteBack>('POST', '/admin/api/tenants/write-back'),
    archive: (before) => json<ArchiveResult>('POST', '/admin/api/archive', { before }),
  };
}

export function createApi(conn: Conn, fetchFn: FetchFn = (i, init) => fetch(i, init)): Api {
  const base = conn.url.replace(/\/+$/, '');
  const call = caller(base, conn.token, fetchFn);
  return {
    ...runCalls(call),
    ...auditCalls(call),
    ...bookCalls(call),
    ...tenantCalls(call),
    wsURL() {
      const u = new URL(`${base}/admin/ws`);
      u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
      u.searchParams.set('token', conn.token);
      return u.toString();
    },
  };
}
