// The dashboard's one store: the latest state, the connection status and the
// operator's messages. Components read a View and call Actions; they never
// fetch or touch bindings themselves.

import { ApiError, createApi, type Api, type AuditQuery, type Conn } from './api';
import { connectLive, type ConnStatus, type Live, type SocketFactory } from './live';
import type { State } from './types';
import type { ExportResult } from './desktop';

export interface View {
  state: State | null;
  receivedAt: number; // local clock (ms) when state arrived; uptime ticks from here
  status: ConnStatus;
  error: string | null;
  notice: string | null;
  busy: ReadonlySet<string>; // keys of actions in flight, e.g. "cancel:<id>"
}

export interface Actions {
  reconcile(runID: string, units: number, evidence: string): Promise<boolean>;
  cancelRun(runID: string): Promise<boolean>;
  syncQuota(upstream: string, model: string): Promise<boolean>;
  setBalance(upstream: string, model: string, kind: 'balance' | 'b0', value: number): Promise<boolean>;
  exportCSV(q: AuditQuery): Promise<boolean>;
  dismissError(): void;
  /** fail shows a problem found before any call (a form that does not parse). */
  fail(message: string): void;
}

export interface StoreDeps {
  api: Api;
  exportCSV: (api: Api, q: AuditQuery) => Promise<ExportResult>;
  now?: () => number;
}

export class Store implements Actions {
  private view: View;
  private subs = new Set<(v: View) => void>();
  private live: Live | null = null;
  private readonly deps: StoreDeps;
  private readonly now: () => number;

  constructor(deps: StoreDeps, initial?: State) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
    this.view = {
      state: initial ?? null,
      receivedAt: this.now(),
      status: 'connecting',
      error: null,
      notice: null,
      busy: new Set(),
    };
  }

  get(): View {
    return this.view;
  }

  subscribe(fn: (v: View) => void): () => void {
    this.subs.add(fn);
    return () => this.subs.delete(fn);
  }

  private set(patch: Partial<View>) {
    this.view = { ...this.view, ...patch };
    for (const fn of this.subs) fn(this.view);
  }

  applyState(s: State) {
    this.set({ state: s, receivedAt: this.now() });
  }

  /** start opens the live pipe; socket is injectable for tests. */
  start(socket?: SocketFactory) {
    this.live?.close();
    this.live = connectLive({
      fetchState: () => this.deps.api.state(),
      wsURL: this.deps.api.wsURL(),
      socket,
      onState: (s) => this.applyState(s),
      onStatus: (status) => this.set({ status }),
      onError: (err) => {
        // A 401 will not fix itself by retrying: say so; other gaps are shown as "reconnecting".
        if (err instanceof ApiError && err.status === 401) this.set({ error: err.message });
      },
    });
  }

  stop() {
    this.live?.close();
    this.live = null;
  }

  private async run(key: string, notice: string, fn: () => Promise<string | void>): Promise<boolean> {
    if (this.view.busy.has(key)) return false;
    const busy = new Set(this.view.busy);
    busy.add(key);
    this.set({ busy, error: null });
    try {
      const custom = await fn();
      this.set({ notice: custom || notice });
      return true;
    } catch (err) {
      this.set({ error: err instanceof Error ? err.message : String(err) });
      return false;
    } finally {
      const b = new Set(this.view.busy);
      b.delete(key);
      this.set({ busy: b });
    }
  }

  reconcile(runID: string, units: number, evidence: string) {
    return this.run(`reconcile:${runID}`, `Run ${runID} reconciled at ${units} units.`, () =>
      this.deps.api.reconcile(runID, units, evidence),
    );
  }

  cancelRun(runID: string) {
    return this.run(`cancel:${runID}`, `Cancel sent for run ${runID}.`, () => this.deps.api.cancelRun(runID));
  }

  syncQuota(upstream: string, model: string) {
    return this.run(`sync:${upstream}/${model}`, `Balance sync requested for ${upstream}/${model}.`, () =>
      this.deps.api.syncQuota(upstream, model),
    );
  }

  setBalance(upstream: string, model: string, kind: 'balance' | 'b0', value: number) {
    const reading = kind === 'b0' ? { b0: value } : { balance: value };
    const what = kind === 'b0' ? 'B0' : 'Balance';
    return this.run(`balance:${upstream}/${model}`, `${what} recorded for ${upstream}/${model}.`, () =>
      this.deps.api.setBalance(upstream, model, reading),
    );
  }

  exportCSV(q: AuditQuery) {
    return this.run('export', 'Audit CSV exported.', async () => {
      const r = await this.deps.exportCSV(this.deps.api, q);
      if (r.kind === 'saved') return `Audit CSV saved to ${r.path}.`;
      if (r.kind === 'downloaded') return `Audit CSV downloaded as ${r.name}.`;
      return 'Export cancelled.';
    });
  }

  dismissError() {
    this.set({ error: null });
  }

  fail(message: string) {
    this.set({ error: message });
  }
}

export function storeFor(conn: Conn, exportCSV: StoreDeps['exportCSV']): Store {
  return new Store({ api: createApi(conn), exportCSV });
}
