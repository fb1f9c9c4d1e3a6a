import { t } from '../../lib/i18n';
import { units } from '../../lib/format';
import { failingWebhook } from '../../state/gateway';
import { useView } from '../../state/use';
import { Ago } from '../../ui/Ago';

/**
 * WebhookBanner stands above every tab while the alerts' webhook is failing:
 * its last error and how many alerts wait. Deliveries keep being retried and
 * never hold up a call, so it informs; nothing here needs a click.
 */
export function WebhookBanner() {
  const w = useView(failingWebhook);
  if (!w) return null;
  return (
    <div class="banner webhook-banner" role="status" data-testid="webhook-failing">
      <span>
        {t('alert.webhookFailing', { error: w.last_error || t('fmt.unknown'), pending: units(w.pending ?? 0) })}
        {w.last_attempt_at && (
          <span class="muted small">
            {' '}
            ({t('alert.lastTry')} <Ago at={w.last_attempt_at} />)
          </span>
        )}
      </span>
    </div>
  );
}
