import { fullTime } from '../../lib/format';
import { t } from '../../lib/i18n';
import { offsetText } from '../../lib/period';
import { gatewayOffset, useGatewayNow } from '../../state/gateway';
import { useView } from '../../state/use';

/** ClockShift is what the header says of a shifted clock: "+72h", and the shifted now in its tooltip. */
export interface ClockShift {
  text: string;
  title: string;
}

/**
 * useClockShift is the gateway clock's shift (QUOTAGATE_CLOCK_OFFSET) as the
 * header's status line shows it, null on real time. Periods, quota days and
 * run times follow that clock, so a page that did not say so would show a
 * countdown and times that look wrong.
 */
export function useClockShift(): ClockShift | null {
  const offset = useView(gatewayOffset);
  const now = fullTime(new Date(useGatewayNow(60_000)).toISOString());
  if (offset === 0) return null;
  const text = offsetText(offset);
  return { text, title: t('header.clockTitle', { offset: text, now }) };
}
