import { t } from '../../lib/i18n';
import { useView } from '../../state/use';

/**
 * LedgerBanner stands above every tab while the gateway cannot read its
 * ledger (a shared database restarting or out of reach): new calls are
 * refused with 503 until it is back, and the figures below are what the
 * gateway last knew. It goes away with the next state that reads the ledger.
 */
export function LedgerBanner() {
  const why = useView((v) => v.state?.degraded);
  if (!why) return null;
  return (
    <div class="banner ledger-banner" role="alert" data-testid="ledger-unreachable">
      <span>{t('ledger.unreachable', { why })}</span>
    </div>
  );
}
