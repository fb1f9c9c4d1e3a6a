import { useEffect } from 'preact/hooks';
import { fullTime, units } from '../../lib/format';
import { t, type Key } from '../../lib/i18n';
import { actorKind } from '../../lib/actor';
import { auditKinds } from '../../lib/auditkinds';
import type { AuditRow } from '../../lib/api';
import { auditQuery, type AuditFilter } from '../../state/audit';
import { noteText } from '../../state/notes';
import { useStore, useView } from '../../state/use';
import { Note } from '../../ui/Note';
import { When } from '../../ui/Ago';
import { Choice } from '../../ui/Choice';
import { PanelHeading } from '../../ui/Panel';
import { EmptyRow, TableHead, figures, headings, type Column } from '../../ui/TablePanel';
import { AuditDetail } from '../periods/AuditDetail';

/** Audit: the audit log, filtered and paged by the store, newest first, live on its first page; exported as CSV. */
export function Audit() {
  const store = useStore();
  const a = useView((v) => v.audit);
  useEffect(() => store.audit.watch(), [store]);
  const rows = a.page?.rows ?? [];
  return (
    <section class="panel" data-testid="audit-panel">
      <PanelHeading words="audit" />
      <AuditForm f={a.filter} />
      {a.error && (
        <p class="field-error" role="alert">
          {noteText(a.error)}
        </p>
      )}
      <AuditTable rows={rows} />
      <div class="pager">
        <button type="button" data-testid="audit-newer" disabled={a.behind.length === 0} onClick={() => store.audit.newer()}>
          {t('audit.newer')}
        </button>
        <button
          type="button"
          data-testid="audit-older"
          disabled={!a.page?.more || rows.length === 0}
          onClick={() => store.audit.older()}
        >
          {t('audit.older')}
        </button>
      </div>
    </section>
  );
}

/** AuditForm is the filter (each change reads the newest page again) and the CSV export of the same filter. */
function AuditForm(props: { f: AuditFilter }) {
  const store = useStore();
  const tenants = useView((v) => v.state?.tenants);
  const exporting = useView((v) => v.busy.has('export'));
  const f = props.f;
  const set = (k: keyof AuditFilter) => (e: Event) => store.audit.setFilter({ [k]: (e.target as HTMLInputElement).value });
  return (
    <form
      class="inline"
      onSubmit={(e) => {
        e.preventDefault();
        void store.exportCSV(auditQuery(f));
      }}
    >
      <Choice
        label={t('audit.tenant')}
        testid="audit-tenant"
        value={f.tenant}
        blank={t('audit.allTenants')}
        options={(tenants ?? []).map((x) => x.tenant)}
        onChoose={(tenant) => store.audit.setFilter({ tenant })}
      />
      <Choice label={t('audit.kind')} testid="audit-kind" value={f.kind} blank={t('audit.allKinds')} options={auditKinds} onChoose={(kind) => store.audit.setFilter({ kind })} />
      <label>
        {t('audit.run')}
        <input value={f.run} data-testid="audit-run" onInput={set('run')} size={14} />
      </label>
      <label>
        {t('audit.actor')}
        <input value={f.actor} data-testid="audit-actor" onInput={set('actor')} size={14} placeholder="operator:admin" />
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
      <button type="submit" class="primary" data-testid="export-csv" disabled={exporting}>
        {exporting ? t('audit.exporting') : t('audit.export')}
      </button>
      <Note scope="export" />
    </form>
  );
}

/** AuditTable lists a page of rows: a balance reading in its own column, the units of a change in theirs. */
function AuditTable(props: { rows: readonly AuditRow[] }) {
  const rows = props.rows;
  const columns: Column[] = [
    { label: '#' },
    ...headings('audit.at', 'audit.kind', 'audit.tenant', 'audit.run', 'audit.actor'),
    ...figures('audit.units', 'audit.balance', 'audit.availBefore', 'audit.availAfter'),
    ...headings('audit.detail'),
  ];
  return (
    <div class="scroll">
      <table data-testid="audit-table">
        <TableHead columns={columns} />
        <tbody>
          {rows.length === 0 && <EmptyRow width={columns.length} text={t('audit.empty')} />}
          {rows.map((r) => (
            <tr key={r.seq} data-testid={`audit-row-${r.seq}`}>
              <td class="num muted">{r.seq}</td>
              <td title={fullTime(r.at)}>
                <When at={r.at} />
              </td>
              <td>{r.kind}</td>
              <td>{r.tenant ?? ''}</td>
              <td class="mono small">{r.run ?? ''}</td>
              <td>
                <Actor actor={r.actor} />
              </td>
              <td class="num">{r.balance !== undefined && r.balance !== null ? '' : units(r.units)}</td>
              <td class="num">{r.balance !== undefined && r.balance !== null ? units(r.balance) : ''}</td>
              <td class="num">{units(r.available_before)}</td>
              <td class="num">{units(r.available_after)}</td>
              <td class="wrap small">
                <AuditDetail row={r} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Actor shows who made a row as the server wrote it, marked by its kind (tenant, operator, system, provider) when it has one. */
function Actor(props: { actor: string | undefined }) {
  const kind = actorKind(props.actor);
  if (!kind) return <>{props.actor ?? ''}</>;
  return (
    <span class={`actor actor-${kind}`} data-kind={kind} title={t(`audit.actorKind.${kind}` as Key)}>
      {props.actor}
    </span>
  );
}
