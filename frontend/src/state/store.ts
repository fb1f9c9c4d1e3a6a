// The dashboard's one store: the latest state, the connection status, what
// the Connect, Settings, Audit and Overview panels read from the admin API, the page's
// language, theme and notification choices, and the operator's notices.
// Components select from its View and call its methods; they never fetch or
// touch bindings themselves. A notice belongs to the place on the page where
// its action was started (its scope), so it shows next to that button,
// replaces the previous notice of that scope (an error and a success never
// stand side by side), and can be dismissed.

import { ApiError, createApi, type Api, type AuditQuery, type Conn, type ConnectInfo } from '../lib/api';
import { connectLive, type ConnStatus, type Live, type SocketFactory } from '../lib/live';
import type { Run, State } from '../lib/types';
import type { ExportResult } from '../lib/desktop';
import { applyTheme, lang, pickLang, rememberLang, rememberTheme, setLang, storedLang, storedTheme, t, type Lang, type ThemePref } from '../lib/i18n';
import { errorText } from '../lib/errors';
import { errorNote, PartialFailure, said, type Note } from './notes';
import { units } from '../lib/format';
import { deliver, events, loadPrefs, notifyApp, savePrefs, testEvent, type Delivery, type NotifyEvent, type NotifyPrefs } from '../lib/notify';
export { errorNote, noteText, said, type Note } from './notes';
import { AuditSlice, emptyAudit, type AuditView } from './audit';
import { TenantsSlice, emptyTenants, type TenantsView } from './tenants';
import { BooksSlice, emptyBooks, type BooksView } from './books';

export interface View {
  state: State | null;
  receivedAt: number; // local clock (ms) when state arrived; uptime ticks from here
  status: ConnStatus;
  notes: ReadonlyMap<string, Note>; // scope → the latest notice of that scope
  busy: ReadonlySet<string>; // keys of actions in flight, e.g. "cancel:<id>"
  lang: Lang;
  theme: ThemePref;
  prefs: NotifyPrefs;
  connect: ConnectInfo | null; // GET /admin/api/connect, read once
  connectError: Note | null;
  tenants: TenantsView;
  audit: AuditView;
  books: BooksView;
}

/** The scope of notices that concern the whole page (a refused token). */
export const GLOBAL = 'global';

export interface Actions {
  /** reconcile settles a held run; cost is the provider's bill as a decimal string of the gateway's currency, when given. */
  reconcile(runID: string, units: number, evidence: string, scope?: string, cost?: string): Promise<boolean>;
  reconcileMany(runIDs: readonly string[], units: number, evidence: string, scope: string): Promise<boolean>;
  /** applyFinding reconciles a held run with its provider's figure; the result or the refusal is noted under apply:<run>. */
  applyFinding(runID: string, figure: number): Promise<boolean>;
  cancelRun(runID: string, scope?: string): Promise<boolean>;
  syncQuota(upstream: string, model: string): Promise<boolean>;
  setBalance(upstream: string, model: string, kind: 'balance' | 'b0', value: number): Promise<boolean>;
  exportCSV(q: AuditQuery): Promise<boolean>;
  dismiss(scope: string): void;
  /** fail shows a problem found before any call (a form that does not parse). */
  fail(scope: string, message: string | (() => string)): void;
}

export interface StoreDeps {
  api: Api;
  exportCSV: (api: Api, q: AuditQuery) => Promise<ExportResult>;
  now?: () => number;
  /** The window follows the system locale (the server's LANG) unless the operator chose a language. */
  followSystemLocale?: boolean;
  /** notify shows desktop notifications (notify.deliver by default). */
  notify?: (evs: NotifyEvent[]) => Promise<unknown>;
}

/** Core is what a slice of the store uses: the view, the API and the notices. */
export interface Core {
  readonly api: Api;
  get(): View;
  set(patch: Partial<View>): void;
  note(scope: string, n: Note | null): void;
  /** busy marks key in flight; false when it already was (a second click). */
  busy(key: string, on: boolean): boolean;
}

/** tap is p itself, keeping its answer by the way: whoever awaits it waits exactly as for p. */
function tap<T>(p: Promise<T>, keep: (v: T) => void): Promise<T> {
  p.then(keep, () => {});
  return p;
}

export class Store implements Actions, Core {
  private view: View;
  private subs = new Set<(v: View) => void>();
  private live: Live | null = null;
  private readonly deps: StoreDeps;
  private readonly now: () => number;
  private connecting: Promise<ConnectInfo> | null = null;
  private notified: State | null; // the state the last notifications were worked out from
  /** The Settings tab's tenants: list, edit, rotate, delete, discard, write back. */
  readonly tenants: TenantsSlice;
  /** The audit view: its filter, its pages, and the live tail of the first page. */
  readonly audit: AuditSlice;
  /** The Overview's spend from the rollup, and the runs and holds lists' older pages. */
  readonly books: BooksSlice;

  constructor(deps: StoreDeps, initial?: State) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
    this.notified = initial ?? null;
    this.view = {
      state: initial ?? null,
      receivedAt: this.now(),
      status: 'connecting',
      notes: new Map(),
      busy: new Set(),
      lang: lang(),
      theme: storedTheme(),
      prefs: loadPrefs(),
      connect: null,
      connectError: null,
      tenants: emptyTenants,
      audit: emptyAudit,
      books: emptyBooks,
    };
    this.tenants = new TenantsSlice(this);
    this.audit = new AuditSlice(this);
    this.books = new BooksSlice(this, this.now);
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

