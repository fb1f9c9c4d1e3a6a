import { noteText } from '../state/notes';
import { useStore, useView } from '../state/use';
import { t } from '../lib/i18n';

/** Note shows the latest notice of one scope next to the control that caused it; dismissible. */
export function Note(props: { scope: string; testid?: string }) {
  const store = useStore();
  const n = useView((v) => v.notes.get(props.scope));
  if (!n) return null;
  return (
    <div
      class={`note ${n.kind}`}
      role={n.kind === 'error' ? 'alert' : 'status'}
      data-testid={props.testid ?? 'notice'}
      data-scope={props.scope}
    >
      <span>{noteText(n)}</span>
      <button type="button" class="link" aria-label={t('notice.dismiss')} title={t('notice.dismiss')} onClick={() => store.dismiss(props.scope)}>
        ×
      </button>
    </div>
  );
}
