// Typed wrappers for the admin API. This is the only module that knows the
// /admin URLs and how the admin token is sent.

import { normalizeState, type State } from './types';

/** Conn is where the backend is and the admin token that opens it. */
export interface Conn {
  url: string; // e.g. "http://127.0.0.1:8787", no trailing slash needed
  token: string;
}

/** ApiError is a refused or failed admin call, with a sentence for the error banner. */
export class ApiError extends Error {
  readonly status: number; // HTTP status; 0 when the server could not be reached
  readonly code: string; // the contract's error code, "" when the body had none

  constructor(message: string, status: number, code = '') {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/**
 * errorFromBody turns an error answer into an ApiError. The server sends
 * {"error":{"message":…,"code":…}}; anything else (a proxy's HTML page, an
 * empty body) still yields a readable sentence with the status.
 */
export function errorFromBody(status: number, statusText: string, body: string): ApiError {
  try {
    const j = JSON.parse(body) as { error?: { message?: unknown; code?: unknown } };
    const e = j?.error;
    if (e && typeof e === 'object') {
      const code = typeof e.code === 'string' ? e.code : '';
      const msg = typeof e.message === 'string' && e.message.trim() !== '' ? e.message.trim() : '';
      if (msg || code) return new ApiError(msg || humanStatus(status, statusText), status, code);
    }
  } catch {
    // not JSON: fall through to the status line
  }
  const text = body.trim();
  const brief = text && text.length <= 200 && !text.startsWith('<') ? `: ${text}` : '';
  return new ApiError(`${humanStatus(status, statusText)}${brief}`, status);
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
  from?: string; // YYYY-MM-DD (or RFC 3339), empty: no bound
  to?: string;
  tenant?: string;
}

export interface Api {
  state(): Promise<State>;
  reconcile(runID: string, units: number, evidence: string): Promise<void>;
  cancelRun(runID: string): Promise<void>;
  syncQuota(upstream: string, model: string): Promise<void>;
  setBalance(upstream: string, model: string, reading: { balance: number } | { b0: number }): Promise<void>;
  auditCSV(q: AuditQuery): Promise<Blob>;
  /** wsURL is the WebSocket address with the token as ?token= (browsers cannot set headers on a WebSocket). */
  wsURL(): string;
}

const seg = encodeURIComponent;

export function createApi(conn: Conn, fetchFn: FetchFn = (i, init) => fetch(i, init)): Api {
  const base = conn.url.replace(/\/+$/, '');

  async function call(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { Authorization: `Bearer ${conn.token}` };
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
      throw new ApiError(`Cannot reach quotagate at ${base} (${(err as Error).message || 'network error'})`, 0);
    }
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      throw errorFromBody(res.status, res.statusText, text);
    }
    return res;
  }

  return {
    async state() {
      const res = await call('GET', '/admin/api/state');
      return normalizeState(await res.json());
    },
    async reconcile(runID, units, evidence) {
      await call('POST', `/admin/api/holds/${seg(runID)}/reconcile`, { units, evidence });
    },
    async cancelRun(runID) {
      await call('POST', `/admin/api/runs/${seg(runID)}/cancel`);
    },
    async syncQuota(upstream, model) {
      await call('POST', `/admin/api/quota/${seg(upstream)}/${seg(model)}/sync`);
    },
    async setBalance(upstream, model, reading) {
      await call('POST', `/admin/api/quota/${seg(upstream)}/${seg(model)}/balance`, reading);
    },
    async auditCSV(q) {
      const params = new URLSearchParams();
      if (q.from) params.set('from', q.from);
      if (q.to) params.set('to', q.to);
      if (q.tenant) params.set('tenant', q.tenant);
      const qs = params.toString();
      const res = await call('GET', `/admin/api/audit.csv${qs ? `?${qs}` : ''}`);
      return res.blob();
    },
    wsURL() {
      const u = new URL(`${base}/admin/ws`);
      u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
      u.searchParams.set('token', conn.token);
      return u.toString();
    },
  };
}
