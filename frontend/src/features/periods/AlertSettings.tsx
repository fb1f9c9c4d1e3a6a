import { t } from '../../lib/i18n';
import { units } from '../../lib/format';
import { alertsOf } from '../../state/gateway';
import { useView } from '../../state/use';

/**
 * AlertSettings shows the alerts as configured: the thresholds of a budget
 * that warn, and where the webhook posts (whether it signs, how it is
 * doing). Read-only: alerts are set in the config file.
 */
export function AlertSettings() {
  const a = useView(alertsOf);
  const w = a?.webhook;
  return (
    <section class="panel" data-testid="alerts-panel">
      <h2>
        {t('settings.alerts')} <span class="muted">{t('settings.alertsNote')}</span>
      </h2>
      {!a ? (
        <p class="empty" data-testid="alerts-none">
          {t('settings.alertsNone')}
        </p>
      ) : (
        <dl class="alert-facts">
          <dt>{t('settings.thresholds')}</dt>
          <dd data-testid="alerts-thresholds">{(a.thresholds ?? []).map((n) => `${n}%`).join(', ') || '—'}</dd>
          <dt>{t('settings.webhook')}</dt>
          {w?.url ? (
            <dd data-testid="alerts-webhook">
              <span class="mono">{w.url}</span> · {w.secret_set ? t('settings.secretSet') : t('settings.secretUnset')} ·{' '}
              <span class={w.failing ? 'field-error' : 'muted'} data-testid="alerts-webhook-status">
                {w.failing
                  ? t('settings.webhookFailing', { error: w.last_error || t('fmt.unknown'), pending: units(w.pending ?? 0) })
                  : t('settings.webhookOK', { pending: units(w.pending ?? 0) })}
              </span>
            </dd>
          ) : (
            <dd data-testid="alerts-webhook">{t('settings.webhookNone')}</dd>
          )}
        </dl>
      )}
    </section>
  );
}
