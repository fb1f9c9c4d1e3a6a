import { useState } from 'preact/hooks';
import type { Api, WriteBack } from '../lib/api';
import { errorText } from '../lib/errors';
import { t } from '../lib/i18n';
import { noteText } from '../lib/writeback';

/** WriteBackButton asks, then rewrites the config file with the overrides. */
export function WriteBackButton(props: { api: Api; onDone: (r: WriteBack) => void; onError: (msg: string) => void }) {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      data-testid="write-back"
      disabled={busy}
      onClick={() => {
        if (!confirm(t('settings.writeBackAsk'))) return;
        setBusy(true);
        props.api
          .writeBack()
          .then(props.onDone, (e: Error) => props.onError(errorText(e)))
          .finally(() => setBusy(false));
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
