import { t } from '../../lib/i18n';
import type { Run } from '../../lib/types';
import { mayHaveOlder, shownRows, type ListKind } from '../../state/books';
import { shallow, useStore, useView } from '../../state/use';
import { Note } from '../../ui/Note';

const none: string[] = [];

/** useRows are a list's rows as shown: the state's live ones (one tenant's when filtered), then the older pages read. */
export function useRows(kind: ListKind): Run[] {
  const { state, list } = useView((v) => ({ state: v.state, list: v.books[kind] }), shallow);
  return shownRows(state, kind, list);
}

/** ListTenant narrows a list to one tenant's rows (the server's filter for the older pages). */
export function ListTenant(props: { kind: ListKind }) {
  const store = useStore();
  const tenant = useView((v) => v.books[props.kind].tenant);
  const ids = useView((v) => v.state?.tenants.map((x) => x.tenant) ?? none, (a, b) => a.join('\n') === b.join('\n'));
  return (
    <select
      data-testid={`${props.kind}-tenant`}
      aria-label={t('audit.tenant')}
      value={tenant}
      onChange={(e) => store.books.setTenant(props.kind, (e.target as HTMLSelectElement).value)}
    >
      <option value="">{t('audit.allTenants')}</option>
      {ids.map((id) => (
        <option key={id} value={id}>
          {id}
        </option>
      ))}
    </select>
  );
}

/** MoreRows is a list's foot: the button that reads the page below the last row shown, or the word that none is older. */
export function MoreRows(props: { kind: ListKind; shown: number }) {
  const store = useStore();
  const { state, list } = useView((v) => ({ state: v.state, list: v.books[props.kind] }), shallow);
  if (!mayHaveOlder(state, props.kind, list)) {
    return list.older.length > 0 ? <p class="muted small" data-testid={`${props.kind}-all`}>{t('books.all', { n: props.shown })}</p> : null;
  }
  return (
    <div class="more-rows">
      <button type="button" data-testid={`${props.kind}-older`} disabled={list.loading} onClick={() => void store.books.older(props.kind)}>
        {t(props.kind === 'runs' ? 'books.olderRuns' : 'books.olderHolds')}
      </button>
      <Note scope={`older:${props.kind}`} testid={`${props.kind}-older-error`} />
    </div>
  );
}
