import { fullTime } from '../../lib/format';
import { t } from '../../lib/i18n';
import { offsetText } from '../../lib/period';
import { gatewayOffset, useGatewayNow } from '../../state/gateway';
import { useView } from '../../state/use';

/** GatewayNow is the shifted clock's time, for the badge's tooltip. */
function useShiftedNow(): string {
  return fullTime(new Date(useGatewayNow(60_000)).toISOString());
}

/**
 * ClockBadge says, in the header's status line, that the gateway's clock is
 * shifted (QUOTAGATE_CLOCK_OFFSET): "clock +72h". Periods, quota days and
 * run times follow that clock, so a page that does not say so would show
 * a countdown and times that look wrong. Nothing when the clock is real.
 */
export function ClockBadge() {
  const offset = useView(gatewayOffset);
  const now = useShiftedNow();
  if (offset === 0) return null;
  const text = offsetText(offset);
  return (
    <div>
      <dt>{t('header.clock')}</dt>
      <dd class="badge warn" data-testid="clock-offset" data-offset-ms={offset} title={t('header.clockTitle', { offset: text, now })}>
        {text}
      </dd>
    </div>
  );
}
