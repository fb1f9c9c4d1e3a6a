import { useState } from 'preact/hooks';
import { t } from '../../lib/i18n';
import type { Delivery, NotifyPrefs } from '../../lib/notify';
import { useStore, useView } from '../../state/use';
import { TenantSettings } from './TenantSettings';
import { AutostartSwitch } from './AutostartSwitch';
import { autostartApp } from '../../lib/autostart';
import { AlertSettings } from '../periods/AlertSettings';
import { ArchiveAction } from './ArchiveAction';

/** Settings: the desktop notifications, each with its off switch, and the budget share. */
export function Settings() {
  const store = useStore();
  const p = useView((v) => v.prefs);
  const [share, setShare] = useState(String(Math.round(p.share * 100)));
  const [tried, setTried] = useState<Delivery | null>(null);
  const set = (q: NotifyPrefs) => store.setPrefs(q);
  const box = (k: 'holds' | 'evictions' | 'budget', label: string) => (
    <label class="check">
      <input type="checkbox" data-testid={`notify-${k}`} checked={p[k]} onChange={(e) => set({ ...p, [k]: (e.target as HTMLInputElement).checked })} />
      {label}
    </label>
  );
  const n = Number(share);
  const bad = !(Number.isInteger(n) && n >= 1 && n <= 100);
  return (
    <>
    <TenantSettings />
    <AutostartSwitch app={autostartApp()} />
    <AlertSettings />
    <ArchiveAction />
    <section class="panel" data-testid="settings-panel">
      <h2>
        {t('settings.notify')} <span class="muted">{t('settings.notifyNote')}</span>
      </h2>
      <div class="stacked-checks">
        {box('holds', t('settings.notifyHolds'))}
        {box('evictions', t('settings.notifyEvictions'))}
        {box('budget', t('settings.notifyBudget'))}
        <label>
          {t('settings.share')}{' '}
          <input
            data-testid="notify-share"
            inputMode="numeric"
            size={4}
            value={share}
            aria-invalid={bad}
            onInput={(e) => {
              const v = (e.target as HTMLInputElement).value;
              setShare(v);
              const x = Number(v);
              if (Number.isInteger(x) && x >= 1 && x <= 100) set({ ...p, share: x / 100 });
            }}
          />{' '}
          %
          {bad && <span class="field-error"> {t('settings.shareError')}</span>}
        </label>
      </div>
      <div class="buttons">
        <button type="button" data-testid="notify-test" onClick={() => void store.tryNotification().then(setTried)}>
          {t('settings.notifyTest')}
        </button>{' '}
        {tried && (
          <span class={tried.via === 'none' ? 'field-error' : 'muted'} role="status" data-testid="notify-test-result" data-via={tried.via}>
            {t(`settings.notifyVia.${tried.via === 'none' ? tried.why : tried.via}`)}
            {tried.via === 'none' && tried.error ? ` (${tried.error})` : ''}
          </span>
        )}
      </div>
    </section>
    </>
  );
}
