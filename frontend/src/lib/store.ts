// The dashboard's one store: the latest state, the connection status and the
// operator's notices. Components read a View and call Actions; they never
// fetch or touch bindings themselves. A notice belongs to the place on the
// page where its action was started (its scope), so it shows next to that
// button, replaces the previous notice of that scope (an error and a success
// never stand side by side), and can be dismissed.

import { ApiError, createApi, type Api, type AuditQuery, type Conn } from './api';
import { connectLive, type ConnStatus, type Live, type SocketFactory } from './live';
import type { State } from './types';
import type { ExportResult } from './desktop';
import { t } from './i18n';
import { errorText } from './errors';
import { units } from './format';

export interface Note {
  kind: 'ok' | 'error';
  text: string;
  code?: string; // the API's error code, so a form can put the error next to its field
  reason?: string; // the API's reason (ledger/reason.go), likewise
  render?: () => string; // says text again in the current language (after a switch)
}

/** noteText is a notice's sentence in the current language. */
export function noteText(n: Note): string {
  return n.render ? n.render() : n.text;
}

/** errorNote is the notice of a failed action. */
export function errorNote(err: unknown): Note {
  const render = err instanceof PartialFailure ? err.render : () => errorText(err);
  const api = err instanceof ApiError ? err : err instanceof PartialFailure ? err.cause : undefined;
  return { kind: 'error', text: render(), code: api?.code, reason: api?.reason, render };
}

/** PartialFailure is a bulk action that stopped at one failure, said in the page's language. */
class PartialFailure extends Error {
  readonly render: () => string;
  readonly cause: ApiError | undefined;
  constructor(render: () => string, cause: unknown) {
    super(render());
    this.render = render;
    this.cause = cause instanceof ApiError ? cause : undefined;
  }
}

export interface View {
  state: State | null;
  receivedAt: number; // local clock (ms) when state arrived; uptime ticks from here
  status: ConnStatus;
  notes: ReadonlyMap<string, Note>; // scope → the latest notice of that scope
  busy: ReadonlySet<string>; // keys of actions in flight, e.g. "cancel:<id>"
}

/** The scope of notices that concern the whole page (a refused token). */
export const GLOBAL = 'global';

export interface Actions {
  reconcile(runID: string, units: number, evidence: string, scope?: string): Promise<boolean>;
  reconcileMany(runIDs: readonly string[], units: number, evidence: string, scope: string): Promise<boolean>;
  cancelRun(runID: string, scope?: string): Promise<boolean>;
  syncQuota(upstream: string, model: string): Promise<boolean>;
  setBalance(upstream: string, model: string, kind: 'balance' | 'b0', value: number): Promise<boolean>;
  exportCSV(q: AuditQuery): Promise<boolean>;
  dismiss(scope: string): void;
  /** fail shows a problem found before any call (a form that does not parse). */
  fail(scope: string, message: string): void;
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
      notes: new Map(),
      busy: new Set(),
    };
  }

  get api(): Api {
    return this.deps.api;
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

  /** refresh re-renders subscribers (after a language switch). */
  refresh() {
    this.set({});
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
        if (err instanceof ApiError && err.status === 401) this.note(GLOBAL, errorNote(err));
      },
    });
  }

  stop() {
    this.live?.close();
    this.live = null;
  }

  private note(scope: string, n: Note | null) {
    const notes = new Map(this.view.notes);
    if (n) notes.set(scope, n);
    else notes.delete(scope);
    this.set({ notes });
  }

  private async run(key: string, scope: string, ok: () => string, fn: () => Promise<string | void>): Promise<boolean> {
    if (this.view.busy.has(key)) return false;
    const busy = new Set(this.view.busy);
    busy.add(key);
    this.set({ busy });
    this.note(scope, null);
    try {
      const custom = await fn();
      this.note(scope, { kind: 'ok', text: custom || ok() });
      return true;
    } catch (err) {
      this.note(scope, errorNote(err));
      return false;
    } finally {
      const b = new Set(this.view.busy);
      b.delete(key);
      this.set({ busy: b });
    }
  }

  reconcile(runID: string, n: number, evidence: string, scope = `reconcile:${runID}`) {
    return this.run(`reconcile:${runID}`, scope, () => t('rec.done', { run: runID, units: units(n) }), () =>
      this.deps.api.reconcile(runID, n, evidence),
    );
  }

  /** reconcileMany settles each run with the same units and evidence; each is its own audited reconcile. */
  reconcileMany(runIDs: readonly string[], n: number, evidence: string, scope: string) {
    return this.run('reconcile:bulk', scope, () => t('rec.doneBulk', { n: runIDs.length }), async () => {
      let ok = 0;
      for (const id of runIDs) {
        try {
          await this.deps.api.reconcile(id, n, evidence);
          ok++;
        } catch (err) {
          const done = ok;
          throw new PartialFailure(() => t('rec.partial', { ok: done, n: runIDs.length, run: id, error: errorText(err) }), err);
        }
      }
    });
  }

  cancelRun(runID: string, scope = `cancel:${runID}`) {
    return this.run(`cancel:${runID}`, scope, () => t('runs.cancelled', { run: runID }), () =>
      this.deps.api.cancelRun(runID),
    );
  }

  syncQuota(upstream: string, model: string) {
    const k = `${upstream}/${model}`;
    return this.run(`sync:${k}`, `quota:${k}`, () => t('quota.syncAsked', { model: k }), () =>
      this.deps.api.syncQuota(upstream, model),
    );
  }

  setBalance(upstream: string, model: string, kind: 'balance' | 'b0', value: number) {
    const k = `${upstream}/${model}`;
    const reading = kind === 'b0' ? { b0: value } : { balance: value };
    const what = kind === 'b0' ? 'B0' : t('quota.readingBalance');
    return this.run(`balance:${k}`, `quota:${k}`, () => t('quota.recorded', { what, model: k }), () =>
      this.deps.api.setBalance(upstream, model, reading),
    );
  }

  exportCSV(q: AuditQuery) {
    return this.run('export', 'export', () => t('audit.exportCancelled'), async () => {
      const r = await this.deps.exportCSV(this.deps.api, q);
      if (r.kind === 'saved') return t('audit.saved', { path: r.path });
      if (r.kind === 'downloaded') return t('audit.downloaded', { name: r.name });
      return t('audit.exportCancelled');
    });
  }

  dismiss(scope: string) {
    this.note(scope, null);
  }

  fail(scope: string, message: string) {
    this.note(scope, { kind: 'error', text: message });
  }
}

export function storeFor(conn: Conn, exportCSV: StoreDeps['exportCSV']): Store {
  return new Store({ api: createApi(conn), exportCSV });
}
