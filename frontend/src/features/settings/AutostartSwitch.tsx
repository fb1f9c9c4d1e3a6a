import { useEffect, useState } from 'preact/hooks';
import { t } from '../../lib/i18n';
import { setStartAtLogin, type AutostartApp } from '../../lib/autostart';

/** AutostartSwitch: start the gateway at login (the window only; app is null in a browser). */
export function AutostartSwitch(props: { app: AutostartApp | null }) {
  const app = props.app;
  const [on, setOn] = useState<boolean | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    app?.StartAtLogin().then(setOn, (e: unknown) => setErr(String(e instanceof Error ? e.message : e)));
  }, [app]);
  if (!app) return null;
  return (
    <section class="panel" data-testid="autostart-panel">
      <h2>{t('settings.autostart')}</h2>
      <label class="check">
        <input
          type="checkbox"
          data-testid="autostart"
          checked={on === true}
          disabled={on === null || busy}
          onChange={(e) => {
            const want = (e.target as HTMLInputElement).checked;
            setBusy(true);
            setErr(null);
            setStartAtLogin(app, want)
              .then(setOn, (x: unknown) => setErr(t('settings.autostartError', { error: String(x instanceof Error ? x.message : x) })))
              .finally(() => setBusy(false));
          }}
        />
        {t('settings.autostartLabel')}
      </label>
      <p class="muted small">{t('settings.autostartNote')}</p>
      {err && (
        <p class="field-error" role="alert">
          {err}
        </p>
      )}
    </section>
  );
}
