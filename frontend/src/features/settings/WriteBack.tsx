import type { WriteBack } from '../../lib/api';
import { t } from '../../lib/i18n';
import { noteText } from '../../lib/writeback';
import { useStore, useView } from '../../state/use';

/** WriteBackButton asks, then has the store rewrite the config file with the overrides. */
export function WriteBackButton() {
  const store = useStore();
  const busy = useView((v) => v.busy.has('write-back'));
  return (
    <button
      type="button"
      data-testid="write-back"
      disabled={busy}
      onClick={() => {
        if (!confirm(t('settings.writeBackAsk'))) return;
        void store.tenants.writeBack();
      }}
    >
      {t('settings.writeBackButton')}
    </button>
  );
}

/** WrittenBack says which file was rewritten and what became of keys; dismissible. */
export function WrittenBack(props: { result: WriteBack; onClose: () => void }) {
  return (
    <div class="banner" role="status" data-testid="written-back">
      <span>
        {t('settings.writtenBack', { file: props.result.file })}
        {props.result.notes.map((n) => (
          <span class="muted small" key={`${n.kind}:${n.tenant}`} title={n.text}>
            {' '}
            {noteText(n)}
          </span>
        ))}
      </span>
      <button type="button" aria-label={t('form.close')} onClick={props.onClose}>
        ×
      </button>
    </div>
  );
}
