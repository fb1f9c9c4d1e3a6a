import { useEffect, useState } from 'preact/hooks';
import type { Api, AuditPage, AuditQuery } from '../lib/api';
import type { Actions, Note as NoteT } from '../lib/store';
import type { TenantState } from '../lib/types';
import { fullTime, time, units } from '../lib/format';
import { errorText } from '../lib/errors';
import { t } from '../lib/i18n';
import { Note } from './Note';

const kinds = ['admit', 'reject', 'start', 'settle', 'hold', 'release', 'reconcile', 'cancel', 'recover', 'config', 'evict', 'restore', 'sync'];
const pageSize = 50;

/** localToISO turns a datetime-local value (local wall time) into an RFC 3339 instant. */
export function localToISO(v: string): string {
  if (!v) return '';
  const d = new Date(v); // "2026-11-29T10:00" is read as local time
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

export function Audit(props: {
  api: Api;
  tenants: TenantState[];
  actions: Actions;
  busy: boolean;
  notes: ReadonlyMap<string, NoteT>;
  tick: number; // changes with every pushed state: the live tail re-reads the first page
  now: Date;
}) {
  const [f, setF] = useState({ tenant: '', kind: '', run: '', text: '', from: '', to: '' });
  const [pages, setPages] = useState<number[]>([]); // "before" seqs of the pages behind the current one
  const [page, setPage] = useState<AuditPage | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const q: AuditQuery = { tenant: f.tenant, kind: f.kind, run: f.run.trim(), text: f.text.trim(), from: localToISO(f.from), to: localToISO(f.to) };
  const before = pages.length ? pages[pages.length - 1] : 0;
  const qkey = JSON.stringify(q);
  useEffect(() => {
    let gone = false;
    props.api.audit(q, before, pageSize).then(
      (p) => {
        if (!gone) {
          setPage(p);
          setErr(null);
        }
      },
      (e: Error) => !gone && setErr(errorText(e)),
    );
    return () => {
      gone = true;
    };
  }, [qkey, before, before === 0 ? props.tick : 0]);
  const set = (k: keyof typeof f) => (e: Event) => {
    setF({ ...f, [k]: (e.target as HTMLInputElement).value });
    setPages([]);
  };
  const rows = page?.rows ?? [];
  return (
    <section class="panel" data-testid="audit-panel">
      <h2>
        {t('audit.title')} <span class="muted">{t('audit.note')}</span>
      </h2>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void props.actions.exportCSV(q);
        }}
      >
        <label>
          {t('audit.tenant')}
          <select value={f.tenant} data-testid="audit-tenant" onChange={set('tenant')}>
            <option value="">{t('audit.allTenants')}</option>
            {props.tenants.map((x) => (
              <option key={x.tenant} value={x.tenant}>
                {x.tenant}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('audit.kind')}
          <select value={f.kind} data-testid="audit-kind" onChange={set('kind')}>
            <option value="">{t('audit.allKinds')}</option>
            {kinds.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('audit.run')}
          <input value={f.run} data-testid="audit-run" onInput={set('run')} size={14} />
        </label>
        <label>
          {t('audit.text')}
          <input value={f.text} data-testid="audit-text" onInput={set('text')} size={14} />
        </label>
        <label>
          {t('audit.from')}
          <input type="datetime-local" value={f.from} data-testid="audit-from" onInput={set('from')} />
        </label>
        <label>
          {t('audit.to')}
          <input type="datetime-local" value={f.to} data-testid="audit-to" onInput={set('to')} />
        </label>
        <button type="submit" class="primary" data-testid="export-csv" disabled={props.busy}>
          {props.busy ? t('audit.exporting') : t('audit.export')}
        </button>
        <Note notes={props.notes} scope="export" actions={props.actions} />
      </form>
      {err && (
        <p class="field-error" role="alert">
          {err}
        </p>
      )}
      <div class="scroll">
        <table data-testid="audit-table">
          <thead>
            <tr>
              <th>#</th>
              <th>{t('audit.at')}</th>
              <th>{t('audit.kind')}</th>
              <th>{t('audit.tenant')}</th>
              <th>{t('audit.run')}</th>
              <th>{t('audit.actor')}</th>
              <th class="num">{t('audit.units')}</th>
              <th class="num">{t('audit.balance')}</th>
              <th class="num">{t('audit.availBefore')}</th>
              <th class="num">{t('audit.availAfter')}</th>
              <th>{t('audit.detail')}</th>
            </tr>
          </thead>
          <tbody>
            {rows.length === 0 && (
              <tr>
                <td colSpan={11} class="empty">
                  {t('audit.empty')}
                </td>
              </tr>
            )}
            {rows.map((r) => (
              <tr key={r.seq} data-testid={`audit-row-${r.seq}`}>
                <td class="num muted">{r.seq}</td>
                <td title={fullTime(r.at)}>{time(r.at, props.now)}</td>
                <td>{r.kind}</td>
                <td>{r.tenant ?? ''}</td>
                <td class="mono small">{r.run ?? ''}</td>
                <td>{r.actor ?? ''}</td>
                <td class="num">{r.balance !== undefined && r.balance !== null ? '' : units(r.units)}</td>
                <td class="num">{r.balance !== undefined && r.balance !== null ? units(r.balance) : ''}</td>
                <td class="num">{units(r.available_before)}</td>
                <td class="num">{units(r.available_after)}</td>
                <td class="wrap small">{[r.reason, r.evidence, r.detail].filter(Boolean).join(' · ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="pager">
        <button type="button" data-testid="audit-newer" disabled={pages.length === 0} onClick={() => setPages(pages.slice(0, -1))}>
          {t('audit.newer')}
        </button>
        <button
          type="button"
          data-testid="audit-older"
          disabled={!page?.more || rows.length === 0}
          onClick={() => setPages([...pages, rows[rows.length - 1].seq])}
        >
          {t('audit.older')}
        </button>
      </div>
    </section>
  );
}
