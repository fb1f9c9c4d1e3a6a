// The audit view's part of the store: the filter as typed, the pages behind
// the current one, the page shown, and its live tail (the first page is read
// again with every pushed state while the view is on the page).

import type { AuditPage, AuditQuery } from '../lib/api';
import type { Core } from './store';
import { errorNote, type Note } from './notes';

/** AuditFilter is the audit form as typed (from/to as datetime-local values). */
export interface AuditFilter {
  tenant: string;
  kind: string;
  run: string;
  actor: string;
  text: string;
  from: string;
  to: string;
}

export interface AuditView {
  filter: AuditFilter;
  /** the "before" seqs of the pages behind the current one; empty on the newest page */
  behind: readonly number[];
  page: AuditPage | null;
  error: Note | null;
}

export const emptyAudit: AuditView = {
  filter: { tenant: '', kind: '', run: '', actor: '', text: '', from: '', to: '' },
  behind: [],
  page: null,
  error: null,
};

/** localToISO turns a datetime-local value (local wall time) into an RFC 3339 instant. */
export function localToISO(v: string): string {
  if (!v) return '';
  const d = new Date(v); // "2026-11-29T10:00" is read as local time
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

/** auditQuery is the API query of a filter, shared by the list and the CSV export. */
export function auditQuery(f: AuditFilter): AuditQuery {
  return { tenant: f.tenant, kind: f.kind, run: f.run.trim(), actor: f.actor.trim(), text: f.text.trim(), from: localToISO(f.from), to: localToISO(f.to) };
}

export class AuditSlice {
  private readonly core: Core;
  private watchers = 0;
  private asked = 0; // the latest read; an older answer that lands late is dropped

  constructor(core: Core) {
    this.core = core;
  }

  private view(): AuditView {
    return this.core.get().audit;
  }

  private patch(p: Partial<AuditView>) {
    this.core.set({ audit: { ...this.view(), ...p } });
  }

  /** watch reads the current page and keeps the first page live until the returned function is called. */
  watch(): () => void {
    this.watchers++;
    void this.load();
    return () => {
      this.watchers--;
    };
  }

  /** stateArrived re-reads the newest page while someone watches it. */
  stateArrived() {
    if (this.watchers > 0 && this.view().behind.length === 0) void this.load();
  }

  /** setFilter changes the filter and goes back to the newest page. */
  setFilter(p: Partial<AuditFilter>) {
    this.patch({ filter: { ...this.view().filter, ...p }, behind: [] });
    void this.load();
  }

  /** older shows the page before the last row shown. */
  older() {
    const rows = this.view().page?.rows ?? [];
    if (rows.length === 0) return;
    this.patch({ behind: [...this.view().behind, rows[rows.length - 1].seq] });
    void this.load();
  }

  /** newer goes back one page. */
  newer() {
    this.patch({ behind: this.view().behind.slice(0, -1) });
    void this.load();
  }

  /** The page size is the server's (GET /admin/api/audit without limit); its `more` drives the pager. */
  private async load() {
    const v = this.view();
    const before = v.behind.length ? v.behind[v.behind.length - 1] : 0;
    const mine = ++this.asked;
    try {
      const page = await this.core.api.audit(auditQuery(v.filter), before);
      if (mine === this.asked) this.patch({ page, error: null });
    } catch (err) {
      if (mine === this.asked) this.patch({ error: errorNote(err) });
    }
  }
}
