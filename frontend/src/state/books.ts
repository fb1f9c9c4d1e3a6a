// The Overview's reads of the books beyond the pushed state: the spend per
// day from the ledger's hourly rollup (GET /admin/api/spend), so the chart
// shows the whole period whatever the state lists, and the runs and holds
// lists' older pages (GET /admin/api/runs, /admin/api/holds), read a page
// at a time below the last row shown while the live rows keep arriving at
// the top from the state.

import type { RunsPage, RunsQuery, SpendPage } from '../lib/api';
import type { Run, State } from '../lib/types';
import type { Core } from './store';
import { errorNote } from './notes';

export type ListKind = 'runs' | 'holds';

/** RunList is what one list holds beyond the state's live rows. */
export interface RunList {
  tenant: string; // '' for every tenant's
  /** rows read below the live ones, newest first; for runs, the live rows of the moment the first page was asked for, then the pages */
  older: readonly Run[];
  /** older rows match after the last one; null until a page was read */
  more: boolean | null;
  loading: boolean; // a page is being read (a refusal is noted under older:<kind>)
}

export interface BooksView {
  /** the rollup's days, null until read (or when the gateway keeps none: the chart then sums the listed runs) */
  spend: SpendPage | null;
  runs: RunList;
  holds: RunList;
}

const emptyList: RunList = { tenant: '', older: [], more: null, loading: false };

export const emptyBooks: BooksView = { spend: null, runs: emptyList, holds: emptyList };

/** SPEND_DAYS is how many days the Overview's chart shows. */
export const SPEND_DAYS = 30;

/** SPEND_EVERY is the least time between two reads of the rollup while states arrive (ms). */
export const SPEND_EVERY = 10_000;

/** STATE_LISTS are how many runs and holds the state lists at most (the server's bounds): a list shorter than that is whole. */
export const STATE_LISTS: Record<ListKind, number> = { runs: 50, holds: 500 };

/** mayHaveOlder says whether older rows may exist beyond what a list shows, before or after a page was read. */
export function mayHaveOlder(s: State | null, kind: ListKind, list: RunList): boolean {
  if (list.more !== null) return list.more;
  return !!list.tenant || liveRows(s, kind, '').length >= STATE_LISTS[kind];
}

/** liveRows are the state's rows of one list, one tenant's when tenant is set. */
export function liveRows(s: State | null, kind: ListKind, tenant: string): Run[] {
  const rows = (kind === 'runs' ? s?.runs : s?.holds) ?? [];
  return tenant ? rows.filter((r) => r.tenant === tenant) : rows;
}

/** shownRows are a list's rows: the live ones, then the older ones not among them. */
export function shownRows(s: State | null, kind: ListKind, list: RunList): Run[] {
  const live = liveRows(s, kind, list.tenant);
  if (list.older.length === 0) return live;
  const seen = new Set(live.map((r) => r.id));
  return [...live, ...list.older.filter((r) => !seen.has(r.id))];
}

export class BooksSlice {
  private readonly core: Core;
  private readonly now: () => number;
  private spendWatchers = 0;
  private spendAt = -Infinity; // when the rollup was last asked for
  private asked: Record<ListKind, number> = { runs: 0, holds: 0 }; // the latest page asked; an older answer is dropped

  constructor(core: Core, now: () => number) {
    this.core = core;
    this.now = now;
  }

  private view(): BooksView {
    return this.core.get().books;
  }

  private patch(p: Partial<BooksView>) {
    this.core.set({ books: { ...this.view(), ...p } });
  }

  private patchList(kind: ListKind, p: Partial<RunList>) {
    this.patch({ [kind]: { ...this.view()[kind], ...p } });
  }

  /** watchSpend reads the rollup and keeps it moving with the states until the returned function is called. */
  watchSpend(): () => void {
    this.spendWatchers++;
    void this.readSpend();
    return () => {
      this.spendWatchers--;
    };
  }

  /** stateArrived re-reads the rollup (at most every SPEND_EVERY) while the chart shows, and forgets older holds the state says are settled. */
  stateArrived(s: State) {
    if (this.spendWatchers > 0 && this.now() - this.spendAt >= SPEND_EVERY) void this.readSpend();
    const holds = this.view().holds;
    if (holds.older.length > 0) {
      const ended = new Set(s.runs.filter((r) => r.usage !== 'pending' && r.usage !== 'unknown').map((r) => r.id));
      const older = holds.older.filter((r) => !ended.has(r.id));
      if (older.length !== holds.older.length) this.patchList('holds', { older });
    }
  }

  private async readSpend() {
    const read = this.core.api.spend;
    if (!read) return;
    this.spendAt = this.now();
    try {
      this.patch({ spend: await read(SPEND_DAYS) });
    } catch {
      // A gateway without the rollup (an older one): the chart sums the listed runs instead.
      this.patch({ spend: null });
    }
  }

  /** setTenant shows one tenant's rows ('' everyone's), drops the older pages read so far, and reads the tenant's first page (the state lists few of a tenant's runs). */
  setTenant(kind: ListKind, tenant: string) {
    this.asked[kind]++;
    this.patchList(kind, { ...emptyList, tenant });
    if (tenant) void this.older(kind);
  }

  /** settled drops a hold reconciled from this page from the older holds. */
  settled(runID: string) {
    const holds = this.view().holds;
    if (holds.older.some((r) => r.id === runID)) this.patchList('holds', { older: holds.older.filter((r) => r.id !== runID) });
  }

  /** changed shows a run a call from this page changed (the gateway's answer) as it now is in the older runs: those pages are read once, and the state lists only the newest runs. */
  changed(run: Run | void) {
    const runs = this.view().runs;
    if (run && runs.older.some((r) => r.id === run.id)) this.patchList('runs', { older: runs.older.map((r) => (r.id === run.id ? run : r)) });
  }

  /** older reads the page below the last row shown. */
  async older(kind: ListKind) {
    const read = kind === 'runs' ? this.core.api.runs : this.core.api.holds;
    const list = this.view()[kind];
    if (!read || list.loading || list.more === false) return;
    // The runs list moves with every call: the live rows of this moment stay
    // shown above the pages, so none is lost between them as newer runs
    // push them out of the state. A hold leaves the state only when settled.
    const first = list.older.length === 0 ? (kind === 'runs' ? liveRows(this.core.get().state, kind, list.tenant) : []) : list.older;
    const below = first.length > 0 ? first : liveRows(this.core.get().state, kind, list.tenant);
    const q: RunsQuery = { tenant: list.tenant || undefined, before: below.length > 0 ? below[below.length - 1].id : undefined };
    const mine = ++this.asked[kind];
    this.patchList(kind, { loading: true });
    this.core.note(`older:${kind}`, null);
    let page: RunsPage;
    try {
      page = await read(q);
    } catch (err) {
      if (mine === this.asked[kind]) {
        this.patchList(kind, { loading: false });
        this.core.note(`older:${kind}`, errorNote(err));
      }
      return;
    }
    if (mine !== this.asked[kind]) return;
    this.patchList(kind, { older: [...first, ...page.runs], more: page.more, loading: false });
  }
}
