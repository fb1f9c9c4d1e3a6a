import { noteText, type Note as NoteT } from '../lib/store';
import type { Actions } from '../lib/store';
import { t } from '../lib/i18n';

/** Note shows the latest notice of one scope next to the control that caused it; dismissible. */
export function Note(props: { notes: ReadonlyMap<string, NoteT>; scope: string; actions: Pick<Actions, 'dismiss'>; testid?: string }) {
  const n = props.notes.get(props.scope);
  if (!n) return null;
  return (
    <div
      class={`note ${n.kind}`}
      role={n.kind === 'error' ? 'alert' : 'status'}
      data-testid={props.testid ?? 'notice'}
      data-scope={props.scope}
    >
      <span>{noteText(n)}</span>
      <button type="button" class="link" aria-label={t('notice.dismiss')} title={t('notice.dismiss')} onClick={() => props.actions.dismiss(props.scope)}>
        ×
      </button>
    </div>
  );
}
