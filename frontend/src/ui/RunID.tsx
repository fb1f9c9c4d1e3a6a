import { useState } from 'preact/hooks';
import { copyText } from '../lib/clipboard';
import { runLabel } from '../lib/format';
import { t } from '../lib/i18n';

/**
 * RunID shows a run id by its distinct tail (label, from runLabels when rows
 * stand together); the whole id is its tooltip, and a click, or copying the
 * text, copies the whole id.
 */
export function RunID(props: { id: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="run-id mono"
      title={props.id}
      aria-label={t('runs.copyID', { run: props.id })}
      data-run-id={props.id}
      onClick={async () => setCopied(await copyText(props.id))}
      onBlur={() => setCopied(false)}
      onCopy={(e) => {
        e.clipboardData?.setData('text/plain', props.id);
        e.preventDefault();
      }}
    >
      {props.label ?? runLabel(props.id)}
      {copied && <span class="muted"> ✓</span>}
    </button>
  );
}