  set(patch: Partial<View>) {
    this.view = { ...this.view, ...patch };
    for (const fn of this.subs) fn(this.view);
  }

  applyState(s: State) {
    this.set({ state: s, receivedAt: this.now() });
    // Desktop notifications for what became true since the previous state.
    const evs = events(this.notified, s, this.view.prefs);
    this.notified = s;
    if (evs.length > 0) void (this.deps.notify ?? deliver)(evs);
    this.audit.stateArrived();
    this.books.stateArrived(s);
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

  /**
   * connectInfo reads GET /admin/api/connect once for the page: the window's
   * locale before the first paint and the Connect panel share the answer. A
   * failure is kept for the panel and the next call asks again.
   */
  connectInfo(): Promise<ConnectInfo> {
    if (!this.connecting) {
      this.connecting = this.deps.api.connect().then(
        (info) => {
          this.set({ connect: info, connectError: null });
          if (this.deps.followSystemLocale && !storedLang()) this.setLanguage(pickLang({ system: info.locale ?? '' }), false);
          return info;
        },
        (err: unknown) => {
          this.connecting = null;
          this.set({ connectError: errorNote(err) });
          throw err;
        },
      );
    }
    return this.connecting;
  }

  /** setLanguage switches the page's language in place (nothing remounts); remember keeps the choice. */
  setLanguage(l: Lang, remember = true) {
    setLang(l);
    if (remember) rememberLang(l);
    this.set({ lang: l });
  }

  setTheme(p: ThemePref) {
    rememberTheme(p);
    applyTheme(p);
    this.set({ theme: p });
  }

  setPrefs(p: NotifyPrefs) {
    savePrefs(p);
    this.set({ prefs: p });
    // A browser asks once; the window's own service needs no permission.
    if (!notifyApp() && typeof Notification !== 'undefined' && Notification.permission === 'default') void Notification.requestPermission().catch(() => {});
  }

  /** tryNotification sends the Settings tab's test notification and says how it was shown. */
  tryNotification(): Promise<Delivery> {
    return deliver([testEvent()]);
  }

  note(scope: string, n: Note | null) {
    const notes = new Map(this.view.notes);
    if (n) notes.set(scope, n);
    else notes.delete(scope);
    this.set({ notes });
  }

  busy(key: string, on: boolean): boolean {
    if (on === this.view.busy.has(key)) return false;
    const busy = new Set(this.view.busy);
    if (on) busy.add(key);
    else busy.delete(key);
    this.set({ busy });
    return true;
  }

  /** run makes one call under a busy key and notes its outcome in scope: ok's text, or the text the call answered when it answers one. */
  private async run(key: string, scope: string, ok: () => string, fn: () => Promise<unknown>): Promise<boolean> {
    if (!this.busy(key, true)) return false;
    this.note(scope, null);
    try {
      const custom = await fn();
      this.note(scope, { kind: 'ok', text: (typeof custom === 'string' && custom) || ok() });
      return true;
    } catch (err) {
      this.note(scope, errorNote(err));
      return false;
    } finally {
      this.busy(key, false);
    }
  }

  /** settledHere: once a call from this page settled runID (ok), the hold leaves the older holds and the run shows in the older runs as the gateway answered it. */
  private settledHere(ok: boolean, runID: string, answered: Run | void): boolean {
    if (ok) {
      this.books.settled(runID);
      this.books.changed(answered);
    }
    return ok;
  }

  reconcile(runID: string, n: number, evidence: string, scope = `reconcile:${runID}`, cost?: string) {
    let answered: Run | void;
    return this.run(`reconcile:${runID}`, scope, () => t('rec.done', { run: runID, units: units(n) }), () =>
      // without a cost the call is the units-only one it always was
      tap(cost === undefined ? this.deps.api.reconcile(runID, n, evidence) : this.deps.api.reconcile(runID, n, evidence, cost), (r) => (answered = r)),
    ).then((ok) => this.settledHere(ok, runID, answered));
  }

  applyFinding(runID: string, figure: number) {
    let answered: Run | void;
    return this.run(`reconcile:${runID}`, `apply:${runID}`, () => t('rec.done', { run: runID, units: units(figure) }), () =>
      tap(this.deps.api.applyFinding(runID), (r) => (answered = r)),
    ).then((ok) => this.settledHere(ok, runID, answered));
  }

  /** reconcileMany settles each run with the same units and evidence; each is its own audited reconcile. */
  reconcileMany(runIDs: readonly string[], n: number, evidence: string, scope: string) {
    return this.run('reconcile:bulk', scope, () => t('rec.doneBulk', { n: runIDs.length }), async () => {
      let ok = 0;
      for (const id of runIDs) {
        try {
          this.settledHere(true, id, await this.deps.api.reconcile(id, n, evidence));
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
      tap(this.deps.api.cancelRun(runID), (r) => this.books.changed(r)),
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

  fail(scope: string, message: string | (() => string)) {
    this.note(scope, typeof message === 'string' ? { kind: 'error', text: message } : said('error', message));
  }
}

export function storeFor(conn: Conn, exportCSV: StoreDeps['exportCSV'], opts: Pick<StoreDeps, 'followSystemLocale'> = {}): Store {
  return new Store({ api: createApi(conn), exportCSV, ...opts });
}
