import { useState } from 'preact/hooks';
import { t } from '../../lib/i18n';
import type { ArchiveResult } from '../../lib/api';
import { useStore } from '../../state/use';

/** firstOfMonth is the first day of d's month (UTC) as YYYY-MM-DD: archiving takes whole, closed months. */
export function firstOfMonth(d: Date): string {
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-01`;
}

/** ArchiveAction moves the closed months' runs out of the ledger into archive files, after a confirm. */
export function ArchiveAction() {
  const store = useStore();
  const [before, setBefore] = useState(firstOfMonth(new Date()));
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<ArchiveResult | null>(null);
  const [err, setErr] = useState('');
  const archive = store.api.archive;
  if (!archive) return null;
  const run = async () => {
    if (!confirm(t('settings.archiveAsk', { before }))) return;
    setBusy(true);
    setErr('');
    setDone(null);
    try {
      setDone(await archive(before));
    } catch (e) {
      setErr(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  const runs = done ? done.months.reduce((n, m) => n + m.runs, 0) : 0;
  return (
    <section class="panel" data-testid="archive-panel">
      <h2>
        {t('settings.archive')} <span class="muted">{t('settings.archiveNote')}</span>
      </h2>
      <label>
        {t('settings.archiveBefore')}{' '}
        <input type="date" data-testid="archive-before" value={before} onInput={(e) => setBefore((e.target as HTMLInputElement).value)} />
      </label>
      <div class="buttons">
        <button type="button" data-testid="archive-run" disabled={busy} onClick={() => void run()}>
          {t('settings.archiveRun')}
        </button>{' '}
        {done && (
          <span class="muted" role="status" data-testid="archive-result">
            {t('settings.archiveDone', { months: done.months.length, runs, dir: done.dir })}
          </span>
        )}
        {err && (
          <span class="field-error" role="alert" data-testid="archive-error">
            {err}
          </span>
        )}
      </div>
    </section>
  );
}
